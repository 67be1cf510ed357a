import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { alphanumericId, remapCallIds, type IdPolicy } from '../src/core/remap-ids.js';
import { openaiChatLens } from '../src/formats/openai-chat/lens.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { repairHistory } from '../src/index.js';
import { HAS_CORPUS, loadCorpus } from './helpers/corpus.js';
import { validHistory } from './helpers/arbitraries.js';
import { pairingProblems } from './helpers/oracle.js';
import { propertyParams } from './helpers/property-runs.js';

/** Mistral's id rule, written here from the provider notes (not taken from src). */
const NINE_ALNUM = /^[a-zA-Z0-9]{9}$/;
const mistralLike: IdPolicy = { unique: true, pattern: NINE_ALNUM, mint: (_, n) => alphanumericId(n) };
const uniqueOnly: IdPolicy = { unique: true, mint: (original, n) => `${original}_${n}` };

/** Every call id of a history, in order (repeats included). */
const callIds = (messages: readonly OpenAIChatMessage[]) => messages.flatMap((m) => (Array.isArray(m.tool_calls) ? m.tool_calls.map((c) => c.id) : []));

/** For each tool message, the name of the call it answers, found by walking back to the nearest assistant with that id. */
function answeredNames(messages: readonly OpenAIChatMessage[]): string[] {
  const out: string[] = [];
  messages.forEach((m, i) => {
    if (m.role !== 'tool') return;
    for (let j = i - 1; j >= 0; j--) {
      const call = messages[j].tool_calls?.find((c) => c.id === m.tool_call_id);
      if (call) { out.push(`${call.function.name}:${JSON.stringify(m.content)}`); return; }
    }
    out.push('(none)');
  });
  return out;
}

describe('remapCallIds', () => {
  test('alphanumericId gives distinct 9-character alphanumeric ids', () => {
    const ids = new Set(Array.from({ length: 5000 }, (_, n) => alphanumericId(n)));
    expect(ids.size).toBe(5000);
    for (const id of ids) expect(id).toMatch(NINE_ALNUM);
  });

  test('a reused id in a later turn becomes a new id in that call and its result only', () => {
    const input: OpenAIChatMessage[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'a', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'first' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'b', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'second' },
      { role: 'assistant', content: 'done' },
    ];
    const { messages, actions } = remapCallIds(input, openaiChatLens, uniqueOnly);
    expect(callIds(messages as OpenAIChatMessage[])).toEqual(['call_1', 'call_1_0']);
    expect((messages[4] as OpenAIChatMessage).tool_call_id).toBe('call_1_0');
    expect(messages[1]).toBe(input[1]);
    expect(messages[2]).toBe(input[2]);
    expect(actions.map((a) => [a.action, a.index, a.id])).toEqual([['renamed-id', 3, 'call_1_0']]);
    expect(input[3].tool_calls![0].id).toBe('call_1'); // the caller's objects are not changed
  });

  test('a history whose ids already fit comes back as the same array', () => {
    const input: OpenAIChatMessage[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'abcDEF123', type: 'function', function: { name: 'a', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'abcDEF123', content: 'x' },
    ];
    expect(remapCallIds(input, openaiChatLens, mistralLike).messages).toBe(input);
  });

  test('property: after mapping, ids fit the pattern, are unique, and every result still answers the same call', () => {
    fc.assert(fc.property(validHistory(), (messages) => {
      const { messages: out } = remapCallIds(messages, openaiChatLens, mistralLike);
      const view = out as OpenAIChatMessage[];
      const ids = callIds(view);
      for (const id of ids) expect(id).toMatch(NINE_ALNUM);
      expect(new Set(ids).size).toBe(ids.length);
      expect(pairingProblems(view)).toEqual(pairingProblems(messages));
      expect(answeredNames(view)).toEqual(answeredNames(messages));
      expect(view).toHaveLength(messages.length);
    }), propertyParams());
  });

  (HAS_CORPUS ? test : test.skip)('the shared corpus: repairHistory with ids unique makes every id unique and keeps every pair', () => {
    let renamed = 0;
    for (const conv of loadCorpus()) {
      const { messages, actions } = repairHistory(conv.messages, { format: 'openai', provider: { name: 'unique-ids', lens: openaiChatLens, rules: [], ids: uniqueOnly } });
      const view = messages as OpenAIChatMessage[];
      const ids = callIds(view);
      expect(new Set(ids).size).toBe(ids.length);
      expect(pairingProblems(view)).toEqual([]);
      expect(answeredNames(view)).toEqual(answeredNames(conv.messages));
      renamed += actions.filter((a) => a.action === 'renamed-id').length;
    }
    expect(renamed).toBeGreaterThan(0); // the corpus reuses ids; the count is printed by the issue note, not asserted
  });
});
