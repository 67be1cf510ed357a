import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { repairHistory, validateMessages } from '../src/index.js';
import { buildGroups } from '../src/core/groups.js';
import { openaiChatLens } from '../src/formats/openai-chat/lens.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { anyHistory, validHistory } from './helpers/arbitraries.js';
import { expectedRepair, pairingProblems, shapeProblems, unitStarts } from './helpers/oracle.js';
import { propertyParams } from './helpers/property-runs.js';

const call = (id: string, name = 'f') => ({ id, type: 'function', function: { name, arguments: '{}' } });
const PAIRING_RULES = new Set(['call-unanswered', 'result-orphan', 'result-duplicate', 'call-id-duplicate']);

/** The oracle judges views on its own; first it must itself be right on cases known by hand. */
describe('the test oracle', () => {
  const cases: [string, OpenAIChatMessage[], boolean][] = [
    ['parallel calls answered out of order', [{ role: 'user', content: 'q' }, { role: 'assistant', content: null, tool_calls: [call('a'), call('b')] }, { role: 'tool', tool_call_id: 'b', content: '2' }, { role: 'tool', tool_call_id: 'a', content: '1' }], true],
    ['a call left unanswered', [{ role: 'assistant', content: null, tool_calls: [call('a'), call('b')] }, { role: 'tool', tool_call_id: 'a', content: '1' }], false],
    ['a tool message with no call before it', [{ role: 'user', content: 'q' }, { role: 'tool', tool_call_id: 'a', content: '1' }], false],
    ['a user message between a call and its result', [{ role: 'assistant', content: null, tool_calls: [call('a')] }, { role: 'user', content: 'q' }, { role: 'tool', tool_call_id: 'a', content: '1' }], false],
    ['a call answered twice', [{ role: 'assistant', content: null, tool_calls: [call('a')] }, { role: 'tool', tool_call_id: 'a', content: '1' }, { role: 'tool', tool_call_id: 'a', content: '1' }], false],
    ['an id reused by a later turn', [{ role: 'assistant', content: null, tool_calls: [call('a')] }, { role: 'tool', tool_call_id: 'a', content: '1' }, { role: 'assistant', content: null, tool_calls: [call('a')] }, { role: 'tool', tool_call_id: 'a', content: '2' }], true],
    ['a legacy function call and its answer', [{ role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } }, { role: 'function', name: 'f', content: '1' }], true],
    ['a legacy answer with the wrong name', [{ role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } }, { role: 'function', name: 'g', content: '1' }], false],
  ];
  test.each(cases)('%s', (_name, history, valid) => {
    expect(pairingProblems(history).length === 0).toBe(valid);
  });

  const shapes: [string, unknown[], number][] = [
    ['text, parts, null content on a call', [{ role: 'user', content: [{ type: 'text', text: 'q' }] }, { role: 'assistant', content: null, tool_calls: [call('a')] }, { role: 'tool', tool_call_id: 'a', content: '' }], 0],
    ['null content on a user message', [{ role: 'user', content: null }], 1],
    ['no content on an assistant message making no call', [{ role: 'assistant' }], 1],
    ['tool_calls on a tool message', [{ role: 'tool', tool_call_id: 'a', content: '1', tool_calls: [call('b')] }], 1],
    ['a function_call on a user message', [{ role: 'user', content: 'q', function_call: { name: 'f', arguments: '{}' } }], 1],
    ['a tool message without a string id', [{ role: 'tool', tool_call_id: 3, content: '1' }], 1],
    ['a function message without a name', [{ role: 'function', content: '1' }], 1],
  ];
  test.each(shapes)('shape: %s', (_name, history, problems) => {
    expect(shapeProblems(history)).toHaveLength(problems);
  });

  test('units: a call turn holds its answers and the reply after them; everything else stands alone', () => {
    const history: OpenAIChatMessage[] = [
      { role: 'system', content: 's' }, { role: 'user', content: 'q' },
      { role: 'assistant', content: null, tool_calls: [call('a'), call('b')] }, { role: 'tool', tool_call_id: 'a', content: '1' }, { role: 'tool', tool_call_id: 'b', content: '2' },
      { role: 'assistant', content: 'done' }, { role: 'assistant', content: 'and more' }, { role: 'user', content: 'q2' },
    ];
    expect(unitStarts(history)).toEqual([0, 1, 2, 6, 7]);
  });

  test('expected repair: orphans and duplicates go, a missing result is added after the run', () => {
    const history: OpenAIChatMessage[] = [
      { role: 'tool', tool_call_id: 'x', content: 'orphan' },
      { role: 'assistant', content: null, tool_calls: [call('a'), call('b')] }, { role: 'tool', tool_call_id: 'a', content: '1' }, { role: 'tool', tool_call_id: 'a', content: 'dup' },
      { role: 'user', content: 'q' },
    ];
    const { messages, from } = expectedRepair(history);
    expect(from).toEqual([1, 2, -1, 4]);
    expect(messages[2]).toMatchObject({ role: 'tool', tool_call_id: 'b' });
  });
});

/** Two implementations written apart must agree; a pairing bug on either side shows up here. */
describe('the oracle and the project agree', () => {
  test('on whether random histories (valid and broken) break a pairing rule', () => {
    fc.assert(fc.property(anyHistory(), (history) => {
      const ours = validateMessages(history, 'openai').filter((v) => PAIRING_RULES.has(v.rule));
      expect(ours.length === 0).toBe(pairingProblems(history).length === 0);
    }), propertyParams());
  });

  test('on what a repair keeps, removes and adds', () => {
    fc.assert(fc.property(anyHistory(), (history) => {
      const repaired = repairHistory(history, { format: 'openai' }).messages;
      const expected = expectedRepair(history);
      expect(repaired.length).toBe(expected.messages.length);
      expected.from.forEach((i, k) => {
        if (i >= 0) expect(repaired[k]).toBe(history[i]);
        else expect(repaired[k]).toMatchObject({ role: expected.messages[k].role });
      });
      expect(pairingProblems(repaired)).toEqual([]);
    }), propertyParams());
  });

  test('on where the atomic units of valid histories start', () => {
    fc.assert(fc.property(validHistory(), (history) => {
      expect(buildGroups(history, openaiChatLens).groups.map((g) => g.start)).toEqual(unitStarts(history));
    }), propertyParams());
  });
});
