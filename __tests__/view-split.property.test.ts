import { expect, test } from '@jest/globals';
import fc from 'fast-check';
import { compressWithSummary, createExtractiveSummarizer, createTokenCounter } from '../src/index.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { openaiChatLens } from '../src/formats/openai-chat/lens.js';
import { validHistory } from './helpers/arbitraries.js';
import { propertyParams } from './helpers/property-runs.js';

/**
 * `report.split` says how the view's tokens were spent. Judged from the view itself: each message
 * the view sends is recounted and put in its part by where it came from (an input message before
 * `headEnd` or a system message: head; the summary; from `protectedStart` on: tail; any other
 * input message: middle; a message the plan made that is not the summary: notes).
 */

const counter = createTokenCounter();
const summarizer = createExtractiveSummarizer({ countTokens: counter.text });

test('report.split adds up to the view, part by part, recounted from the messages sent', async () => {
  let summarized = 0;
  let middles = 0;
  await fc.assert(fc.asyncProperty(validHistory(), fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 8 }), async (history, permille, keepLast) => {
    const total = history.reduce((t, m) => t + counter.message(m, openaiChatLens), counter.requestOverhead);
    const maxContextTokens = Math.max(1, Math.floor((total * permille) / 1000));
    const result = await compressWithSummary(history, { counter, summarizer, maxContextTokens, compressionThresholdTokens: Math.max(1, Math.floor(0.75 * maxContextTokens)), keepFirst: 1, keepLast, toolOutputTrim: { minChars: 300 } });
    const { report, messages } = result;
    const at = new Map<OpenAIChatMessage, number>(history.map((m, i) => [m, i]));
    const cleared = new Set(report.collapsed.map((c) => c.index));
    const parts = { head: 0, summary: 0, middle: 0, tail: 0, notes: 0 };
    // Collapsed copies, in order: the view's k-th copy stands for the k-th collapsed index.
    const copies = report.collapsed.map((c) => c.index).sort((a, b) => a - b);
    let copy = 0;
    for (const m of messages) {
      const t = counter.message(m, openaiChatLens);
      let i = at.get(m);
      if (i === undefined && typeof m.content === 'string' && m.content.startsWith('[Summary of')) { parts.summary += t; continue; }
      if (i === undefined && (m.role === 'tool' || m.role === 'function') && copy < copies.length && cleared.has(copies[copy])) i = copies[copy++];
      if (i === undefined) { parts.notes += t; continue; }
      if (i < report.headEnd || history[i].role === 'system' || history[i].role === 'developer') parts.head += t;
      else if (i >= report.protectedStart || (report.heldUserTurn && i >= report.heldUserTurn.start && i < report.heldUserTurn.end)) parts.tail += t;
      else parts.middle += t;
    }
    const s = report.split;
    expect({ head: s.head, summary: s.summary, middle: s.middle, tail: s.tail, notes: s.notes }).toEqual(parts);
    expect(s.head + s.summary + s.middle + s.tail + s.notes + s.tools + s.overhead).toBe(report.tokensAfter);
    expect(s.overhead).toBe(counter.requestOverhead);
    if (s.summary > 0) summarized++;
    if (s.middle > 0) middles++;
  }), { ...propertyParams(), numRuns: Math.min(propertyParams().numRuns, 300) });
  expect(summarized).toBeGreaterThan(10);
  expect(middles).toBeGreaterThan(10);
});
