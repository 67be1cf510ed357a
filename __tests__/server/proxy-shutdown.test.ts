import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { connect } from 'node:net';
import { generateConversation } from '../../bench/fixtures/conversation.js';
import { startServer } from '../../src/server/index.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { ChatState, StateStore } from '../../src/store/state.js';
import { scriptedSummarizer } from '../helpers/test-summarizers.js';
import { json, startUpstream, type StandInUpstream } from '../helpers/upstream-server.js';

/**
 * Graceful shutdown: `close()` stops accepting connections, lets an in-flight stream finish,
 * lets a running summary job commit, and only then closes the store.
 */

/** A store that records commits and when it was closed. */
class WatchedStore implements StateStore {
  readonly inner = new MemoryStore();
  readonly commits: ChatState[] = [];
  closedAfterCommits = -1;
  get(chatId: string) {
    return this.inner.get(chatId);
  }
  async commit(state: ChatState, expected: number) {
    const ok = await this.inner.commit(state, expected);
    if (ok) this.commits.push(state);
    return ok;
  }
  delete(chatId: string) {
    return this.inner.delete(chatId);
  }
  async close() {
    this.closedAfterCommits = this.commits.length;
    await this.inner.close();
  }
}

let upstream: StandInUpstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(async () => {
  await upstream.close();
});

describe('graceful shutdown', () => {
  test('close() refuses new connections, finishes the in-flight stream, drains the running summary job, then closes the store', async () => {
    const store = new WatchedStore();
    const summarizer = scriptedSummarizer(() => 400);
    const proxy = await startServer({ upstream: upstream.baseURL, port: 0, store, summarizer, maxContextTokens: 3_000, keepLast: 4, logLevel: 'silent' });
    // 1. A request whose answer schedules a summary (the summarizer takes 400 ms).
    upstream.handle((_q, res) => json(res, 200, { id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] }));
    const history = generateConversation({ messages: 100, seed: 8 });
    const first = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'x-ctxfold-chat-id': 'draining' }, body: JSON.stringify({ model: 'm', messages: history }) });
    expect(first.status).toBe(200);
    await first.text();
    // 2. A stream the upstream sends in two parts, 300 ms apart.
    upstream.handle((_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"choices":[{"index":0,"delta":{"content":"one "}}]}\n\n');
      setTimeout(() => res.end('data: {"choices":[{"index":0,"delta":{"content":"two"}}]}\n\ndata: [DONE]\n\n'), 300);
    });
    const streaming = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
    // The summary job is running (inside the summarizer) when the stop begins.
    for (let waited = 0; summarizer.calls === 0 && waited < 2_000; waited += 5) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(summarizer.calls).toBe(1);
    expect(store.commits).toEqual([]);

    const closing = proxy.close();
    // New connections are refused from now on.
    await expect(fetch(`${proxy.url}/healthz`)).rejects.toThrow();
    // The in-flight stream still ends whole.
    expect(await streaming.text()).toBe('data: {"choices":[{"index":0,"delta":{"content":"one "}}]}\n\ndata: {"choices":[{"index":0,"delta":{"content":"two"}}]}\n\ndata: [DONE]\n\n');
    await closing;
    // The job ran to its commit, and the store was closed after it.
    expect(store.commits.map((s) => [s.version, s.summary.startsWith('folded ')])).toEqual([[1, true]]);
    expect(store.closedAfterCommits).toBe(1);
    await proxy.close(); // idempotent
  });

  test('an in-flight request still open after the grace period is cut, and close() returns', async () => {
    const proxy = await startServer({ upstream: upstream.baseURL, port: 0, store: 'memory', shutdownGraceMs: 150, logLevel: 'silent' });
    upstream.handle(() => undefined); // never answers
    const arrived = upstream.requests.length;
    const pending = fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }) }).then((r) => r.status, () => 'cut');
    while (upstream.requests.length === arrived) await new Promise((resolve) => setTimeout(resolve, 5));
    const started = Date.now();
    await proxy.close();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await pending).toBe('cut');
  });

  test('a client connection that never sent a request does not hold close() up (it waited for the 60 s header timeout)', async () => {
    const proxy = await startServer({ upstream: upstream.baseURL, port: 0, store: 'memory', shutdownGraceMs: 5_000, logLevel: 'silent' });
    // Open, unused: as an HTTP client's pool leaves a connection it opened and did not need.
    const socket = connect(proxy.port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    // An answered request on another connection: close() still waits for nothing in flight.
    upstream.handle((_q, res) => json(res, 200, { id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] }));
    const answered = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }) });
    expect(answered.status).toBe(200);
    await answered.text();
    const started = Date.now();
    await proxy.close();
    expect(Date.now() - started).toBeLessThan(2_000);
    await ended;
  });
});
