import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import type { RuleId, Violation } from '../src/core/validate/rules.js';
import { validateMessages } from '../src/formats/profiles.js';
import { openaiProfile } from '../src/formats/openai-chat/profile.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { brokenHistory, validHistory } from './helpers/arbitraries.js';
import { corpusDescribe, loadCorpus } from './helpers/corpus.js';
import { propertyParams } from './helpers/property-runs.js';

/**
 * The provider's own 400 texts (OpenAI Chat Completions), as collected in the project's provider
 * notes, with the concrete ids and indexes left as parameters.
 */
const OPENAI_TEXT = {
  unanswered: (ids: string) => `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${ids}`,
  orphan: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
  notInPrevious: (id: string) => `Invalid parameter: 'tool_call_id' of '${id}' not found in 'tool_calls' of previous message.`,
  duplicate: (id: string, first: number, second: number) => `Invalid parameter: Duplicate value for 'tool_call_id' of '${id}', in messages[${first}] and messages[${second}].`,
  missingId: "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.",
  functionName: "Missing parameter 'name': messages with role 'function' must have a 'name'.",
  functionCallRole: "Invalid parameter: only messages with role 'assistant' can have a function call.",
  contentNull: "Invalid value for 'content': expected a string, got null.",
};

const call = (id: string, name = 'lookup') => ({ id, type: 'function', function: { name, arguments: '{"q":1}' } });
const calls = (...ids: string[]): OpenAIChatMessage => ({ role: 'assistant', content: null, tool_calls: ids.map((id) => call(id)) });
const result = (id: string, content = `result of ${id}`): OpenAIChatMessage => ({ role: 'tool', tool_call_id: id, content });
const user = (content: string): OpenAIChatMessage => ({ role: 'user', content });
const system: OpenAIChatMessage = { role: 'system', content: 'be brief' };

const validate = (messages: readonly OpenAIChatMessage[]) => validateMessages(messages, openaiProfile);
const only = (violations: Violation[], rule: RuleId) => violations.filter((v) => v.rule === rule);

describe('validateMessages (OpenAI profile): one rule, one fault', () => {
  test('call-unanswered: names the assistant index and every unanswered id, in the provider wording', () => {
    const v = validate([system, user('go'), calls('call_a', 'call_b', 'call_c'), result('call_b'), user('and?')]);
    const hits = only(v, 'call-unanswered');
    expect(hits).toHaveLength(1);
    expect(hits[0]).toMatchObject({ index: 2, id: 'call_a' });
    expect(hits[0].message).toBe(`messages[2]: ${OPENAI_TEXT.unanswered('call_a, call_c')}`);
    expect(v).toHaveLength(1);
  });

  test('call-unanswered: a call at the very end of the history is unanswered too', () => {
    const v = validate([user('go'), calls('call_z')]);
    expect(v).toEqual([expect.objectContaining({ rule: 'call-unanswered', index: 1, id: 'call_z' })]);
  });

  test('result-orphan: a tool message first, with the "preceeding" wording', () => {
    const v = validate([result('call_x'), system, user('hi')]);
    expect(v).toEqual([{ index: 0, rule: 'result-orphan', id: 'call_x', message: `messages[0]: tool result call_x answers no call: ${OPENAI_TEXT.orphan}` }]);
  });

  test('result-orphan: results separated from their call by a user message', () => {
    const v = validate([user('go'), calls('call_a'), user('wait'), result('call_a')]);
    expect(v.map((x) => [x.rule, x.index, x.id])).toEqual([['call-unanswered', 1, 'call_a'], ['result-orphan', 3, 'call_a']]);
    expect(v[1].message).toContain(OPENAI_TEXT.orphan);
    expect(v[0].message).toContain(OPENAI_TEXT.unanswered('call_a'));
  });

  test('result-orphan: a result whose id is not among the calls right before it', () => {
    const v = validate([user('go'), calls('call_a'), result('call_a'), calls('call_b'), result('call_a')]);
    expect(v.map((x) => [x.rule, x.index, x.id])).toEqual([['call-unanswered', 3, 'call_b'], ['result-orphan', 4, 'call_a']]);
    expect(v[1].message).toBe(`messages[4]: ${OPENAI_TEXT.notInPrevious('call_a')}`);
  });

  test('result-duplicate: the second result is at fault and both indexes are named', () => {
    const v = validate([user('go'), calls('call_a', 'call_b'), result('call_a'), result('call_b'), result('call_a', 'again')]);
    expect(v).toEqual([{ index: 4, rule: 'result-duplicate', id: 'call_a', message: `messages[4]: ${OPENAI_TEXT.duplicate('call_a', 2, 4)}` }]);
  });

  test('result-duplicate: a legacy function answered twice', () => {
    const v = validate([
      user('time?'),
      { role: 'assistant', content: null, function_call: { name: 'clock', arguments: '{}' } },
      { role: 'function', name: 'clock', content: '12:00' },
      { role: 'function', name: 'clock', content: '12:01' },
    ]);
    expect(v.map((x) => [x.rule, x.index])).toEqual([['result-duplicate', 3]]);
  });

  test('call-id-duplicate: one assistant message using an id twice', () => {
    const v = validate([user('go'), calls('call_a', 'call_a'), result('call_a')]);
    const hits = only(v, 'call-id-duplicate');
    expect(hits).toEqual([expect.objectContaining({ index: 1, id: 'call_a' })]);
    expect(hits[0].message).toMatch(/^messages\[1\]: duplicate tool call id call_a in one assistant turn/);
  });

  test('result-missing-id: a tool message without tool_call_id', () => {
    const v = validate([user('go'), calls('call_a'), result('call_a'), { role: 'tool', content: 'lost' }]);
    const hits = only(v, 'result-missing-id');
    expect(hits).toEqual([{ index: 3, rule: 'result-missing-id', message: `messages[3]: ${OPENAI_TEXT.missingId}` }]);
  });

  test('function-missing-name: a legacy function result without a name', () => {
    const v = validate([user('go'), { role: 'function', content: 'x' }]);
    const hits = only(v, 'function-missing-name');
    expect(hits).toEqual([{ index: 1, rule: 'function-missing-name', message: `messages[1]: ${OPENAI_TEXT.functionName}` }]);
  });

  test('function-call-not-assistant: a user message carrying a function call', () => {
    const v = validate([{ role: 'user', content: 'x', function_call: { name: 'f', arguments: '{}' } }]);
    const hits = only(v, 'function-call-not-assistant');
    expect(hits).toEqual([{ index: 0, rule: 'function-call-not-assistant', message: `messages[0]: ${OPENAI_TEXT.functionCallRole}` }]);
  });

  test('content-null: null content is allowed only on an assistant that makes calls', () => {
    const v = validate([user('go'), { role: 'assistant', content: null }, calls('call_a'), { role: 'tool', tool_call_id: 'call_a', content: null }]);
    expect(only(v, 'content-null')).toEqual([
      { index: 1, rule: 'content-null', message: `messages[1]: ${OPENAI_TEXT.contentNull}` },
      { index: 3, rule: 'content-null', message: `messages[3]: ${OPENAI_TEXT.contentNull}` },
    ]);
    expect(only(v, 'call-unanswered')).toHaveLength(0);
  });

  test('violations come ordered by message index', () => {
    const v = validate([result('call_x'), user('go'), calls('call_a'), user('wait'), { role: 'assistant', content: null }]);
    expect(v.map((x) => x.index)).toEqual([...v.map((x) => x.index)].sort((a, b) => a - b));
    expect(v.map((x) => x.rule)).toEqual(['result-orphan', 'call-unanswered', 'content-null']);
  });

  test('valid shapes: out-of-order parallel results, reused ids, legacy calls, text parts, developer messages', () => {
    expect(validate([
      { role: 'developer', content: [{ type: 'text', text: 'rules' }] },
      user('go'),
      calls('call_a', 'call_b'),
      result('call_b'),
      { role: 'tool', tool_call_id: 'call_a', content: [{ type: 'text', text: 'part' }] },
      { role: 'assistant', content: 'done' },
      calls('call_a'),
      result('call_a'),
      { role: 'assistant', content: null, function_call: { name: 'clock', arguments: '{}' } },
      { role: 'function', name: 'clock', content: '12:00' },
      { role: 'system', content: 'reminder' },
      user('thanks'),
    ])).toEqual([]);
  });
});

describe('validateMessages: properties', () => {
  test('a valid history has no violation', () => {
    fc.assert(fc.property(validHistory(), (messages) => {
      expect(validate(messages)).toEqual([]);
    }), propertyParams());
  });

  test('a broken history has at least one violation, each naming a message that exists', () => {
    fc.assert(fc.property(brokenHistory(), (messages) => {
      const v = validate(messages);
      expect(v.length).toBeGreaterThan(0);
      const misplaced = v.filter((x) => x.index < 0 || x.index >= messages.length || !x.message.startsWith(`messages[${x.index}]: `));
      expect(misplaced).toEqual([]);
    }), propertyParams());
  });
});

corpusDescribe(describe)('validateMessages over the shared corpus', () => {
  test('every real conversation is valid', () => {
    const conversations = loadCorpus();
    expect(conversations).toHaveLength(200);
    const invalid = conversations.filter((c) => validate(c.messages).length > 0).map((c) => c.id);
    expect(invalid).toEqual([]);
  });
});
