import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { compressContext, createTokenCounter } from '../../src/index.js';
import type { AnthropicMessage } from '../../src/formats/anthropic/types.js';
import type { GeminiContent } from '../../src/formats/gemini/types.js';
import { validAnthropicHistory } from '../helpers/anthropic-arbitraries.js';
import { validGeminiHistory } from '../helpers/gemini-arbitraries.js';
import { formatPropertyParams } from '../helpers/property-runs.js';

/**
 * Anthropic and Gemini views must lead with a user turn, and a model turn must follow a user turn
 * (or tool results). Where a cut leaves a model turn first, the planner puts a short user note of
 * what was left out before it. That note is needed only there: a model turn that follows a user
 * turn the view keeps (the held last user turn, the head) needs none. And it is paid for like
 * anything else: it is never taken where keeping the turns it would stand for costs less, so a
 * view is never larger than the history it was made from.
 *
 * Judged from outside: a message of the view that is not one of the input's own objects is a
 * note; the role of the view message before it; the report's token figures.
 */

const counter = createTokenCounter();

interface Case<M> { readonly name: string; readonly format: 'anthropic' | 'gemini'; readonly history: fc.Arbitrary<M[]> }

const optionsArb = fc.record({
  keepFirst: fc.integer({ min: 0, max: 2 }),
  keepLast: fc.integer({ min: 0, max: 6 }),
  permille: fc.integer({ min: 0, max: 1100 }),
  yields: fc.boolean(),
});

function checkNotes<M extends { role?: string }>(c: Case<M>) {
  fc.assert(
    fc.property(c.history, optionsArb, (history, o) => {
      const full = compressContext(history, { format: c.format, counter }).report.tokensBefore;
      const { messages: view, report } = compressContext(history, {
        format: c.format, counter, keepFirst: o.keepFirst, keepLast: o.keepLast, keepLastYields: o.yields,
        maxContextTokens: Math.max(1, Math.floor((full * o.permille) / 1000)),
      });
      const own = new Set<unknown>(history);
      view.forEach((m, k) => {
        if (own.has(m)) return;
        // A note: only first, or after a turn that is not the user's.
        if (k > 0) expect({ at: k, before: view[k - 1].role }).not.toEqual({ at: k, before: 'user' });
      });
      expect(report.tokensAfter).toBeLessThanOrEqual(report.tokensBefore);
    }),
    formatPropertyParams(),
  );
}

describe('the note of what a cut left out is put only where the format needs it, and only where it costs less than the turns it stands for', () => {
  test('anthropic: property', () => checkNotes<AnthropicMessage>({ name: 'anthropic', format: 'anthropic', history: validAnthropicHistory() }));
  test('gemini: property', () => checkNotes<GeminiContent>({ name: 'gemini', format: 'gemini', history: validGeminiHistory() }));

  const big = 'line of output '.repeat(200);
  test('anthropic: the tool rounds after the kept last user turn yield without a note', () => {
    const history: AnthropicMessage[] = [
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'first answer' },
      { role: 'user', content: 'second question' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'search', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: big }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_2', name: 'search', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: 'short' }] },
    ];
    const { messages } = compressContext(history, { format: 'anthropic', maxContextTokens: 200, keepFirst: 0, keepLast: 0, keepLastYields: true });
    expect(messages).toEqual([history[2], history[5], history[6]]);
    expect(messages.every((m) => history.includes(m))).toBe(true);
  });

  test('gemini: the same', () => {
    const history: GeminiContent[] = [
      { role: 'user', parts: [{ text: 'first question' }] },
      { role: 'model', parts: [{ text: 'first answer' }] },
      { role: 'user', parts: [{ text: 'second question' }] },
      { role: 'model', parts: [{ functionCall: { name: 'search', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'search', response: { result: big } } }] },
      { role: 'model', parts: [{ functionCall: { name: 'search', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'search', response: { result: 'short' } } }] },
    ];
    const { messages } = compressContext(history, { format: 'gemini', maxContextTokens: 200, keepFirst: 0, keepLast: 0, keepLastYields: true });
    expect(messages.every((m) => history.includes(m))).toBe(true);
    expect(messages[0]).toBe(history[2]);
  });

  test('anthropic: a one-word user turn is kept rather than replaced by a longer note', () => {
    const history: AnthropicMessage[] = [{ role: 'user', content: 'ok' }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'ok' }];
    const { messages, report } = compressContext(history, { format: 'anthropic', maxContextTokens: 1, keepFirst: 0, keepLast: 2, keepLastYields: false });
    expect(messages).toEqual(history);
    expect(report.tokensAfter).toBe(report.tokensBefore);
    expect(report.overBudget).toBe(true);
  });
});
