import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { compressContext, compressWithSummary, createExtractiveSummarizer, createTokenCounter } from '../src/index.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { openaiChatLens } from '../src/formats/openai-chat/lens.js';
import { Fingerprints } from '../src/runtime/fingerprints.js';
import { validHistory } from './helpers/arbitraries.js';
import { corpusDescribe, loadCorpus } from './helpers/corpus.js';
import { expectedHeadEnd, expectedProtectedStart } from './helpers/view-checks.js';
import { pairingProblems } from './helpers/oracle.js';
import { propertyParams } from './helpers/property-runs.js';

const counter = createTokenCounter();
const isSystem = (m: OpenAIChatMessage) => m.role === 'system' || m.role === 'developer';

/** Tokens of what is never dropped: head, system messages, the kept tail, and the request overhead. */
function protectedTokens(history: readonly OpenAIChatMessage[], keepFirst: number, keepLast: number): number {
  const hEnd = expectedHeadEnd(history, keepFirst);
  const pStart = Math.max(hEnd, expectedProtectedStart(history, keepLast));
  let total = counter.requestOverhead;
  history.forEach((m, i) => { if (i < hEnd || i >= pStart || isSystem(m)) total += counter.message(m, openaiChatLens); });
  return total;
}

describe('a summary never pushes a view over the budget', () => {
  test('random histories, summaries and budgets: within budget whenever the protected part fits', () => {
    let shortened = 0;
    let applied = 0;
    fc.assert(fc.property(
      validHistory(), fc.integer({ min: 1, max: 400 }), fc.integer({ min: 0, max: 600 }), fc.integer({ min: 0, max: 8 }),
      (history, words, extra, keepLast) => {
        const hEnd = expectedHeadEnd(history, 1);
        fc.pre(history.length > hEnd + 1);
        const floor = protectedTokens(history, 1, keepLast);
        const maxContextTokens = floor + extra;
        const text = Array.from({ length: words }, (_, k) => `fact-${k} value ${k * 7}`).join('\n');
        const coveredIds = new Fingerprints().idsOf(history, openaiChatLens, hEnd, history.length);
        const { messages, report } = compressContext(history, { counter, keepLast, maxContextTokens, summary: { text, coveredIds }, format: 'openai' });
        expect(pairingProblems(messages)).toEqual([]);
        expect(report.overBudget).toBe(false);
        expect(report.tokensAfter).toBeLessThanOrEqual(maxContextTokens);
        if (report.summary.applied) {
          applied++;
          expect(report.summary.tokens).toBeLessThanOrEqual(report.summary.allowedTokens!);
          if (report.summary.shortened) shortened++;
        }
      },
    ), propertyParams());
    expect(applied).toBeGreaterThan(20);
    expect(shortened).toBeGreaterThan(5);
  });
});

corpusDescribe(describe)('summaries on the real conversations', () => {
  test('at 25%, 50% and 75% of each conversation with the extractive summarizer: 0 views over budget where the protected part fits', async () => {
    const summarizer = createExtractiveSummarizer({ countTokens: counter.text });
    let views = 0;
    let summarized = 0;
    const over: string[] = [];
    for (const conv of loadCorpus()) {
      const tokens = compressContext(conv.messages, { counter }).report.tokensBefore;
      for (const share of [0.25, 0.5, 0.75]) {
        const maxContextTokens = Math.max(1, Math.floor(tokens * share));
        const { report } = await compressWithSummary(conv.messages, {
          counter, summarizer, maxContextTokens, compressionThresholdTokens: Math.floor(maxContextTokens * 0.75), keepFirst: 1, keepLast: 6,
        });
        views++;
        if (report.summary.applied) summarized++;
        const fits = protectedTokens(conv.messages, 1, 6) <= maxContextTokens;
        if (fits && report.tokensAfter > maxContextTokens) over.push(`${conv.id} at ${share}: ${report.tokensAfter} > ${maxContextTokens}`);
      }
    }
    expect(views).toBe(600);
    expect(summarized).toBeGreaterThan(100);
    expect(over).toEqual([]);
  }, 120_000);
});
