import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { repairHistory } from '../src/formats/profiles.js';
import { MISSING_RESULT_TEXT } from '../src/core/repair.js';
import { validateMessages } from '../src/formats/profiles.js';
import { openaiProfile } from '../src/formats/openai-chat/profile.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { brokenHistory, validHistory } from './helpers/arbitraries.js';
import { propertyParams } from './helpers/property-runs.js';

const call = (id: string, name = 'lookup') => ({ id, type: 'function', function: { name, arguments: '{}' } });
const calls = (...ids: string[]): OpenAIChatMessage => ({ role: 'assistant', content: null, tool_calls: ids.map((id) => call(id)) });
const result = (id: string, content = `result of ${id}`): OpenAIChatMessage => ({ role: 'tool', tool_call_id: id, content });
const user = (content: string): OpenAIChatMessage => ({ role: 'user', content });
const validate = (messages: readonly OpenAIChatMessage[]) => validateMessages(messages, openaiProfile);
const synthetic = (id: string): OpenAIChatMessage => ({ role: 'tool', tool_call_id: id, content: MISSING_RESULT_TEXT });

describe('repairHistory: each fault kind', () => {
  test('a missing result gets a synthetic error result right after the run, and the user message after it is reported', () => {
    const input = [user('go'), calls('call_a', 'call_b'), result('call_b'), user('next')];
    const { messages, actions } = repairHistory(input, { format: 'openai' });
    expect(messages).toEqual([input[0], input[1], input[2], synthetic('call_a'), input[3]]);
    [0, 1, 2].forEach((i) => expect(messages[i]).toBe(input[i]));
    expect(messages[4]).toBe(input[3]);
    expect(actions.map((a) => [a.action, a.index, a.id])).toEqual([['added-result', 1, 'call_a'], ['reported', 3, 'call_a']]);
    expect(actions[0].detail).toContain('call_a (lookup) had no result');
    expect(validate(input)).not.toEqual([]);
    expect(validate(messages)).toEqual([]);
  });

  test('a call with no result at all, at the end of the history', () => {
    const input = [user('go'), calls('call_a')];
    const { messages, actions } = repairHistory(input, { format: 'openai' });
    expect(messages).toEqual([...input, synthetic('call_a')]);
    expect(actions.map((a) => a.action)).toEqual(['added-result']);
  });

  test('a legacy function call with no result gets a function message with its name', () => {
    const input: OpenAIChatMessage[] = [user('time?'), { role: 'assistant', content: null, function_call: { name: 'clock', arguments: '{}' } }, user('hello?')];
    const { messages, actions } = repairHistory(input, { format: 'openai' });
    expect(messages[2]).toEqual({ role: 'function', name: 'clock', content: MISSING_RESULT_TEXT });
    expect(actions.map((a) => [a.action, a.index])).toEqual([['added-result', 1], ['reported', 2]]);
    expect(validate(messages)).toEqual([]);
  });

  test('a tool message first is removed as an orphan', () => {
    const input = [result('call_x'), { role: 'system', content: 'rules' }, user('hi')];
    const { messages, actions } = repairHistory(input, { format: 'openai' });
    expect(messages).toHaveLength(2);
    expect(messages[0]).toBe(input[1]);
    expect(messages[1]).toBe(input[2]);
    expect(actions).toEqual([{ action: 'removed-orphan', index: 0, id: 'call_x', detail: 'tool result call_x answers no preceding call' }]);
  });

  test('a result inside a run that answers no call of the turn is removed', () => {
    const input = [user('go'), calls('call_a'), result('call_zz'), result('call_a'), { role: 'assistant', content: 'ok' }];
    const { messages, actions } = repairHistory(input, { format: 'openai' });
    expect(messages).toEqual([input[0], input[1], input[3], input[4]]);
    expect(actions.map((a) => [a.action, a.index, a.id])).toEqual([['removed-orphan', 2, 'call_zz']]);
    expect(actions[0].detail).toContain('messages[1]');
    expect(validate(messages)).toEqual([]);
  });

  test('a duplicate result is removed and the first one kept', () => {
    const input = [user('go'), calls('call_a', 'call_b'), result('call_a', 'first'), result('call_b'), result('call_a', 'second')];
    const { messages, actions } = repairHistory(input, { format: 'openai' });
    expect(messages).toEqual(input.slice(0, 4));
    messages.forEach((m, i) => expect(m).toBe(input[i]));
    expect(actions.map((a) => [a.action, a.index, a.id])).toEqual([['removed-duplicate', 4, 'call_a']]);
    expect(actions[0].detail).toContain('messages[2]');
  });

  test('results separated from their call by a user message (the user wrote while the tools ran): moved back after their call on their ids, nothing lost', () => {
    const input = [user('go'), calls('call_a', 'call_b'), user('wait'), result('call_a'), result('call_b'), user('next')];
    const { messages, actions } = repairHistory(input, { format: 'openai' });
    expect(messages).toEqual([input[0], input[1], input[3], input[4], input[2], input[5]]);
    messages.forEach((m, i) => expect(m).toBe([input[0], input[1], input[3], input[4], input[2], input[5]][i]));
    expect(actions.map((a) => [a.action, a.index, a.id])).toEqual([['moved-result', 3, 'call_a'], ['moved-result', 4, 'call_b']]);
    expect(validate(messages)).toEqual([]);
  });

  test('a result after a user message that fits no open call by id is not moved: its call gets the synthetic result, the result is removed, both reported', () => {
    const input = [user('go'), calls('call_a'), user('wait'), result('call_z'), user('next')];
    const { messages, actions } = repairHistory(input, { format: 'openai' });
    expect(messages).toEqual([input[0], input[1], synthetic('call_a'), input[2], input[4]]);
    expect(actions.map((a) => [a.action, a.index, a.id])).toEqual([['added-result', 1, 'call_a'], ['reported', 2, 'call_a'], ['removed-orphan', 3, 'call_z']]);
    expect(validate(messages)).toEqual([]);
  });

  test('a result after a later call turn is not moved across it (that turn is not a bystander)', () => {
    const input = [user('go'), calls('call_a'), user('wait'), calls('call_b'), result('call_b'), result('call_a')];
    const { messages, actions } = repairHistory(input, { format: 'openai' });
    expect(actions.filter((a) => a.action === 'moved-result')).toEqual([]);
    expect(validate(messages)).toEqual([]);
  });

  test('a valid history comes back as the same array and objects with no action', () => {
    const input = [user('go'), calls('call_a'), result('call_a'), { role: 'assistant', content: 'ok' }];
    const { messages, actions } = repairHistory(input, { format: 'openai' });
    expect(actions).toEqual([]);
    // Nothing to fix: the very same array comes back (no copy on the hot path).
    expect(messages).toBe(input);
    messages.forEach((m, i) => expect(m).toBe(input[i]));
    expect(messages).toHaveLength(input.length);
  });
});

/** Independent judge of OpenAI Chat pairing: each assistant's tool_calls are answered, each exactly once, by the tool messages right after it, and no tool message stands anywhere else. */
function pairingOk(messages: readonly OpenAIChatMessage[]): boolean {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as { role: string; tool_calls?: { id: string }[]; tool_call_id?: string };
    if (m.role === 'tool') return false; // a tool message not consumed by the turn before it
    if (m.role !== 'assistant' || !m.tool_calls || m.tool_calls.length === 0) continue;
    const open = new Set(m.tool_calls.map((c) => c.id));
    let j = i + 1;
    for (; j < messages.length && (messages[j] as { role: string }).role === 'tool'; j++) {
      const id = (messages[j] as { tool_call_id?: string }).tool_call_id ?? '';
      if (!open.delete(id)) return false;
    }
    if (open.size > 0) return false;
    i = j - 1;
  }
  return true;
}

describe('repairHistory: one call id used twice in one turn', () => {
  test('the later call and the result paired with it get a fresh id (results pair in order); ids reused in a later turn are left alone', () => {
    const twice: OpenAIChatMessage = { role: 'assistant', content: null, tool_calls: [call('call_a', 'f'), call('call_a', 'g')] };
    const input = [user('go'), twice, result('call_a', 'A'), result('call_a', 'B'), user('next'), calls('call_a'), result('call_a', 'C')];
    expect(validate(input).map((v) => v.rule)).toContain('call-id-duplicate');
    for (const provider of [undefined, 'openai'] as const) {
      const { messages, actions } = repairHistory(input, { format: 'openai', ...(provider ? { provider } : {}) });
      expect(validate(messages)).toEqual([]);
      expect(pairingOk(messages)).toBe(true);
      const ids = (messages[1] as { tool_calls: { id: string; function: { name: string } }[] }).tool_calls.map((c) => [c.function.name, c.id]);
      expect(ids[0]).toEqual(['f', 'call_a']);
      expect(ids[1][1]).not.toBe('call_a');
      // The second result (B) answers the second call (g): paired in order.
      expect(messages[3]).toEqual({ ...input[3], tool_call_id: ids[1][1] });
      expect(messages[2]).toBe(input[2]);
      [0, 4, 5, 6].forEach((i) => expect(messages[i]).toBe(input[i]));
      expect(actions.map((a) => [a.action, a.index])).toEqual([['renamed-id', 1]]);
      expect(actions[0].detail).toContain('call_a');
    }
  });
});

describe('repairHistory: one call id used twice in one turn (property)', () => {
  test('property: a turn whose calls share an id comes out with one id per call, every result kept and paired in order', () => {
    fc.assert(fc.property(validHistory(), fc.nat(), (history, pick) => {
      const turns = history.flatMap((m, i) => ((m as { tool_calls?: unknown[] }).tool_calls?.length ?? 0) >= 2 ? [i] : []);
      fc.pre(turns.length > 0);
      const at = turns[pick % turns.length];
      const opener = history[at] as { tool_calls: { id: string }[] };
      const [a, b] = opener.tool_calls.map((c) => c.id);
      // Call b takes a's id, and so does b's result: the turn pairs in order (a's result comes first).
      let end = at + 1;
      while (end < history.length && history[end].role === 'tool') end++;
      const results = history.slice(at + 1, end) as { tool_call_id: string }[];
      fc.pre(results.findIndex((r) => r.tool_call_id === a) < results.findIndex((r) => r.tool_call_id === b));
      const input = history.map((m, i) => {
        if (i === at) return { ...m, tool_calls: opener.tool_calls.map((c, k) => (k === 1 ? { ...c, id: a } : c)) } as OpenAIChatMessage;
        if (i > at && i < end && (m as { tool_call_id?: string }).tool_call_id === b) return { ...m, tool_call_id: a } as OpenAIChatMessage;
        return m;
      });
      const { messages } = repairHistory(input, { format: 'openai' });
      expect(pairingOk(messages)).toBe(true);
      expect(messages).toHaveLength(input.length);
      const out = messages[at] as { tool_calls: { id: string }[] };
      expect(new Set(out.tool_calls.map((c) => c.id)).size).toBe(out.tool_calls.length);
      // b's result (its content) answers the renamed call b.
      const bContent = (history.slice(at + 1, end).find((r) => (r as { tool_call_id?: string }).tool_call_id === b) as { content: unknown }).content;
      const answer = messages.slice(at + 1, end).find((r) => (r as { tool_call_id?: string }).tool_call_id === out.tool_calls[1].id) as { content: unknown };
      expect(answer.content).toEqual(bContent);
    }), propertyParams());
  });
});

describe('repairHistory: a user message written while the tools ran', () => {
  test('property: a user message put between a call turn and its results comes out after them; every result and the user message are kept, the pairing is valid', () => {
    fc.assert(fc.property(validHistory(), fc.nat(), fc.nat(), (history, pickTurn, pickGap) => {
      const turns = history.flatMap((m, i) => ((m as { tool_calls?: unknown[] }).tool_calls?.length ? [i] : []));
      fc.pre(turns.length > 0);
      const at = turns[pickTurn % turns.length];
      let end = at + 1;
      while (end < history.length && history[end].role === 'tool') end++;
      fc.pre(end > at + 1);
      const gap = at + 1 + (pickGap % (end - at - 1)); // before one of the turn's results
      const interjection = user('also, check the other one');
      const input = [...history.slice(0, gap), interjection, ...history.slice(gap)];
      const { messages } = repairHistory(input, { format: 'openai' });
      expect(pairingOk(messages)).toBe(true);
      for (const m of input) if (m.role === 'tool' || m === interjection) expect(messages).toContain(m);
      expect(messages.indexOf(interjection)).toBeGreaterThan(messages.indexOf(history[end - 1]));
    }), propertyParams());
  });
});

describe('repairHistory: a legacy function_call answered after a user message', () => {
  test('no ids on either side: the function message right after that user message, of the called name, goes back after its call; another name, the old rule', () => {
    const fcall: OpenAIChatMessage = { role: 'assistant', content: null, function_call: { name: 'get_time', arguments: '{}' } };
    const answer: OpenAIChatMessage = { role: 'function', name: 'get_time', content: '12:00' };
    const wait = user('wait');
    const { messages, actions } = repairHistory([user('go'), fcall, wait, answer], { format: 'openai' });
    expect(actions.map((a) => [a.action, a.index])).toEqual([['moved-result', 3]]);
    expect(messages.slice(1)).toEqual([fcall, answer, wait]);
    expect(validate(messages)).toEqual([]);
    const other = repairHistory([user('go'), fcall, wait, { ...answer, name: 'get_date' }], { format: 'openai' });
    expect(other.actions.map((a) => a.action)).not.toContain('moved-result');
    expect(validate(other.messages)).toEqual([]);
  });
});

describe('repairHistory: properties', () => {
  test('a broken history comes out valid; untouched messages are the same objects in order', () => {
    fc.assert(fc.property(brokenHistory(), (input) => {
      const { messages, actions } = repairHistory(input, { format: 'openai' });
      expect(validate(messages)).toEqual([]);
      const removed = new Set(actions.filter((a) => a.action === 'removed-orphan' || a.action === 'removed-duplicate').map((a) => a.index));
      const moved = new Set(actions.filter((a) => a.action === 'moved-result').map((a) => a.index));
      const rekeyed = new Set(actions.filter((a) => a.action === 'rekeyed-result' || a.action === 'moved-result').map((a) => a.index));
      const originals = new Set(input);
      // Every message not removed or moved keeps its relative order; moved ones are reported.
      const expected = input.filter((_, i) => !removed.has(i) && !moved.has(i) && !rekeyed.has(i));
      const kept = messages.filter((m) => originals.has(m) && !moved.has(input.indexOf(m)));
      expect(kept).toHaveLength(expected.length);
      expect(kept.every((m, k) => m === expected[k])).toBe(true);
      const added = messages.filter((m) => !originals.has(m) && m.content === MISSING_RESULT_TEXT);
      expect(added).toHaveLength(actions.filter((a) => a.action === 'added-result').length);
      // Anything else new is a re-keyed copy of a reported result: same content, now with the call's id.
      const copies = messages.filter((m) => !originals.has(m) && m.content !== MISSING_RESULT_TEXT);
      expect(copies.every((m) => m.role === 'tool' && [...rekeyed].some((i) => input[i].content === m.content))).toBe(true);
      expect(repairHistory(messages, { format: 'openai' }).actions).toEqual([]);
    }), propertyParams());
  });

  test('a valid history needs no repair', () => {
    fc.assert(fc.property(validHistory(), (input) => {
      const { messages, actions } = repairHistory(input, { format: 'openai' });
      expect(actions).toEqual([]);
      expect(messages).toHaveLength(input.length);
      expect(messages.every((m, i) => m === input[i])).toBe(true);
    }), propertyParams());
  });
});
