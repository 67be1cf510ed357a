import { afterEach, describe, expect, test } from '@jest/globals';
import { validateMessages } from '../src/formats/profiles.js';
import { openaiProfile } from '../src/formats/openai-chat/profile.js';
import { generateConversation } from '../bench/fixtures/conversation.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { createCompressor, type Compressor } from '../src/runtime/compressor.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { scriptedSummarizer, type Behaviour } from './helpers/test-summarizers.js';

const counter = createTokenCounter();
const open: Compressor[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close(200)));
});

/**
 * Long enough that a working job finishes on a loaded host; the hanging cases wait it out once.
 */
const JOB_LIMIT_MS = 3000;

const echo = async (request: { messages: OpenAIChatMessage[]; chatId: string }) => request.messages;

/**
 * Makes a first summary, grows the history, then runs one faulty job: the response must be a
 * valid view, the first summary must stay in force, the failure must be reported, and a later
 * trigger must succeed.
 */
async function faultCase(fault: Behaviour) {
  const store = new MemoryStore();
  const summarizer = scriptedSummarizer(() => 5);
  const c = createCompressor({ maxContextTokens: 4000, compressionThresholdTokens: 1500, keepLast: 6, summarizer, store, jobTimeoutMs: JOB_LIMIT_MS, counter });
  open.push(c);
  const failures: unknown[] = [];
  c.on('summary:failed', (e) => failures.push(e.error));
  const full = generateConversation({ messages: 160, seed: 21 });
  const wrapped = c.wrap(echo);
  await wrapped({ messages: full.slice(0, 100), chatId: 'f' });
  await c.drain();
  const first = await store.get('f');
  expect(first?.version).toBe(1);

  summarizer.script.push(fault);
  const view = await wrapped({ messages: full, chatId: 'f' });
  expect(validateMessages(view, openaiProfile)).toEqual([]);
  await c.drain();
  expect(failures).toHaveLength(1);
  const after = await store.get('f');
  expect(after).toEqual(first);
  // The view served while the job failed still uses the first summary.
  const again = await wrapped({ messages: full, chatId: 'f' });
  expect(validateMessages(again, openaiProfile)).toEqual([]);
  expect(again.some((m) => typeof m.content === 'string' && m.content.includes(first!.summary))).toBe(true);
  // Retried on a later trigger: this time it succeeds.
  await c.drain();
  const retried = await store.get('f');
  expect(retried?.version).toBe(2);
  return { failures };
}

describe('a failing summary never loses history', () => {
  test('summarizer throws', async () => {
    const { failures } = await faultCase('throw');
    expect(String(failures[0])).toMatch(/exploded/);
  });
  test('summarizer returns an empty string', async () => {
    const { failures } = await faultCase('empty');
    expect(String(failures[0])).toMatch(/empty/);
  });
  test('summarizer hangs past the job timeout', async () => {
    const { failures } = await faultCase('hang');
    expect(String(failures[0])).toMatch(/timed out/);
  });
  test('summarizer hangs and ignores its abort signal', async () => {
    const { failures } = await faultCase('hang-ignoring-signal');
    expect(String(failures[0])).toMatch(/timed out/);
  });

  test('raise mode: drain rejects with the failure, requests are still served', async () => {
    const summarizer = scriptedSummarizer(() => 1);
    summarizer.script.push('throw');
    const c = createCompressor({ maxContextTokens: 4000, compressionThresholdTokens: 1500, summarizer, summaryFailMode: 'raise', counter });
    open.push(c);
    const view = await c.wrap(echo)({ messages: generateConversation({ messages: 120, seed: 5 }), chatId: 'r' });
    expect(validateMessages(view, openaiProfile)).toEqual([]);
    await expect(c.drain()).rejects.toThrow(/exploded/);
    await expect(c.drain()).resolves.toBeUndefined();
  });
});

describe('stale jobs and edits', () => {
  test('a job that loses the compare-and-set is discarded and reported', async () => {
    const store = new MemoryStore();
    const summarizer = scriptedSummarizer(() => 80);
    const c = createCompressor({ maxContextTokens: 4000, compressionThresholdTokens: 1500, summarizer, store, counter });
    open.push(c);
    const stale: unknown[] = [];
    c.on('summary:stale', (e) => stale.push(e));
    const msgs = generateConversation({ messages: 120, seed: 8 });
    // Another writer (a second process on the same store) commits while this job summarizes.
    const external = new Promise<boolean>((resolve) => {
      c.on('summary:start', () => resolve(store.commit({
        chatId: 's', version: 1, summary: 'written elsewhere', coveredIds: [],
        summarizer: 'other', tokensBefore: 0, tokensAfter: 0, createdAt: 'x', updatedAt: 'x',
      }, 0)));
    });
    expect(c.schedule('s', msgs)).toBe('started');
    expect(await external).toBe(true);
    await c.drain();
    expect(stale).toHaveLength(1);
    expect((await store.get('s'))?.summary).toBe('written elsewhere');
  });

  test('editing a covered message makes the next request ignore the stale summary, and it is rebuilt', async () => {
    const store = new MemoryStore();
    const summarizer = scriptedSummarizer(() => 1);
    const c = createCompressor({ maxContextTokens: 4000, compressionThresholdTokens: 1500, keepLast: 6, summarizer, store, counter });
    open.push(c);
    const msgs = generateConversation({ messages: 120, seed: 13 });
    const wrapped = c.wrap(echo);
    await wrapped({ messages: msgs, chatId: 'e' });
    await c.drain();
    const state = (await store.get('e'))!;
    expect(state.version).toBe(1);
    const reports: { applied: boolean; note?: string }[] = [];
    c.on('compressed', (e) => reports.push(e.report.summary));
    const edited = msgs.map((m, i) => (i === 3 ? { ...m, content: `${String(m.content ?? '')} (edited)` } : m));
    const recomputed: boolean[] = [];
    c.on('summary:done', (e) => recomputed.push(e.recomputed));
    const view = await wrapped({ messages: edited, chatId: 'e' });
    expect(reports[0].applied).toBe(false);
    expect(reports[0].note).toMatch(/not applied/);
    expect(view.some((m) => typeof m.content === 'string' && m.content.includes(state.summary))).toBe(false);
    await c.drain();
    expect(recomputed).toEqual([true]);
    expect((await store.get('e'))?.version).toBe(2);
  });
});

describe('an LLM summarizer behind a real HTTP endpoint', () => {
  test('500 and 429 are retried with backoff; requests are served meanwhile and the summary lands', async () => {
    const { startFakeLlmServer } = await import('./helpers/fake-llm-server.js');
    const { createLlmSummarizer } = await import('../src/summarize/llm.js');
    const server = await startFakeLlmServer({ reply: (_r, i) => `working memory #${i}` });
    try {
      server.enqueue({ status: 500, delayMs: 30 });
      server.enqueue({ status: 429, retryAfter: 0 });
      const store = new MemoryStore();
      const summarizer = createLlmSummarizer({ baseURL: server.baseURL, model: 'm', retries: 3, retryBaseMs: 20 });
      // A window the kept tail leaves room in: a summary is asked for only where a view can hold one.
      const c = createCompressor({ maxContextTokens: 12_000, compressionThresholdTokens: 1500, summarizer, store, counter });
      open.push(c);
      const msgs = generateConversation({ messages: 120, seed: 44 });
      const wrapped = c.wrap(echo);
      const view = await wrapped({ messages: msgs, chatId: 'llm' });
      const servedAt = Date.now();
      expect(validateMessages(view, openaiProfile)).toEqual([]);
      expect(await store.get('llm')).toBeUndefined();
      await c.drain();
      const state = await store.get('llm');
      expect(state?.summary).toMatch(/working memory/);
      expect(state?.summarizer).toBe('llm');
      expect(server.requests.length).toBeGreaterThanOrEqual(3);
      // The request was answered before the retry that finally succeeded had even been sent.
      expect(servedAt).toBeLessThanOrEqual(server.requests[server.requests.length - 1].receivedAt);
    } finally {
      await server.close();
    }
  });
});
