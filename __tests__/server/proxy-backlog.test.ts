import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { generateConversation } from '../../bench/fixtures/conversation.js';
import { startServer, type RunningServer } from '../../src/server/index.js';
import { requestSignal, type Summarizer } from '../../src/summarize/summarizer.js';
import { json, startUpstream, type StandInUpstream } from '../helpers/upstream-server.js';

/**
 * The proxy's summary backlog is bounded (`maxQueuedJobs`): a new chat whose job would queue past
 * it is served as always and its job not queued (`ctxfold_summary_backlog_full_total`); at
 * shutdown the proxy logs one line saying how many jobs finished and how many it abandoned
 * (running / waiting). Counted, never timed: the summarizer answers when the test lets it.
 */

/** A summarizer whose calls wait until `open()` (or until their job is aborted). */
function gatedSummarizer() {
  let openGate!: () => void;
  const gate = new Promise<void>((resolve) => { openGate = resolve; });
  const s = {
    calls: 0,
    open: () => openGate(),
    summarizer: {
      name: 'gated',
      inputBudgetTokens: 1_000_000,
      async summarize(request) {
        s.calls++;
        const signal = requestSignal(request);
        await new Promise<void>((resolve, reject) => {
          void gate.then(resolve);
          signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
        });
        return `folded ${request.messages.length} messages`;
      },
    } satisfies Summarizer,
  };
  return s;
}

let upstream: StandInUpstream;
beforeAll(async () => {
  upstream = await startUpstream();
  upstream.handle((_q, res) => json(res, 200, { id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] }));
});
afterAll(async () => {
  await upstream.close();
});

const history = generateConversation({ messages: 100, seed: 8 });

/** A proxy with one job slot and room for two queued jobs, its log lines kept. */
async function proxyWithBacklog(summarizer: Summarizer, shutdownGraceMs: number) {
  const lines: string[] = [];
  const proxy = await startServer({
    upstream: upstream.baseURL, port: 0, store: 'memory', summarizer, maxContextTokens: 3_000, keepLast: 4,
    concurrency: 1, maxQueuedJobs: 2, shutdownGraceMs, logLevel: 'info', logDestination: { write: (line: string) => lines.push(line) },
  });
  return { proxy, lines };
}

/** Sends one new chat's request and checks it was served. */
async function newChat(proxy: RunningServer, chatId: string): Promise<void> {
  const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'x-ctxfold-chat-id': chatId }, body: JSON.stringify({ model: 'm', messages: history }) });
  expect(res.status).toBe(200);
  await res.text();
  const sent = upstream.requests.at(-1)!.body as { messages: unknown[] };
  expect(sent.messages.length).toBeLessThan(history.length); // folded to the window
}

/** A metric's value as the proxy's /metrics shows it. */
async function metric(proxy: RunningServer, name: string): Promise<number> {
  const text = await (await fetch(`${proxy.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1]);
}

/** Waits (polling) until `ready()` holds; fails after a bound generous for a loaded host. */
async function until(ready: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let waited = 0; !(await ready()); waited += 10) {
    if (waited > 20_000) throw new Error(`never happened: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The shutdown line about summary jobs. */
function jobsLine(lines: readonly string[]): Record<string, unknown> | undefined {
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => typeof l.msg === 'string' && l.msg.startsWith('summary jobs at shutdown'));
}

describe('summary backlog in the proxy', () => {
  test('five new chats, one slot, two queued: two are refused and served anyway; shutdown abandons the running job and the two waiting, and says so', async () => {
    const gated = gatedSummarizer();
    const { proxy, lines } = await proxyWithBacklog(gated.summarizer, 200);
    for (const id of ['a', 'b', 'c', 'd', 'e']) await newChat(proxy, id);
    await until(async () => await metric(proxy, 'ctxfold_summary_backlog_full_total') === 2, 'two jobs refused');
    expect(await metric(proxy, 'ctxfold_summary_queue_depth')).toBe(2);
    expect(await metric(proxy, 'ctxfold_summary_jobs_running')).toBe(1);
    await proxy.close();
    const line = jobsLine(lines);
    expect(line).toMatchObject({ level: 30, finished: 0, failed: 0, abandonedRunning: 1, abandonedWaiting: 2 });
    expect(line!.msg).toBe('summary jobs at shutdown: 0 finished, 3 abandoned (1 running, 2 waiting): their chats keep the summary they had');
  });

  test('a backlog that drains within the grace: every job finished, none abandoned', async () => {
    const gated = gatedSummarizer();
    const { proxy, lines } = await proxyWithBacklog(gated.summarizer, 30_000);
    for (const id of ['a', 'b', 'c']) await newChat(proxy, id);
    await until(() => gated.calls === 1, 'the first job running');
    const closing = proxy.close();
    // Let the jobs go once the proxy drains them (from then on, what settles counts as finished at shutdown).
    await until(() => lines.some((l) => l.includes('"draining summary jobs"')), 'the drain begun');
    gated.open();
    await closing;
    expect(jobsLine(lines)).toMatchObject({ finished: 3, failed: 0, abandonedRunning: 0, abandonedWaiting: 0, msg: 'summary jobs at shutdown: 3 finished, 0 abandoned (0 running, 0 waiting)' });
    expect(gated.calls).toBe(3);
  });
});
