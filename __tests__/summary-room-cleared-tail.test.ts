import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { compressContext, compressWithSummary, createExtractiveSummarizer, createTokenCounter, validateMessages } from '../src/index.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { openaiChatLens } from '../src/formats/openai-chat/lens.js';
import { Fingerprints } from '../src/runtime/fingerprints.js';
import { pairingProblems } from './helpers/oracle.js';
import { propertyParams } from './helpers/property-runs.js';

/**
 * When the head and the kept tail alone are over the budget, `toolOutputTrim` clears the kept
 * tail's bulky results (oldest first, never the newest) until they fit. The room that clearing
 * leaves is the summary's: a summary of the turns before the tail is sent there, not left out as
 * if the tail were sent whole. Clearing goes no further for it (the tail clears what it must).
 */
const counter = createTokenCounter();
const tokensOf = (view: readonly OpenAIChatMessage[]) => view.reduce((t, m) => t + counter.message(m, openaiChatLens), counter.requestOverhead);
/** The cleared form of a result, as the docs state it (`toolOutputTrim`). */
const cleared = (m: OpenAIChatMessage): OpenAIChatMessage => ({ ...m, content: `[tool result cleared to save context: ${String(m.content).length} characters omitted]` });

const POLICY = Array.from({ length: 40 }, (_, k) => `Rule ${k + 1}: answer briefly and confirm each change before making it.`).join('\n');

/** Rounds of lookups (each result holding an id, an email and a date), then a tail whose first result is bulky. */
function history(rounds: number, logLines: number): OpenAIChatMessage[] {
  const out: OpenAIChatMessage[] = [{ role: 'system', content: POLICY }];
  for (let k = 0; k < rounds; k++) {
    const id = `R-${4100 + k * 37}`;
    out.push(
      { role: 'user', content: `Please look up record ${id}.` },
      { role: 'assistant', content: null, tool_calls: [{ id: `call_${k}`, type: 'function', function: { name: 'lookup', arguments: JSON.stringify({ record_id: id }) } }] },
      { role: 'tool', tool_call_id: `call_${k}`, content: JSON.stringify({ record_id: id, owner: `owner${k}@example.org`, created: `2024-03-${String(10 + k).padStart(2, '0')}` }) },
      { role: 'assistant', content: `Record ${id} is on file.` },
    );
  }
  const log = Array.from({ length: logLines }, (_, k) => `line ${k}: step completed without errors`).join('\n');
  out.push(
    { role: 'user', content: 'Fetch the latest job log.' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_log', type: 'function', function: { name: 'fetch_log', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'call_log', content: log },
    { role: 'assistant', content: 'The job finished without errors.' },
    { role: 'user', content: 'Thanks. Which record did I ask about first?' },
  );
  return out;
}

/** Head (system) and the last `keepLast` messages, with the given tail message cleared, plus overhead. */
function protectedTokens(h: readonly OpenAIChatMessage[], keepLast: number, clear: number | undefined): number {
  const tail = h.slice(h.length - keepLast).map((m, k) => (h.length - keepLast + k === clear ? cleared(m) : m));
  return tokensOf([h[0], ...tail]);
}

describe('the room clearing the kept tail leaves holds the summary', () => {
  test('compressWithSummary: a summary of the earlier rounds is sent beside the cleared tail, within the budget', async () => {
    const h = history(6, 120);
    const bulky = h.length - 3;
    const whole = protectedTokens(h, 5, undefined);
    const afterClearing = protectedTokens(h, 5, bulky);
    const maxContextTokens = afterClearing + 160;
    // The tail as it came is over the budget: its bulky result must be cleared.
    expect(whole).toBeGreaterThan(maxContextTokens);
    const { messages, report } = await compressWithSummary(h, {
      maxContextTokens, compressionThresholdTokens: Math.floor(maxContextTokens * 0.75), keepFirst: 1, keepLast: 5, toolOutputTrim: { minChars: 500 }, counter,
      summarizer: createExtractiveSummarizer(),
    });
    expect(validateMessages(messages, 'openai')).toEqual([]);
    expect(report.tokensAfter).toBeLessThanOrEqual(maxContextTokens);
    expect(tokensOf(messages)).toBe(report.tokensAfter);
    // The bulky result is not sent whole: the kept tail yields its round to the summary (the
    // default, keepLastYields), or, where the summary cannot take it, the result is cleared.
    const coveredUpTo = report.headEnd + report.summary.coveredMessages;
    expect(bulky < coveredUpTo || report.collapsed.some((c) => c.index === bulky)).toBe(true);
    expect(report.collapsed.every((c) => c.index === bulky)).toBe(true);
    expect(report.summary.applied).toBe(true);
    const summary = messages.find((m) => typeof m.content === 'string' && m.content.startsWith('[Summary of'));
    expect(summary).toBeDefined();
    // The newest round's facts at least (the ledger keeps the most recent first).
    expect(String(summary!.content)).toContain(`R-${4100 + 5 * 37}`);

    // With keepLastYields false the kept tail is sent whole: its bulky result is cleared instead.
    const strict = await compressWithSummary(h, {
      maxContextTokens, compressionThresholdTokens: Math.floor(maxContextTokens * 0.75), keepFirst: 1, keepLast: 5, keepLastYields: false, toolOutputTrim: { minChars: 500 }, counter,
      summarizer: createExtractiveSummarizer(),
    });
    expect(validateMessages(strict.messages, 'openai')).toEqual([]);
    expect(strict.report.tokensAfter).toBeLessThanOrEqual(maxContextTokens);
    expect(strict.report.collapsed.map((c) => c.index)).toEqual([bulky]);
    expect(strict.report.summary.applied).toBe(true);
  });

  test('property: a summary that fits the room the minimal clearing leaves is applied; the view is within budget and clears no more', () => {
    let applied = 0;
    fc.assert(fc.property(
      fc.integer({ min: 1, max: 8 }), fc.integer({ min: 40, max: 300 }), fc.integer({ min: 0, max: 400 }), fc.integer({ min: 1, max: 120 }),
      (rounds, logLines, extra, words) => {
        const h = history(rounds, logLines);
        const bulky = h.length - 3;
        const afterClearing = protectedTokens(h, 5, bulky);
        const maxContextTokens = afterClearing + extra;
        fc.pre(protectedTokens(h, 5, undefined) > maxContextTokens);
        const text = Array.from({ length: words }, (_, k) => `item-${k} value ${k * 13}`).join('\n');
        const coveredIds = new Fingerprints().idsOf(h, openaiChatLens, 1, h.length - 5);
        const { messages, report } = compressContext(h, { counter, keepFirst: 1, keepLast: 5, maxContextTokens, toolOutputTrim: { minChars: 500 }, summary: { text, coveredIds }, format: 'openai' });
        expect(pairingProblems(messages)).toEqual([]);
        expect(report.overBudget).toBe(false);
        expect(report.tokensAfter).toBeLessThanOrEqual(maxContextTokens);
        // Only the bulky result is cleared, as without a summary.
        expect(report.collapsed.map((c) => c.index)).toEqual([bulky]);
        // The summary as sent: its frame around the text, priced alone.
        const frameOf = (t: string) => openaiChatLens.summaryMessage(`[Summary of ${h.length - 6} earlier messages of this conversation, which are not repeated here]\n${t}`, 'user');
        const fits = counter.message(frameOf(text), openaiChatLens) <= maxContextTokens - afterClearing;
        if (fits) {
          expect({ extra, words, applied: report.summary.applied }).toEqual({ extra, words, applied: true });
          applied++;
        }
      },
    ), propertyParams());
    expect(applied).toBeGreaterThan(10);
  });
});
