import { describe, expect, test } from '@jest/globals';
import type { RuleId, Violation } from '../../src/core/validate/rules.js';
import type { Profile } from '../../src/core/validate/validate.js';
import { PROFILES, validateMessages } from '../../src/formats/profiles.js';
import { openaiChatLens } from '../../src/formats/openai-chat/lens.js';
import type { OpenAIChatMessage, OpenAIToolCall } from '../../src/formats/openai-chat/types.js';
import { deepseekProfile } from '../../src/formats/openai-compatible/deepseek.js';
import { deepseekReasoningKept } from '../../src/formats/openai-compatible/deepseek-rules.js';
import { qwenTemplateProfile } from '../../src/formats/openai-compatible/qwen-template.js';
import { qwenResultsInCallOrder } from '../../src/formats/openai-compatible/qwen-template-rules.js';
import { mistralOrderAndCountProblems } from '../helpers/openai-compatible-checker.js';

const fn = (id: string, name = 'lookup'): OpenAIToolCall => ({ id, type: 'function', function: { name, arguments: '{"q":1}' } });
const calls = (...ids: string[]): OpenAIChatMessage => ({ role: 'assistant', content: null, tool_calls: ids.map((id) => fn(id)) });
const named = (...pairs: [string, string][]): OpenAIChatMessage => ({ role: 'assistant', content: null, tool_calls: pairs.map(([id, name]) => fn(id, name)) });
const tool = (id: string, content = `result of ${id}`): OpenAIChatMessage => ({ role: 'tool', tool_call_id: id, content });
const user = (content: string): OpenAIChatMessage => ({ role: 'user', content });
const say = (content: string): OpenAIChatMessage => ({ role: 'assistant', content });
const system: OpenAIChatMessage = { role: 'system', content: 'be brief' };
const legacyCall: OpenAIChatMessage = { role: 'assistant', content: null, function_call: { name: 'clock', arguments: '{}' } };

/** Mistral-shaped ids. */
const A = 'abcDEF123';
const B = 'xyz987QRS';
const C = 'Zz0Zz0Zz0';

const placed = (v: readonly Violation[], rules?: readonly RuleId[]) => v.filter((x) => !rules || rules.includes(x.rule)).map((x) => `${x.rule}@${x.index}${x.id !== undefined ? `:${x.id}` : ''}`);

describe('registry', () => {
  test('deepseek, deepseek-reasoner, mistral and qwen-template are profiles by name, over the OpenAI Chat lens', () => {
    for (const name of ['deepseek', 'deepseek-reasoner', 'mistral', 'qwen-template'] as const) {
      const p = PROFILES[name] as Profile<OpenAIChatMessage>;
      expect([name, p.name, p.lens]).toEqual([name, name, openaiChatLens]);
      expect(validateMessages([user('hi')], name)).toEqual([]);
    }
  });

  test('the profiles and their rule lists are frozen', () => {
    for (const p of [PROFILES.deepseek, PROFILES['deepseek-reasoner'], PROFILES.mistral, PROFILES['qwen-template']]) {
      expect(Object.isFrozen(p)).toBe(true);
      expect(Object.isFrozen(p.rules)).toBe(true);
    }
  });
});

describe('openai: result-as-user (tool output sent as a user message)', () => {
  const v = (messages: OpenAIChatMessage[]) => validateMessages(messages, 'openai');

  test('a JSON user message right after an unanswered call: named, besides call-unanswered, with the fix', () => {
    const out = v([user('go'), calls('call_a'), user('{"rows":3}')]);
    expect(placed(out)).toEqual(['call-unanswered@1:call_a', 'result-as-user@2:call_a']);
    expect(out[1].message).toBe('messages[2]: this user message looks like the output of tool call call_a (lookup) sent as a user message; send it as role `tool` with `tool_call_id` call_a (a model shown tool output as user text tends to call the tool again)');
  });

  test('text starting with a call\'s name picks that call among several open ones; the id picks its call anywhere in the text', () => {
    expect(placed(v([user('go'), named(['call_a', 'lookup'], ['call_b', 'search']), user('search: 2 hits')]), ['result-as-user'])).toEqual(['result-as-user@2:call_b']);
    expect(placed(v([user('go'), named(['call_a', 'lookup'], ['call_b', 'search']), user('output of call_b is ready')]), ['result-as-user'])).toEqual(['result-as-user@2:call_b']);
    // A name must end at a word boundary: "lookups" is not "lookup".
    expect(placed(v([user('go'), calls('call_a'), user('lookups are slow')]), ['result-as-user'])).toEqual([]);
  });

  test('consecutive user messages are matched to the open calls one by one, and the first that matches none ends the run', () => {
    const out = v([user('go'), named(['call_a', 'lookup'], ['call_b', 'search']), user('{"x":1}'), user('[1,2]'), user('{"y":2}')]);
    expect(placed(out, ['result-as-user'])).toEqual(['result-as-user@2:call_a', 'result-as-user@3:call_b']);
    const stopped = v([user('go'), calls('call_a', 'call_b'), user('stop'), user('{"x":1}')]);
    expect(placed(stopped, ['result-as-user'])).toEqual([]);
  });

  test('a human interjection, a question, broken JSON or a short id in the text is not taken for tool output', () => {
    for (const text of ['wait', 'did it work?', 'cancel that please', '{"x":1', '', '   ']) {
      expect([text, placed(v([user('go'), calls('call_a'), user(text)]), ['result-as-user'])]).toEqual([text, []]);
    }
    expect(placed(v([user('go'), calls('c1'), user('what about c1 then')]), ['result-as-user'])).toEqual([]);
  });

  test('after a partial run, the open call is the one named; answered turns never are', () => {
    expect(placed(v([user('go'), calls('call_a', 'call_b'), tool('call_a'), user('{"x":1}')]), ['result-as-user'])).toEqual(['result-as-user@3:call_b']);
    expect(placed(v([user('go'), calls('call_a'), tool('call_a'), user('{"x":1}')]))).toEqual([]);
  });

  test('a legacy function call gets the function-role fix', () => {
    const out = v([user('time?'), legacyCall, user('{"time":"12:00"}')]);
    expect(out.find((x) => x.rule === 'result-as-user')?.message).toBe('messages[2]: this user message looks like the output of function call clock sent as a user message; send it as role `function` with `name` clock (a model shown tool output as user text tends to call the tool again)');
  });

  test('the other OpenAI-compatible profiles built on the OpenAI rules report it too', () => {
    expect(placed(validateMessages([user('go'), calls('call_a'), user('{"x":1}')], 'deepseek'), ['result-as-user'])).toEqual(['result-as-user@2:call_a']);
  });
});

describe('deepseek', () => {
  test('finds what the openai profile finds, in DeepSeek\'s words where it has them', () => {
    const history = [tool('call_x'), user('go'), calls('call_a', 'call_b'), tool('call_a'), tool('call_q'), tool('call_a'), user('?')];
    const ds = validateMessages(history, 'deepseek');
    expect(placed(ds)).toEqual(placed(validateMessages(history, 'openai')));
    expect(ds.find((x) => x.rule === 'call-unanswered')?.message).toBe("messages[2]: An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (insufficient tool messages following tool_calls message); no tool message answers call_b");
    expect(ds.filter((x) => x.rule === 'result-orphan').map((x) => x.message)).toEqual([
      "messages[0]: tool result call_x answers no call: Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
      "messages[4]: tool result call_q is not among the tool_calls of the assistant message before it: Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
    ]);
    // Duplicates keep OpenAI's wording (DeepSeek's own text is not documented).
    expect(ds.find((x) => x.rule === 'result-duplicate')?.message).toContain("Duplicate value for 'tool_call_id' of 'call_a'");
  });

  test('parallel calls split over two assistant messages: the violation says to send them in one', () => {
    const out = validateMessages([user('go'), calls('call_a'), calls('call_b'), tool('call_a'), tool('call_b')], 'deepseek');
    expect(out[0].message).toMatch(/; messages\[2\] opens more tool_calls: send every call of one response in one assistant message$/);
  });

  test('deepseek-reasoner: two user or two assistant messages in a row are rejected; a tool message or a system message between them is not a repeat', () => {
    expect(placed(validateMessages([user('a'), say('b'), say('c'), user('d')], 'deepseek-reasoner'))).toEqual(['roles-alternate@2']);
    expect(validateMessages([user('a'), calls('call_a'), tool('call_a'), say('done'), user('b'), system, user('c')], 'deepseek-reasoner')).toEqual([]);
    expect(validateMessages([user('a'), user('b')], 'deepseek')).toEqual([]);
  });

  test('reasoning_content rule (opt-in): silent without thinking; only tool-call messages after the last user message need it', () => {
    const thinking: Profile<OpenAIChatMessage> = { ...deepseekProfile, rules: [...deepseekProfile.rules, deepseekReasoningKept] };
    const bare = [user('go'), calls('call_a'), tool('call_a'), say('done')];
    expect(validateMessages(bare, thinking)).toEqual([]);
    const withR = (m: OpenAIChatMessage) => ({ ...m, reasoning_content: 'step' });
    // Before the last user message: not required (DeepSeek drops it there).
    expect(validateMessages([user('go'), withR(calls('call_a')), tool('call_a'), calls('call_b'), tool('call_b'), say('x'), user('next')], thinking)).toEqual([]);
    const after = validateMessages([user('go'), withR(say('hello')), user('next'), calls('call_a'), tool('call_a'), withR(calls('call_b')), tool('call_b')], thinking);
    expect(placed(after)).toEqual(['reasoning-content-missing@3:call_a']);
    expect(after[0].message).toMatch(/^messages\[3\]: The `reasoning_content` in the thinking mode must be passed back to the API\. /);
    expect(validateMessages([user('go'), withR(say('hello')), user('next'), calls('call_a'), tool('call_a')], 'deepseek')).toEqual([]);
  });
});

describe('mistral', () => {
  const v = (messages: OpenAIChatMessage[]) => validateMessages(messages, 'mistral');

  test('a valid Mistral history: parallel calls, 9-character ids, system in the middle, ends with a tool message', () => {
    expect(v([system, user('go'), calls(A, B), tool(B), tool(A), say('done'), user('more'), system, calls(C), tool(C)])).toEqual([]);
  });

  test('a system message right after an assistant message is out of order (a summary put after an assistant turn would be)', () => {
    expect(placed(v([user('go'), say('ok'), system, user('more')]))).toEqual(['role-order@2']);
  });

  test('every fault is reported, not only the first (mistral_common stops at the first)', () => {
    expect(placed(v([user('go'), calls(A), tool(A), user('x'), calls(B), tool(B), system]), ['role-order'])).toEqual(['role-order@3', 'role-order@6']);
  });

  test('a user message between calls and results is an order fault only: the stretch counts to the next assistant message', () => {
    expect(placed(v([user('go'), calls(A, B), tool(A), user('x'), tool(B), say('ok'), user('y')]))).toEqual([`role-order@3`, `role-order@4:${B}`]);
  });

  test('count: at the assistant message, with the first call left unanswered; at the first tool message when there is no call', () => {
    const short = v([user('go'), calls(A, B, C), tool(B), say('ok'), user('y')]);
    expect(placed(short, ['result-count'])).toEqual([`result-count@1:${A}`]);
    expect(short.find((x) => x.rule === 'result-count')?.message).toBe(`messages[1]: Not the same number of function calls and responses (3 tool calls: ${A}, ${B}, ${C}; 1 tool message before the next assistant message, messages[3])`);
    const noCall = v([user('go'), say('hm'), tool(A), say('ok'), user('y')]);
    expect(placed(noCall, ['result-count', 'result-orphan'])).toEqual([`result-count@2:${A}`, `result-orphan@2:${A}`]);
  });

  test('unanswered calls at the end: count (serving mode) and last role', () => {
    expect(placed(v([user('go'), calls(A)]))).toEqual([`result-count@1:${A}`, 'last-role@1']);
  });

  test('V13 ids: a result for a call of an earlier stretch is unexpected; a repeat in one stretch is a duplicate', () => {
    expect(placed(v([user('go'), calls(A), tool(A), say('ok'), user('y'), calls(B), tool(A)]), ['result-orphan', 'result-duplicate'])).toEqual([`result-orphan@6:${A}`]);
    expect(placed(v([user('go'), calls(A, B), tool(A), tool(A)]), ['result-orphan', 'result-duplicate'])).toEqual([`result-duplicate@3:${A}`]);
  });

  test('ids are checked in the call and in the tool message; a tool message\'s own name is checked too', () => {
    expect(placed(v([user('go'), calls('call_12345'), tool('call_12345')]))).toEqual(['call-id-format@1:call_12345', 'call-id-format@2:call_12345']);
    expect(placed(v([user('go'), calls(A), { ...tool(A), name: 'bad name' }]))).toEqual([`function-name-invalid@2:${A}`]);
    expect(placed(v([user('go'), named([A, 'x'.repeat(65)]), tool(A)]))).toEqual([`function-name-invalid@1:${A}`]);
  });

  test('OpenAI shapes Mistral lacks (developer, legacy function calling) are named once each; order and count judge what they stand for', () => {
    const out = v([{ role: 'developer', content: 'rules' }, user('time?'), legacyCall, { role: 'function', name: 'clock', content: '12:00' }]);
    expect(placed(out)).toEqual(['role-unsupported@0', 'role-unsupported@2', 'role-unsupported@3']);
    expect(out[1].message).toBe('messages[2]: function_call is not a Mistral field: send the call in tool_calls, with an id');
  });

  test('first and last message: assistant first is rejected; one assistant message is a first-role fault only; prefix makes a last assistant message valid', () => {
    expect(placed(v([say('hello'), user('hi')]))).toEqual(['first-role@0']);
    expect(placed(v([say('hello')]))).toEqual(['first-role@0']);
    expect(placed(v([tool(A), user('hi')]), ['first-role'])).toEqual([`first-role@0:${A}`]);
    expect(v([user('go'), { role: 'assistant', content: 'Sure,', prefix: true }])).toEqual([]);
    expect(v([user('go'), system])).toEqual([]);
  });
});

describe('qwen-template', () => {
  const v = (messages: OpenAIChatMessage[]) => validateMessages(messages, 'qwen-template');

  test('tool_call_id is ignored: wrong, missing or reordered ids pass when the counts match', () => {
    expect(v([user('go'), calls('call_a', 'call_b'), tool('call_b'), tool('nothing'), say('done')])).toEqual([]);
    expect(v([user('go'), calls('call_a'), { role: 'tool', content: 'no id' }, say('done')])).toEqual([]);
  });

  test('parallel calls split over two assistant messages: both counts are wrong', () => {
    expect(placed(v([user('go'), calls('call_a'), calls('call_b'), tool('call_a'), tool('call_b'), say('x')]))).toEqual(['result-count@1:call_a', 'result-count@2:call_b']);
  });

  test('any other message ends a run of tool messages (a system message in a run splits the <tool_response> turn)', () => {
    expect(placed(v([user('go'), calls('call_a', 'call_b'), tool('call_a'), system, tool('call_b'), say('x')]))).toEqual(['result-count@1:call_b', 'result-orphan@4:call_b']);
  });

  test('a user message with text and images counts as a query; a <tool_response> block does not', () => {
    expect(v([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:,' } }] }, say('ok')])).toEqual([]);
    expect(placed(v([user('  <tool_response>\nx\n</tool_response>  '), say('ok')]))).toEqual(['no-user-query@0']);
  });

  test('results-in-call-order (opt-in): a tool message whose id names another call of the turn is at the wrong place for positional pairing', () => {
    const ordered: Profile<OpenAIChatMessage> = { ...qwenTemplateProfile, rules: [...qwenTemplateProfile.rules, qwenResultsInCallOrder] };
    const out = validateMessages([user('go'), calls('call_a', 'call_b'), tool('call_b'), tool('call_a'), say('done')], ordered);
    expect(placed(out)).toEqual(['result-position@2:call_b', 'result-position@3:call_a']);
    expect(out[0].message).toBe('messages[2]: tool message answers call_b (call 2 of messages[1]) but stands at position 1, where the Qwen chat template pairs it with call_a (lookup); put the tool messages in the order of the calls');
    expect(validateMessages([user('go'), calls('call_a', 'call_b'), tool('call_a'), tool('call_b'), say('done')], ordered)).toEqual([]);
  });
});

describe('the independent Mistral checker (self-test on known sequences)', () => {
  const at = (messages: OpenAIChatMessage[]) => mistralOrderAndCountProblems(messages).map((p) => `${p.rule}@${p.index}`);

  test('flags each documented order fault at the later message', () => {
    expect(at([user('go'), calls(A), tool(A), user('x')])).toEqual(['role-order@3']);
    expect(at([user('go'), calls(A), user('x'), tool(A)])).toEqual(['role-order@3']);
    expect(at([system, tool(A)])).toEqual(['role-order@1', 'result-count@1']);
    expect(at([user('go'), calls(A), tool(A), system])).toEqual(['role-order@3']);
  });

  test('flags count faults: too few, too many, after an assistant with no calls, at the end', () => {
    expect(at([user('go'), calls(A, B), tool(A), say('ok'), user('y')])).toEqual(['result-count@1']);
    expect(at([user('go'), calls(A), tool(A), tool(B), say('ok'), user('y')])).toEqual(['result-count@1']);
    expect(at([user('go'), say('hm'), tool(A), say('ok'), user('y')])).toEqual(['result-count@2']);
    expect(at([user('go'), calls(A)])).toEqual(['result-count@1']);
    expect(at([user('go'), calls(A), calls(B), tool(A), tool(B)])).toEqual(['result-count@1', 'result-count@2']);
  });

  test('passes valid sequences, including legacy calls and developer messages judged as what they stand for', () => {
    expect(at([system, user('go'), calls(A, B), tool(B), tool(A), say('done'), user('more')])).toEqual([]);
    expect(at([{ role: 'developer', content: 'r' }, user('t?'), legacyCall, { role: 'function', name: 'clock', content: '1' }, say('one')])).toEqual([]);
    expect(at([user('go'), say('a'), say('b'), user('c'), user('d')])).toEqual([]);
  });
});
