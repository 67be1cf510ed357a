import { describe, expect, test } from '@jest/globals';
import { compressContext, compressWithSummary, createExtractiveSummarizer, createTokenCounter, validateMessages } from '../src/index.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { openaiChatLens } from '../src/formats/openai-chat/lens.js';
import { Fingerprints } from '../src/runtime/fingerprints.js';

const idsOf: Fingerprints['idsOf'] = (...args) => new Fingerprints().idsOf(...args);

/**
 * The kept tail (`keepLast`) yields to the summary by default: a summary may stand for its
 * older turns, never for the last user message or what follows it. Where the last few turns'
 * results fill the room, the summary then holds their facts in far fewer tokens than the turns.
 * With `keepLastYields: false` the tail is sent whole and a summary never covers it.
 */

const counter = createTokenCounter();

/** A user request, then rounds of one lookup each whose result is a record with several fields. */
function session(rounds: number): OpenAIChatMessage[] {
  const out: OpenAIChatMessage[] = [{ role: 'system', content: 'You look records up for the user.' }, { role: 'user', content: 'Please read the records I will name, one by one.' }];
  for (let k = 0; k < rounds; k++) {
    const id = `call_${k}`;
    const record = { record_id: `RQ${7100 + k}`, owner: `owner_${k}@example.org`, opened: `2025-0${1 + (k % 9)}-1${k % 10}`, amount: 130 + 17 * k, notes: 'checked against the index; nothing else of note. '.repeat(4) };
    out.push(
      { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'read_record', arguments: JSON.stringify({ record_id: `RQ${7100 + k}` }) } }] },
      { role: 'tool', tool_call_id: id, content: JSON.stringify(record) },
    );
  }
  out.push({ role: 'assistant', content: 'All records are read.' }, { role: 'user', content: 'Thanks. Which record had the largest amount?' });
  return out;
}

const tokensOf = (view: readonly OpenAIChatMessage[]) => view.reduce((t, m) => t + counter.message(m, openaiChatLens), counter.requestOverhead);

describe('the kept tail yields to the summary', () => {
  test('a summary that covers into the kept tail is applied up to the last user message (keepLastYields false: clipped at the tail)', () => {
    const history = session(6);
    const n = history.length;
    const lastUser = n - 1;
    // A summary standing for everything from the head to the last user message.
    const summary = { text: 'Records RQ7100 to RQ7105 were read.', coveredIds: idsOf(history, openaiChatLens, 1, lastUser) };
    const yielding = compressContext(history, { counter, keepFirst: 1, keepLast: 6, summary });
    expect(yielding.report.summary.applied).toBe(true);
    expect(yielding.report.summary.coveredMessages).toBe(lastUser - 1);
    expect(yielding.report.tailStart).toBe(lastUser);
    expect(yielding.messages).toHaveLength(3);
    expect(yielding.messages[2]).toBe(history[lastUser]);
    expect(validateMessages(yielding.messages, 'openai')).toEqual([]);
    expect(yielding.report.notes.some((note) => note.startsWith('keepLast yielded to the summary'))).toBe(true);

    const strict = compressContext(history, { counter, keepFirst: 1, keepLast: 6, keepLastYields: false, summary });
    expect(strict.report.summary.applied).toBe(true);
    expect(strict.report.tailStart).toBe(n - 6);
    expect(strict.report.summary.coveredMessages).toBe(n - 6 - 1);
    expect(strict.messages.slice(-6)).toEqual(history.slice(-6));
  });

  test('compressWithSummary: where the kept tail takes the room, its records go into the summary and more of them are still in view', async () => {
    const history = session(8);
    const lastUser = history.length - 1;
    // The floor (system, last user message) plus a quarter of the rest.
    const floor = tokensOf([history[0], history[lastUser]]);
    const maxContextTokens = floor + Math.floor(0.25 * (tokensOf(history) - floor));
    const summarizer = createExtractiveSummarizer({ countTokens: counter.text });
    const options = { counter, summarizer, maxContextTokens, compressionThresholdTokens: Math.floor(0.75 * maxContextTokens), keepFirst: 1, keepLast: 6 };
    const result = await compressWithSummary(history, options);
    expect(result.report.tokensAfter).toBeLessThanOrEqual(maxContextTokens);
    expect(validateMessages(result.messages, 'openai')).toEqual([]);
    const text = JSON.stringify(result.messages);
    const amounts = Array.from({ length: 8 }, (_, k) => String(130 + 17 * k));
    const kept = amounts.filter((a) => text.includes(a));
    expect(result.messages[result.messages.length - 1]).toBe(history[lastUser]);
    expect(result.report.summary.coveredMessages).toBe(lastUser - 1);

    // Sent whole, the kept tail alone is over the limit (reported), and holds fewer of the records.
    const strict = await compressWithSummary(history, { ...options, keepLastYields: false });
    const strictText = JSON.stringify(strict.messages);
    expect(strict.report.overBudget).toBe(true);
    expect(kept.length).toBeGreaterThan(amounts.filter((a) => strictText.includes(a)).length);
  });
});
