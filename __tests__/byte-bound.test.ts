import { describe, expect, test } from '@jest/globals';
import { compressContext, createCompressor, createTokenCounter, MemoryStore, type OpenAIChatMessage } from '../src/index.js';
import { utf8TokenBound } from '../src/tokens/byte-bound.js';

/** A small tool-calling chat, about 200 bytes of text. */
const chat: OpenAIChatMessage[] = [
  { role: 'system', content: 'You are an airline agent.' },
  { role: 'user', content: 'Please look up reservation ZFA04Y.' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_reservation_details', arguments: '{"reservation_id":"ZFA04Y"}' } }] },
  { role: 'tool', tool_call_id: 'call_1', content: '{"reservation_id":"ZFA04Y","origin":"SFO","destination":"JFK"}' },
  { role: 'assistant', content: 'It flies SFO to JFK.' },
  { role: 'user', content: 'Can I add a bag? 行李' },
];

const exactCounter = () => ({ ...createTokenCounter(), atMostUtf8Bytes: false });

describe('a request whose byte bound is within its window', () => {
  test('compressContext plans it without the tokenizer; the token figures are exact when read', () => {
    const counter = createTokenCounter();
    const { messages, report } = compressContext(chat, { maxContextTokens: 128_000, counter });
    expect(counter.stats()).toMatchObject({ encoded: 0, cachedHits: 0 });
    expect(messages).toEqual(chat);
    expect(messages.every((m, i) => m === chat[i])).toBe(true);
    expect(report.summarize).toBeUndefined();
    expect(report.droppedCounts).toEqual({ summarized: 0, budget: 0 });
    // Read now: counted then, and the same as the exact path's.
    const exact = compressContext(chat, { maxContextTokens: 128_000, counter: exactCounter() }).report;
    expect(report.tokensBefore).toBe(exact.tokensBefore);
    expect(counter.stats().encoded).toBeGreaterThan(0);
    expect(report.tokensAfter).toBe(exact.tokensAfter);
    expect(report.split).toEqual(exact.split);
    expect(report.minimumTokens).toBe(exact.minimumTokens);
  });

  test('a compressor serves it without the tokenizer and starts no summary', async () => {
    const counter = createTokenCounter();
    const compressor = createCompressor({ maxContextTokens: 128_000, counter, store: new MemoryStore() });
    const seen: OpenAIChatMessage[][] = [];
    const handler = compressor.wrap(async (request: { messages: OpenAIChatMessage[]; chatId: string }) => {
      seen.push(request.messages);
      return 'ok';
    });
    await handler({ messages: chat, chatId: 'c1' });
    await handler({ messages: [...chat, { role: 'assistant', content: 'Yes, one bag.' }, { role: 'user', content: 'Thanks.' }], chatId: 'c1' });
    await compressor.drain();
    expect(counter.stats()).toMatchObject({ encoded: 0, cachedHits: 0 });
    expect(seen[0]).toEqual(chat);
    expect(seen[1]).toHaveLength(chat.length + 2);
    expect(compressor.stats().summariesStarted).toBe(0);
    await compressor.close();
  });

  test('the tools and instructions of the request are bounded too: a window they pass is counted exactly', () => {
    const tools = [{ type: 'function', function: { name: 'lookup', description: 'x'.repeat(4000) } }];
    const bytes = chat.reduce((n, m) => n + utf8TokenBound(JSON.stringify(m)), 0);
    const counter = createTokenCounter();
    const got = compressContext(chat, { maxContextTokens: bytes + 1000, counter, tools });
    // The tool's 4,000 bytes pass the window's bound, so the tokenizer decides: it fits.
    expect(counter.stats().encoded).toBeGreaterThan(0);
    expect(got.messages).toEqual(chat);
    const counter2 = createTokenCounter();
    compressContext(chat, { maxContextTokens: bytes + 1000, counter: counter2 });
    expect(counter2.stats()).toMatchObject({ encoded: 0, cachedHits: 0 });
  });

  test('over its threshold by the byte bound, the history is counted: the threshold is decided exactly', () => {
    const counter = createTokenCounter();
    const tokens = compressContext(chat, { counter: exactCounter() }).report.tokensBefore;
    // Within the window by bytes, but the threshold lies between the exact count and the byte bound.
    compressContext(chat, { maxContextTokens: 128_000, compressionThresholdTokens: tokens + 1, counter });
    expect(counter.stats().encoded).toBeGreaterThan(0);
  });

  test('a counter on countText (any tokenizer) is never bypassed', () => {
    let calls = 0;
    const counter = createTokenCounter({ countText: (t) => { calls++; return t.length; } });
    compressContext(chat, { maxContextTokens: 128_000, counter });
    expect(calls).toBeGreaterThan(0);
  });
});
