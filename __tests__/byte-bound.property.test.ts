import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { compressContext, createHistoryCache, type CompressOptions } from '../src/index.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { createTokenCounter, type TokenCounter } from '../src/tokens/counter.js';
import { utf8TokenBound } from '../src/tokens/byte-bound.js';
import { anyHistory, textArb } from './helpers/arbitraries.js';
import { validAnthropicHistory } from './helpers/anthropic-arbitraries.js';
import { validAiSdkHistory } from './helpers/ai-sdk-arbitraries.js';
import { propertyParams } from './helpers/property-runs.js';

/** The same counter without its byte-bound mark: `compressContext` then always counts (the exact path). */
const exactOnly = (c: TokenCounter): TokenCounter => ({ ...c, atMostUtf8Bytes: false });
const reference = createTokenCounter();

/** True when the call consulted the counter at all (counted a text or looked one up). */
const consulted = (c: TokenCounter) => {
  const s = c.stats();
  return s.encoded + s.cachedHits > 0;
};

const toolArb = fc.option(fc.array(fc.record({ type: fc.constant('function'), function: fc.record({ name: fc.constantFrom('lookup', 'book_flight'), description: textArb }) }), { maxLength: 2 }), { nil: undefined });

/** Options around the history's exact size: windows from half of it to 6x it (bytes run about 4x tokens), a threshold sometimes, tools and instructions sometimes. */
const drawArb = fc.record({
  windowPermille: fc.integer({ min: 500, max: 6000 }),
  thresholdPermille: fc.option(fc.integer({ min: 500, max: 6000 }), { nil: undefined, freq: 2 }),
  keepLast: fc.integer({ min: 0, max: 8 }),
  reserve: fc.option(fc.integer({ min: 0, max: 50 }), { nil: undefined }),
  tools: toolArb,
  instructions: fc.option(textArb, { nil: undefined, freq: 4 }),
});
type Draw = typeof drawArb extends fc.Arbitrary<infer T> ? T : never;

function optionsFor(messages: readonly unknown[], format: CompressOptions['format'], d: Draw): CompressOptions {
  const tokens = compressContext(messages, { counter: reference, format }).report.tokensBefore;
  const scale = (permille: number) => Math.max(1, Math.floor((tokens * permille) / 1000));
  const reserve = d.reserve ?? 0;
  return {
    format,
    keepLast: d.keepLast,
    maxContextTokens: scale(d.windowPermille) + reserve,
    reserveOutputTokens: reserve,
    compressionThresholdTokens: d.thresholdPermille === undefined ? undefined : scale(d.thresholdPermille),
    ...(d.tools ? { tools: d.tools } : {}),
    ...(d.instructions !== undefined ? { instructions: d.instructions } : {}),
  };
}

/**
 * Runs one history both ways. When the byte bound decided (the counter was not consulted), the
 * exact plan must also have kept everything with no summary to make, and the view and the whole
 * report (token figures read afterwards, so counted lazily) must be byte-identical to the exact
 * path's. Returns whether the fast path fired.
 */
function checkBothWays(messages: readonly unknown[], options: CompressOptions): boolean {
  const fast = createTokenCounter();
  const a = compressContext(messages, { ...options, counter: fast });
  const fired = !consulted(fast);
  const b = compressContext(messages, { ...options, counter: exactOnly(createTokenCounter()) });
  if (fired) {
    // The exact path's "within the window" decision agrees: nothing left out, no summary asked for.
    expect(b.report.droppedCounts).toEqual({ summarized: 0, budget: 0 });
    expect(b.report.overBudget).toBe(false);
    expect(b.report.summarize).toBeUndefined();
    expect(b.report.tokensAfter).toBeLessThanOrEqual(options.maxContextTokens! - (options.reserveOutputTokens ?? 0));
  }
  expect(JSON.stringify(a.messages)).toBe(JSON.stringify(b.messages));
  expect(JSON.stringify(a.report)).toBe(JSON.stringify(b.report));
  return fired;
}

describe('the byte-bound path', () => {
  test('a text never counts more tokens than its byte bound (o200k_base, cl100k_base), however it is sliced', () => {
    const o200k = createTokenCounter();
    const cl100k = createTokenCounter({ encoding: 'cl100k_base' });
    const texts = fc.oneof(textArb, fc.string({ unit: 'binary', maxLength: 400 }), fc.string({ unit: 'grapheme', maxLength: 600 }),
      // Runs long enough to be counted in slices, astral letters among them (a seam can split a pair).
      fc.tuple(fc.string({ maxLength: 3 }), fc.constantFrom('𝐀', '𠀀', 'a', '😀', 'ก'), fc.integer({ min: 100, max: 700 })).map(([lead, c, n]) => lead + c.repeat(n)));
    fc.assert(fc.property(texts, (t) => {
      expect(o200k.text(t)).toBeLessThanOrEqual(utf8TokenBound(t));
      expect(cl100k.text(t)).toBeLessThanOrEqual(utf8TokenBound(t));
    }), propertyParams());
  });

  test('OpenAI Chat histories: where the byte bound decides, the exact plan decides the same, and both return the same bytes', () => {
    let fired = 0;
    let runs = 0;
    fc.assert(fc.property(anyHistory({ maxMessages: 40 }), drawArb, (messages: OpenAIChatMessage[], d) => {
      runs++;
      if (checkBothWays(messages, optionsFor(messages, 'openai', d))) fired++;
    }), propertyParams());
    // The property reached both paths.
    expect(fired).toBeGreaterThan(runs / 10);
    expect(fired).toBeLessThan(runs);
  });

  test('Anthropic and AI SDK histories (images, thinking, parts) likewise', () => {
    let fired = 0;
    fc.assert(fc.property(fc.oneof(
      validAnthropicHistory().map((m) => ({ messages: m as unknown[], format: 'anthropic' as const })),
      validAiSdkHistory().map((m) => ({ messages: m as unknown[], format: 'ai-sdk' as const })),
    ), drawArb, ({ messages, format }, d) => {
      if (checkBothWays(messages, optionsFor(messages, format, d))) fired++;
    }), { ...propertyParams(), numRuns: Math.max(50, Math.floor(propertyParams().numRuns / 3)) });
    expect(fired).toBeGreaterThan(0);
  });

  test('a chat served request after request (history cache): the same views and reports both ways, prefix tokens included', () => {
    fc.assert(fc.property(anyHistory({ maxMessages: 40 }), drawArb, fc.integer({ min: 1, max: 39 }), (messages: OpenAIChatMessage[], d, cut) => {
      const options = optionsFor(messages, 'openai', d);
      const first = messages.slice(0, Math.min(cut, messages.length));
      const fastCounter = createTokenCounter();
      const exactCounter = exactOnly(createTokenCounter());
      const fastCache = createHistoryCache();
      const exactCache = createHistoryCache();
      for (const request of [first, messages, messages]) {
        const a = compressContext(request, { ...options, counter: fastCounter, historyCache: fastCache, chatId: 'c' });
        const b = compressContext(request, { ...options, counter: exactCounter, historyCache: exactCache, chatId: 'c' });
        expect(JSON.stringify(a.messages)).toBe(JSON.stringify(b.messages));
        expect(JSON.stringify(a.report)).toBe(JSON.stringify(b.report));
      }
    }), { ...propertyParams(), numRuns: Math.max(50, Math.floor(propertyParams().numRuns / 3)) });
  });
});
