import { afterEach, describe, expect, test } from '@jest/globals';
import { validateMessages, openaiProfile } from '../src/core/validate/validate.js';
import { generateConversation } from '../bench/fixtures/conversation.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/lens.js';
import { createCompressor, type Compressor } from '../src/runtime/compressor.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { scriptedSummarizer } from './helpers/test-summarizers.js';

const counter = createTokenCounter();
const open: Compressor[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close(200)));
});

function track<C extends Compressor>(c: C): C {
  open.push(c);
  return c;
}

/** A long valid history that is well over 3k tokens. */
function history(seed: number, messages = 120): OpenAIChatMessage[] {
  return generateConversation({ messages, seed });
}

const echo = async (request: { messages: OpenAIChatMessage[]; chatId?: string }) => ({ sent: request.messages });

describe('createCompressor().wrap', () => {
  test('passes the view to the handler and returns its response untouched', async () => {
    const c = track(createCompressor({ maxContextTokens: 3000, summarizer: null, counter }));
    const response = { id: 'resp-1', sent: [] as OpenAIChatMessage[] };
    const wrapped = c.wrap(async (req: { messages: OpenAIChatMessage[]; chatId: string }) => {
      response.sent = req.messages;
      return response;
    });
    const msgs = history(1);
    const out = await wrapped({ messages: msgs, chatId: 'a' });
    expect(out).toBe(response);
    expect(out.sent.length).toBeLessThan(msgs.length);
    expect(validateMessages(out.sent, openaiProfile)).toEqual([]);
  });

  test('without a summary and over the limit, serves the best valid view and says so', async () => {
    const c = track(createCompressor({ maxContextTokens: 2500, summarizer: null, counter }));
    let note = '';
    c.on('compressed', (e) => {
      note = e.report.notes.join(' ');
    });
    const { sent } = await c.wrap(echo)({ messages: history(2), chatId: 'b' });
    expect(validateMessages(sent, openaiProfile)).toEqual([]);
    expect(note).toMatch(/no usable summary yet/);
  });

  test('a background summary lands after the response and is used by the next request', async () => {
    const summarizer = scriptedSummarizer(() => 20);
    const c = track(createCompressor({ maxContextTokens: 4000, compressionThresholdTokens: 2000, keepLast: 6, summarizer, counter }));
    const done: number[] = [];
    c.on('summary:done', (e) => done.push(e.coveredIds.length));
    const msgs = history(3);
    const wrapped = c.wrap(echo);
    await wrapped({ messages: msgs, chatId: 'c' });
    await c.drain();
    expect(done).toHaveLength(1);
    const { sent } = await wrapped({ messages: msgs, chatId: 'c' });
    const summaryMessages = sent.filter((m) => typeof m.content === 'string' && m.content.includes('folded'));
    expect(summaryMessages).toHaveLength(1);
    expect(validateMessages(sent, openaiProfile)).toEqual([]);
  });

  test('chat id: explicit, metadata.chat_id, then a fingerprint of the opening', async () => {
    const c = track(createCompressor({ summarizer: null, counter }));
    const ids: string[] = [];
    c.on('compressed', (e) => ids.push(e.chatId));
    const wrapped = c.wrap(echo);
    const msgs = history(4, 20);
    await wrapped({ messages: msgs, chatId: 'explicit' });
    await wrapped({ messages: msgs, metadata: { chat_id: 'meta' } } as never);
    await wrapped({ messages: msgs });
    await wrapped({ messages: msgs.slice(0, 10) });
    expect(ids[0]).toBe('explicit');
    expect(ids[1]).toBe('meta');
    expect(ids[2]).toMatch(/^fp:/);
    expect(ids[3]).toBe(ids[2]);
  });

  test('rejects a request without messages, naming the field', async () => {
    const c = track(createCompressor({ summarizer: null, counter }));
    await expect(c.wrap(echo)({} as never)).rejects.toThrow(/request\.messages/);
  });
});

/** Marks every message of a chat so a shared summarizer can tell which chat a call is for. */
function markChat(msgs: OpenAIChatMessage[], tag: string): OpenAIChatMessage[] {
  return msgs.map((m) => {
    if (typeof m.content === 'string') return { ...m, content: `${tag} ${m.content}` };
    if (Array.isArray(m.content)) return { ...m, content: [{ type: 'text', text: tag }, ...m.content] };
    return { ...m, content: tag };
  });
}

async function load(summarizerDelay: (() => number) | null) {
  const perChat = new Map<string, ReturnType<typeof scriptedSummarizer>>();
  const summarizer = summarizerDelay === null ? null : {
    name: 'per-chat',
    inputBudgetTokens: 1_000_000,
    summarize(req: Parameters<ReturnType<typeof scriptedSummarizer>['summarize']>[0]) {
      const tag = req.messages.map((e) => e.text).join(' ').match(/\[chat-\d+\]/)?.[0] ?? 'unknown';
      let s = perChat.get(tag);
      if (!s) perChat.set(tag, (s = scriptedSummarizer(summarizerDelay)));
      return s.summarize(req);
    },
  };
  const c = track(createCompressor({ maxContextTokens: 4000, compressionThresholdTokens: 1500, summarizer, concurrency: 4, counter }));
  let jobs = 0;
  c.on('summary:start', () => jobs++);
  const chats = Array.from({ length: 20 }, (_, k) => ({ id: `chat-${k}`, msgs: markChat(history(100 + k, 80), `[chat-${k}]`) }));
  const outcomes = { started: 0, coalesced: 0, other: 0 };
  const latencies: number[] = [];
  const wrapped = c.wrap(async (req: { messages: OpenAIChatMessage[]; chatId: string }) => req.messages.length);
  await Promise.all(Array.from({ length: 200 }, (_, k) => chats[k % 20]).map(async (chat, k) => {
    await new Promise((r) => setTimeout(r, (k * 7) % 40));
    const t0 = performance.now();
    await wrapped({ messages: chat.msgs, chatId: chat.id });
    latencies.push(performance.now() - t0);
    const outcome = c.schedule(chat.id, chat.msgs);
    if (outcome === 'started') outcomes.started++;
    else if (outcome === 'coalesced') outcomes.coalesced++;
    else outcomes.other++;
  }));
  await c.drain();
  latencies.sort((a, b) => a - b);
  return { perChat, outcomes, jobs, median: latencies[latencies.length >> 1], p95: latencies[Math.floor(latencies.length * 0.95)] };
}

describe('per-chat locking and coalescing', () => {
  test('200 concurrent requests over 20 chats: one job per chat at a time, every trigger run or coalesced, no request waits', async () => {
    const without = await load(null);
    const withSummaries = await load(() => 50 + Math.floor(Math.random() * 150));
    expect(withSummaries.perChat.size).toBe(20);
    for (const s of withSummaries.perChat.values()) expect(s.maxConcurrent).toBe(1);
    // Each request triggers twice (wrap after the response, then schedule()): each is run or coalesced.
    expect(withSummaries.outcomes.other).toBe(0);
    expect(withSummaries.outcomes.started + withSummaries.outcomes.coalesced).toBe(200);
    expect(withSummaries.jobs).toBeGreaterThanOrEqual(20);
    // A request that waited for a summary would carry its 50–200 ms; measured, not tightly asserted.
    const diff = withSummaries.median - without.median;
    console.log(`request latency median ${without.median.toFixed(2)} ms without summarizer, ${withSummaries.median.toFixed(2)} ms with (p95 ${without.p95.toFixed(2)} / ${withSummaries.p95.toFixed(2)})`);
    expect(diff).toBeLessThan(50);
  });

  test('two quick triggers on one chat start one job; the second is folded into it', async () => {
    const summarizer = scriptedSummarizer(() => 60);
    const c = track(createCompressor({ maxContextTokens: 4000, compressionThresholdTokens: 1500, summarizer, counter }));
    const msgs = history(9, 100);
    expect(c.schedule('x', msgs)).toBe('started');
    expect(c.schedule('x', msgs)).toBe('coalesced');
    expect(c.schedule('x', msgs)).toBe('coalesced');
    await c.drain();
    expect(summarizer.maxConcurrent).toBe(1);
    // The started job plus at most one follow-up (which finds nothing new to fold in).
    expect(summarizer.calls).toBe(1);
  });
});
