import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { compressContext, createHistoryCache, createTokenCounter, type OpenAIChatMessage } from '../src/index.js';
import { generateConversation, modelRequestEnds } from '../bench/fixtures/conversation.js';
import { propertyParams } from './helpers/property-runs.js';

/**
 * Folding in steps: a chat that grows by appending keeps the same view prefix (what a provider's
 * prompt cache reuses) until the next step, instead of changing it on every turn. Judged by
 * comparing consecutive views message by message, here, not through the planner's own report.
 */

/** Messages two views share at their start (the same objects, or equal JSON for made ones). */
function sharedLead(a: readonly OpenAIChatMessage[], b: readonly OpenAIChatMessage[]): number {
  let k = 0;
  while (k < a.length && k < b.length && (a[k] === b[k] || JSON.stringify(a[k]) === JSON.stringify(b[k]))) k++;
  return k;
}

function replay(history: OpenAIChatMessage[], budget: number, lowWaterMark: number | undefined) {
  const counter = createTokenCounter();
  const historyCache = createHistoryCache();
  let previous: OpenAIChatMessage[] | undefined;
  let sentTokens = 0;
  let sharedTokens = 0;
  let reported = 0;
  let changedPrefix = 0;
  let requests = 0;
  for (const end of modelRequestEnds(history)) {
    const request = history.slice(0, end);
    const { messages: view, report } = compressContext(request, { maxContextTokens: budget, keepLast: 2, lowWaterMark, counter, historyCache, chatId: 'c' });
    // Over only when the protected part alone is (the last turns, which are never dropped).
    if (report.overBudget) expect(report.droppedCounts.budget + report.droppedCounts.summarized).toBe(report.messagesBefore - report.messagesAfter);
    else expect(report.tokensAfter).toBeLessThanOrEqual(budget);
    requests++;
    sentTokens += report.tokensAfter;
    reported += report.prefixTokensShared ?? 0;
    if (previous) {
      const k = sharedLead(previous, view);
      let t = 0;
      for (let i = 0; i < k; i++) t += counter.message(view[i], LENS);
      sharedTokens += t;
      if (k < previous.length) changedPrefix++;
    }
    previous = view;
  }
  return { requests, sentTokens, sharedTokens, reported, changedPrefix };
}

// The OpenAI Chat lens, for counting single messages of a view.
import { openaiChatLens as LENS } from '../src/core/index.js';

describe('views fold in steps, so their prefix stays the same between steps', () => {
  const history = generateConversation({ messages: 1200, seed: 11 });

  test('a long replay at a fixed budget: most of each view is the previous view\'s prefix, and far more than when every turn cuts', () => {
    const stepped = replay(history, 12_000, undefined);
    const everyTurn = replay(history, 12_000, 1);
    console.log(`prefix shared: stepped ${(stepped.sharedTokens / stepped.sentTokens).toFixed(3)} (${stepped.changedPrefix} of ${stepped.requests} views rewrote it), every turn ${(everyTurn.sharedTokens / everyTurn.sentTokens).toFixed(3)} (${everyTurn.changedPrefix})`);
    // With steps, a view rewrites its prefix only when a step is taken; cutting one group per turn rewrites it nearly every time.
    expect(stepped.changedPrefix).toBeLessThan(everyTurn.changedPrefix / 3);
    expect(stepped.sharedTokens / stepped.sentTokens).toBeGreaterThan(0.8);
    expect(stepped.sharedTokens / stepped.sentTokens).toBeGreaterThan(everyTurn.sharedTokens / everyTurn.sentTokens + 0.1);
    // The report's figure is the same measure, made by the runtime (minus the first view, which shares nothing).
    expect(Math.abs(stepped.reported - stepped.sharedTokens)).toBeLessThanOrEqual(stepped.sentTokens * 0.01);
  });

  test('property: any low-water mark keeps every view within budget, and a view made of kept messages only grows by appending until a step', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 10 }), fc.integer({ min: 3_000, max: 20_000 }), fc.double({ min: 0.05, max: 1, noNaN: true }), (seed, budget, lowWaterMark) => {
      const h = generateConversation({ messages: 300, seed });
      const r = replay(h, budget, lowWaterMark);
      expect(r.requests).toBeGreaterThan(10);
    }), { ...propertyParams(), numRuns: Math.max(10, Math.floor(propertyParams().numRuns / 40)) });
  });

  test('a view rewrites its prefix about once per step of appended tokens, also where the cut points drawn leave a long gap', () => {
    // Cut points are drawn at random, about a step apart on average, so now and then none lies
    // within the two steps a fold may reach: the view must not then cut anew on every request.
    // An agent loop: many tool rounds per user turn, each round a group of its own.
    const budget = 10_000;
    const step = 0.3 * budget; // the default low-water mark, 0.7
    let rewrites = 0;
    let appended = 0;
    const perHistory: string[] = [];
    fc.sample(fc.array(fc.integer({ min: 100, max: 400 }), { minLength: 300, maxLength: 300 }), { numRuns: 10, seed: 42 }).forEach((sizes, h) => {
      const words = (n: number, salt: number) => Array.from({ length: n }, (_, i) => `w${(i * 7919 + salt * 104729) % 997}`).join(' ');
      const history: OpenAIChatMessage[] = [{ role: 'system', content: `You are an agent. ${words(50, h)}` }, { role: 'user', content: words(30, h + 1) }];
      const counter = createTokenCounter();
      const historyCache = createHistoryCache();
      let previous: OpenAIChatMessage[] | undefined;
      let [r, a] = [0, 0];
      sizes.forEach((size, k) => {
        const before = history.length;
        if (k % 7 === 6) history.push({ role: 'assistant', content: words(20, k) }, { role: 'user', content: words(20, k + 1) });
        const id = `call_${h}_${k}`;
        history.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'look', arguments: JSON.stringify({ q: words(3, k) }) } }] });
        history.push({ role: 'tool', tool_call_id: id, content: words(size, k) });
        const { messages: view, report } = compressContext(history.slice(), { maxContextTokens: budget, counter, historyCache, chatId: `c${h}` });
        // Counted from the first view that left something out: before it, every view only grows.
        if (previous) {
          for (let i = before; i < history.length; i++) a += counter.message(history[i], LENS);
          if (sharedLead(previous, view) < previous.length) r++;
        }
        if (previous || report.messagesAfter < report.messagesBefore) previous = view;
      });
      perHistory.push(`${r}/${(a / step).toFixed(1)}`);
      rewrites += r;
      appended += a;
    });
    console.log(`prefix rewrites per step of appended tokens: ${(rewrites / (appended / step)).toFixed(2)} (per history, rewrites/steps: ${perHistory.join(' ')})`);
    expect(appended / step).toBeGreaterThan(100);
    expect(rewrites / (appended / step)).toBeLessThan(1.4);
  });

  test('lowWaterMark is checked', () => {
    expect(() => compressContext([], { lowWaterMark: 0 })).toThrow(/options\.lowWaterMark: must be a number in \(0, 1\]/);
    expect(() => compressContext([], { lowWaterMark: 1.5 })).toThrow(/options\.lowWaterMark/);
  });
});
