import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBuiltProxy } from '../helpers/proxy-workers.js';
import { redisDescribe, startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { json, startUpstream, type StandInUpstream } from '../helpers/upstream-server.js';

/**
 * `ctxfold serve --workers 2` as users run it (the built binary): two processes share the port
 * and one real redis-server; a burst of requests for many chats, each chat's requests sent at
 * once so both processes serve it, is answered without an error, and each chat's summary jobs
 * (the LLM summarizer, calling the stand-in, which answers slowly so two jobs of one chat would
 * overlap) never run two at a time. Its large bodies fold in the processes' fold threads.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = join(root, 'dist', 'src', 'cli', 'main.js');
const CHATS = 12;
const REQUESTS_PER_CHAT = 4;
const SUMMARY_MS = 150;

let redis: RedisServer;
let upstream: StandInUpstream;
/** Per chat: summarizer calls made, in flight now, and the most ever in flight at once. */
const calls = new Map<string, { made: number; now: number; most: number }>();
let proxied = 0;

/** Chat `chat`'s history at its `turns`-th user message. */
function historyOf(chat: string, turns: number): unknown[] {
  const messages: unknown[] = [{ role: 'system', content: 'You look up records.' }];
  for (let t = 1; t <= turns; t++) {
    messages.push({ role: 'user', content: `Turn ${t} of chat ${chat}: look up record R-${t} and compare it with the earlier ones, ${'in detail '.repeat(6)}` });
    if (t < turns) messages.push({ role: 'assistant', content: `Record R-${t} of chat ${chat} is open; it matches the earlier ones.` });
  }
  return messages;
}

const completion = (content: string) => ({
  id: 'chatcmpl-w', object: 'chat.completion', created: 0, model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 },
});

function serve(args: string[], env: Record<string, string>): Promise<{ child: ChildProcessWithoutNullStreams; url: string; stderr: () => string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [CLI, 'serve', ...args], { cwd: root, env: { ...process.env, ...env } });
  let stdout = '';
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  child.stderr.setEncoding('utf8').on('data', (d: string) => { stderr += d; });
  return new Promise((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      const match = /^ctxfold serve listening on (http:\/\/\S+)$/m.exec(stdout);
      if (match) resolve({ child, url: match[1], stderr: () => stderr, exited });
    });
    void exited.then((code) => reject(new Error(`serve exited with ${code} before listening; stderr: ${stderr}`)));
  });
}

beforeAll(async () => {
  ensureBuiltProxy();
  redis = await startRedisServer();
  upstream = await startUpstream(async (request, res) => {
    const body = request.body ?? {};
    if (body.model !== 'fold-model') {
      proxied++;
      return json(res, 200, completion('Noted.'));
    }
    const chat = /of chat (c\d+)/.exec(request.rawBody)?.[1] ?? 'unknown';
    const seen = calls.get(chat) ?? { made: 0, now: 0, most: 0 };
    calls.set(chat, seen);
    seen.made++;
    seen.now++;
    seen.most = Math.max(seen.most, seen.now);
    await new Promise((resolve) => setTimeout(resolve, SUMMARY_MS));
    seen.now--;
    json(res, 200, completion(`Earlier turns of chat ${chat} looked up records and compared them.`));
  });
});

afterAll(async () => {
  await upstream?.close();
  await redis?.stop();
});

test('--workers 2 on a store that does not coordinate processes is refused, naming the flag', () => {
  const refused = spawnSync(process.execPath, [CLI, 'serve', '--upstream', 'http://127.0.0.1:9/v1', '--workers', '2', '--store', 'memory'], { encoding: 'utf8' });
  expect(refused.status).toBe(2);
  expect(refused.stderr).toContain('--workers 2');
  expect(refused.stderr).toContain('--store redis://HOST:PORT');
});

redisDescribe('--workers 2 on one Redis', () => {
  test('a burst for many chats is served without an error, one summary job per chat at a time across the processes', async () => {
    const server = await serve(
      ['--upstream', upstream.baseURL, '--port', '0', '--workers', '2', '--store', redis.url, '--summarizer', 'llm', '--max-context-tokens', '900', '--fold-threads', '1', '--fold-thread-min-bytes', '2000', '--log-level', 'warn'],
      { CTXFOLD_LLM_BASE_URL: upstream.baseURL, CTXFOLD_LLM_MODEL: 'fold-model' },
    );
    const statuses: number[] = [];
    const send = async (chat: string, turns: number) => {
      const res = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-workers', 'x-ctxfold-chat-id': chat },
        body: JSON.stringify({ model: 'gpt-4o', messages: historyOf(chat, turns) }),
      });
      await res.text();
      statuses.push(res.status);
    };
    // Two rounds: each chat's requests at once (both processes take some), then again once the first jobs may have run.
    for (const base of [14, 18]) {
      await Promise.all(Array.from({ length: CHATS }, (_, c) => Array.from({ length: REQUESTS_PER_CHAT }, (_, k) => send(`c${c}`, base + k))).flat());
    }
    // A graceful stop drains every process's summary jobs before it exits.
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    expect(statuses).toEqual(Array(statuses.length).fill(200));
    expect(statuses.length).toBe(2 * CHATS * REQUESTS_PER_CHAT);
    expect(proxied).toBe(statuses.length);
    expect(server.stderr()).not.toMatch(/"level":(50|60)/);
    const summarized = [...calls.entries()].filter(([chat]) => chat !== 'unknown');
    expect(summarized.length).toBeGreaterThan(CHATS / 2);
    for (const [chat, seen] of summarized) {
      expect({ chat, most: seen.most }).toEqual({ chat, most: 1 });
      expect(seen.made).toBeLessThanOrEqual(2 * REQUESTS_PER_CHAT);
    }
  });
});
