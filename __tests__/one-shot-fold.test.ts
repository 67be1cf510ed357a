import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { compressContext, compressWithSummary, createExtractiveSummarizer, createTokenCounter, type Summarizer } from '../src/index.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { openaiChatLens } from '../src/formats/openai-chat/lens.js';
import { validHistory } from './helpers/arbitraries.js';
import { expectedHeadEnd, expectedProtectedStart, expectSafeView } from './helpers/view-checks.js';
import { propertyParams } from './helpers/property-runs.js';

/**
 * `compressWithSummary` folds once, down to the low-water mark; when that summary had to leave
 * facts out for room while turns after it are sent word for word, it folds those turns in too and
 * keeps the wider summary if it leaves out no more facts. These tests judge the views with the
 * suite's own oracle (`expectSafeView`, `pairingProblems`) and look for the facts by their text.
 */

const counter = createTokenCounter();
const summarizer = createExtractiveSummarizer({ countTokens: counter.text });

/** Rounds of lookups, each result holding one reference and some filler, so turns cost far more than their facts. */
function lookups(rounds: number): OpenAIChatMessage[] {
  const messages: OpenAIChatMessage[] = [{ role: 'system', content: 'You look things up.' }];
  const filler = 'The record was read from the archive and checked against the index without any change worth a note. '.repeat(3);
  for (let k = 0; k < rounds; k++) {
    const id = `call_${k}`;
    messages.push(
      { role: 'user', content: `Please look up entry ${k}.` },
      { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'lookup', arguments: JSON.stringify({ entry: k }) } }] },
      { role: 'tool', tool_call_id: id, content: JSON.stringify({ ref: `REF-${4000 + k}-X${k % 10}`, note: filler }) },
      { role: 'assistant', content: 'Found it.' },
    );
  }
  messages.push({ role: 'user', content: 'Which entries did we look up?' });
  return messages;
}

describe('one-shot fold: a summary short of room takes in the turns it would leave word for word', () => {
  test('every reference of a long lookup session is still in the view at a quarter of its tokens', async () => {
    const history = lookups(60);
    const tokens = compressContext(history, { counter }).report.tokensBefore;
    const maxContextTokens = Math.floor(tokens / 4);
    const options = { counter, summarizer, maxContextTokens, compressionThresholdTokens: Math.floor(maxContextTokens * 0.75), keepFirst: 1, keepLast: 6 };
    const result = await compressWithSummary(history, options);
    expectSafeView({ original: history, keepFirst: 1, keepLast: 6, maxContextTokens, result, counter, tailYieldsToSummary: true });
    expect(result.report.tokensAfter).toBeLessThanOrEqual(maxContextTokens);
    const text = JSON.stringify(result.messages);
    const missing = Array.from({ length: 60 }, (_, k) => `REF-${4000 + k}-X${k % 10}`).filter((ref) => !text.includes(ref));
    expect(missing).toEqual([]);
    // The summary covers exactly the messages from the head to where the view goes on word for word.
    const head = result.report.headEnd;
    expect(result.coveredIds.length).toBe(result.report.summary.coveredMessages);
    expect(result.messages[head + 1]).toBe(history[head + result.coveredIds.length]);
  });

  test('a summary that had room for every fact is not widened', async () => {
    const history = lookups(12);
    const tokens = compressContext(history, { counter }).report.tokensBefore;
    const maxContextTokens = Math.floor(tokens * 0.75);
    const options = { counter, maxContextTokens, compressionThresholdTokens: Math.floor(maxContextTokens * 0.75), keepFirst: 1, keepLast: 6 };
    const first = compressContext(history, options).report.summarize!;
    const result = await compressWithSummary(history, { ...options, summarizer });
    expect(result.report.headEnd + result.coveredIds.length).toBe(first.end);
  });

  test('a wider attempt that fails leaves the first summary in force, and the report says why; an abort still rejects', async () => {
    const history = lookups(120);
    const tokens = compressContext(history, { counter }).report.tokensBefore;
    // Tight enough that the first summary leaves facts out, so a wider one is tried.
    const maxContextTokens = Math.floor(tokens / 8);
    const options = { counter, maxContextTokens, compressionThresholdTokens: Math.floor(maxContextTokens * 0.75), keepFirst: 1, keepLast: 6 };
    const planned = compressContext(history, options).report.summarize!;
    let calls = 0;
    const failing: Summarizer = { ...summarizer, summarize: (request) => (++calls === 1 ? summarizer.summarize(request) : Promise.reject(new Error('upstream 503'))) };
    const result = await compressWithSummary(history, { ...options, summarizer: failing });
    expect(calls).toBe(2);
    expect(result.report.summary.applied).toBe(true);
    expect(result.report.headEnd + result.coveredIds.length).toBe(planned.end);
    expect(result.report.notes.some((n) => n.includes('wider summary') && n.includes('upstream 503'))).toBe(true);
    expect(result.report.tokensAfter).toBeLessThanOrEqual(maxContextTokens);

    const controller = new AbortController();
    let seen = 0;
    const aborting: Summarizer = {
      ...summarizer,
      summarize: (request) => {
        if (++seen === 1) return summarizer.summarize(request);
        controller.abort(new Error('caller gave up'));
        return Promise.reject(request.signal!.reason);
      },
    };
    await expect(compressWithSummary(history, { ...options, summarizer: aborting, signal: controller.signal })).rejects.toThrow('caller gave up');
  });

  test('property: random histories and budgets, the view is valid, in order, and within budget whenever the protected part fits', async () => {
    let widened = 0;
    let summarized = 0;
    await fc.assert(fc.asyncProperty(
      validHistory(), fc.integer({ min: 0, max: 1500 }), fc.integer({ min: 0, max: 8 }),
      async (history, extra, keepLast) => {
        const hEnd = expectedHeadEnd(history, 1);
        fc.pre(history.length > hEnd + 2);
        let floor = counter.requestOverhead;
        const pStart = Math.max(hEnd, expectedProtectedStart(history, keepLast));
        history.forEach((m, i) => {
          if (i < hEnd || i >= pStart || m.role === 'system' || m.role === 'developer') floor += counter.message(m, openaiChatLens);
        });
        const maxContextTokens = floor + extra;
        const options = { counter, maxContextTokens, compressionThresholdTokens: Math.max(1, Math.floor(maxContextTokens * 0.75)), keepFirst: 1, keepLast };
        const planned = compressContext(history, options).report.summarize;
        const result = await compressWithSummary(history, { ...options, summarizer });
        expectSafeView({ original: history, keepFirst: 1, keepLast, maxContextTokens, result, counter, tailYieldsToSummary: true });
        expect(result.report.overBudget).toBe(false);
        expect(result.report.tokensAfter).toBeLessThanOrEqual(maxContextTokens);
        if (result.report.summary.applied) {
          summarized++;
          expect(result.coveredIds.length).toBe(result.report.summary.coveredMessages);
          if (planned && result.report.headEnd + result.coveredIds.length > planned.end) widened++;
        }
      },
    ), { ...propertyParams(), numRuns: Math.min(propertyParams().numRuns, 300) });
    expect(summarized).toBeGreaterThan(20);
    expect(widened).toBeGreaterThan(0);
  }, 120_000);
});

describe('one-shot fold with the default threshold', () => {
  test('a window alone summarizes what the view cannot send (75% of the window, as createCompressor)', async () => {
    const history = lookups(60);
    const tokens = compressContext(history, { counter }).report.tokensBefore;
    const window = Math.floor(tokens / 3);
    const result = await compressWithSummary(history, { maxContextTokens: window, counter, summarizer });
    // Judged by the text sent, not by the report: the dropped references are in a summary message.
    const sent = JSON.stringify(result.messages);
    const older = Array.from({ length: 30 }, (_, k) => `REF-${4000 + k}-X${k % 10}`);
    expect(result.coveredIds.length).toBeGreaterThan(0);
    expect(older.filter((ref) => sent.includes(ref)).length).toBeGreaterThan(older.length / 2);
    expect(compressContext(result.messages as OpenAIChatMessage[], { counter }).report.tokensBefore).toBeLessThanOrEqual(window);
  });

  test('an explicit threshold still decides: above the view, nothing is summarized', async () => {
    const history = lookups(20);
    const tokens = compressContext(history, { counter }).report.tokensBefore;
    const result = await compressWithSummary(history, { maxContextTokens: tokens * 2, compressionThresholdTokens: tokens * 3, counter, summarizer });
    expect(result.coveredIds).toEqual([]);
    expect(result.messages).toEqual(history);
  });
});
