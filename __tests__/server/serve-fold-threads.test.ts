import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateConversation } from '../../bench/fixtures/conversation.js';
import { ensureBuiltProxy } from '../helpers/proxy-workers.js';
import { json, startUpstream, type StandInUpstream } from '../helpers/upstream-server.js';

/**
 * `ctxfold serve` (the built binary) with its fold threads taking every body (`--fold-thread-min-bytes
 * 0`) sends the upstream the same bytes as with none (`--fold-threads 0`): a long chat's first
 * request, then, once its background summary (folded in a thread, committed by the serving thread)
 * is done, its next request, which carries that summary.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = join(root, 'dist', 'src', 'cli', 'main.js');
const conversation = generateConversation({ messages: 400, seed: 11 });

let upstream: StandInUpstream;
beforeAll(async () => {
  ensureBuiltProxy();
  upstream = await startUpstream((_r, res) => json(res, 200, {
    id: 'c', object: 'chat.completion', created: 0, model: 'gpt-4o',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Noted.' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 100, completion_tokens: 2, total_tokens: 102 },
  }));
});
afterAll(async () => {
  await upstream.close();
});

/** What the upstream received for the chat's two requests through a proxy started with `flags`. */
async function forwarded(flags: string[]): Promise<string[]> {
  const child = spawn(process.execPath, [CLI, 'serve', '--upstream', upstream.baseURL, '--port', '0', '--store', 'memory', '--max-context-tokens', '8000', '--log-level', 'warn', ...flags], { cwd: root });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d; });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    void exited.then((code) => reject(new Error(`serve exited (${code}): ${stderr}`)));
  });
  const from = upstream.requests.length;
  const send = async (messages: unknown[]) => {
    const res = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-ctxfold-chat-id': 'long' }, body: JSON.stringify({ model: 'gpt-4o', messages }) });
    expect(res.status).toBe(200);
    await res.text();
  };
  await send(conversation.slice(0, 380));
  // The summary job runs after the answer: wait until the proxy's metrics say it was committed.
  for (;;) {
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const done = /^ctxfold_summaries_total\{outcome="done"\} (\d+)/m.exec(metrics);
    const failed = /^ctxfold_summaries_total\{outcome="failed"\} (\d+)/m.exec(metrics);
    if (failed && Number(failed[1]) > 0) throw new Error(`the summary job failed: ${stderr}`);
    if (done && Number(done[1]) >= 1) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await send(conversation.slice(0, 400));
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
  expect(stderr).not.toMatch(/"level":(50|60)/);
  return upstream.requests.slice(from).map((r) => r.rawBody);
}

test('fold threads send the upstream the same bytes as the serving thread, before and after a summary folded in a thread', async () => {
  const here = await forwarded(['--fold-threads', '0']);
  const there = await forwarded(['--fold-threads', '1', '--fold-thread-min-bytes', '0']);
  expect(here).toHaveLength(2);
  expect(here[1]).toContain('Summary of earlier messages');
  expect(there).toEqual(here);
});
