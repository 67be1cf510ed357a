import { describe, expect, test } from '@jest/globals';
import { compressContext, InputError, repairHistory, validateMessages } from '../src/index.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import type { AnthropicMessage } from '../src/formats/anthropic/types.js';
import { openaiChatProblems } from './helpers/oracle.js';
import { anthropicProblems } from './helpers/anthropic-checker.js';

/**
 * The shapes an outside tester found coming out of repair still broken (issue 47), one test each:
 * a `tool` message answering a legacy `function_call`, `content: null` where OpenAI refuses it,
 * and calls on a `tool`, `user` or `system` message. Each is repaired to a view the provider
 * accepts (judged by the oracle, which shares no code with the engine) or refused with an
 * InputError naming the message's field and the rule.
 */

const system: OpenAIChatMessage = { role: 'system', content: 'be brief' };
const user = (content: string): OpenAIChatMessage => ({ role: 'user', content });
const legacyCall: OpenAIChatMessage = { role: 'assistant', content: null, function_call: { name: 'clock', arguments: '{}' } };
const call = (id: string) => ({ id, type: 'function', function: { name: 'lookup', arguments: '{"q":1}' } });
const calls = (...ids: string[]): OpenAIChatMessage => ({ role: 'assistant', content: null, tool_calls: ids.map(call) });

/** The view compressContext makes (repair on, the default), after checking the oracle accepts it. */
function accepted(history: OpenAIChatMessage[], format: 'openai' | undefined = 'openai') {
  const result = compressContext(history, { format });
  expect(openaiChatProblems(result.messages)).toEqual([]);
  expect(validateMessages(result.messages, 'openai')).toEqual([]);
  return result;
}

/** The InputError compressContext throws, after checking repairHistory throws the same. */
function refused(history: readonly unknown[], format: 'openai' | 'anthropic' = 'openai'): InputError {
  let error: unknown;
  try {
    compressContext(history, { format });
  } catch (e) {
    error = e;
  }
  expect(InputError.isInstance(error)).toBe(true);
  expect(() => repairHistory(history, { format })).toThrow((error as Error).message);
  return error as InputError;
}

describe('a tool message answering a legacy function_call', () => {
  test('without a tool_call_id: it becomes the function message of that call, its content kept', () => {
    const history = [system, user('time?'), legacyCall, { role: 'tool', content: '12:00' }, { role: 'assistant', content: 'noon' }];
    const { messages, report } = accepted(history);
    expect(messages[3]).toEqual({ role: 'function', name: 'clock', content: '12:00' });
    expect(messages).toHaveLength(5);
    expect(report.repaired.map((a) => [a.action, a.index])).toEqual([['rekeyed-result', 3]]);
  });

  test('with a tool_call_id of its own: the same, the id dropped (a legacy call has none)', () => {
    const history = [user('time?'), legacyCall, { role: 'tool', tool_call_id: 'call_9', content: '12:00' }];
    const { messages } = accepted(history);
    expect(messages[2]).toEqual({ role: 'function', name: 'clock', content: '12:00' });
  });

  test('with a numeric tool_call_id: the same', () => {
    const history = [user('time?'), legacyCall, { role: 'tool', tool_call_id: 3 as unknown as string, content: '12:00' }];
    expect(accepted(history).messages[2]).toEqual({ role: 'function', name: 'clock', content: '12:00' });
  });

  test('a function message without a name in the call\'s run is named after it', () => {
    const history = [user('time?'), legacyCall, { role: 'function', content: '12:00' }];
    expect(accepted(history).messages[2]).toEqual({ role: 'function', name: 'clock', content: '12:00' });
  });
});

describe('content: null where OpenAI refuses it is sent as an empty text', () => {
  test.each([
    ['a user message', [system, { role: 'user', content: null }, { role: 'assistant', content: 'hi' }], 1],
    ['a tool message', [user('go'), calls('call_a'), { role: 'tool', tool_call_id: 'call_a', content: null }, { role: 'assistant', content: 'done' }], 2],
    ['a system message', [{ role: 'system', content: null }, user('go')], 0],
    ['a developer message', [{ role: 'developer', content: null }, user('go')], 0],
    ['an assistant message making no call', [user('go'), { role: 'assistant', content: null }], 1],
    ['a function message', [user('time?'), legacyCall, { role: 'function', name: 'clock', content: null }], 2],
    ['a user message with no content field', [system, { role: 'user' }], 1],
  ] as [string, OpenAIChatMessage[], number][])('%s', (_name, history, at) => {
    const { messages, report } = accepted(history);
    expect(messages[at]).toEqual({ ...history[at], content: '' });
    expect(messages.filter((_, i) => i !== at)).toEqual(history.filter((_, i) => i !== at));
    expect(report.repaired).toEqual([expect.objectContaining({ action: 'fixed-shape', index: at })]);
    expect(report.repaired[0].detail).toContain(`messages[${at}].content`);
  });

  test('also when nothing in the history shows its format (read as OpenAI Chat by default)', () => {
    const { messages } = accepted([{ role: 'user', content: null }, { role: 'assistant', content: 'ok' }], undefined);
    expect(messages[0]).toEqual({ role: 'user', content: '' });
  });

  test('an assistant message that makes calls keeps its null content (OpenAI allows it there)', () => {
    const history = [user('go'), calls('call_a'), { role: 'tool', tool_call_id: 'call_a', content: 'x' }];
    const { messages, report } = accepted(history);
    expect(messages).toEqual(history);
    messages.forEach((m, i) => expect(m).toBe(history[i]));
    expect(report.repaired).toEqual([]);
  });

  test('with repair off nothing is changed', () => {
    const history: OpenAIChatMessage[] = [{ role: 'user', content: null }];
    expect(compressContext(history, { format: 'openai', repair: false }).messages[0]).toBe(history[0]);
  });
});

describe('calls on a role that cannot make them are refused, naming the field', () => {
  test.each([
    ['tool_calls on a tool message', [user('go'), calls('call_a'), { role: 'tool', tool_call_id: 'call_a', content: 'x', tool_calls: [call('call_b')] }], 'messages[2].tool_calls'],
    ['tool_calls on a user message', [system, { role: 'user', content: 'go', tool_calls: [call('call_b')] }], 'messages[1].tool_calls'],
    ['tool_calls on a user message with null content', [system, { role: 'user', content: null, tool_calls: [call('call_b')] }, { role: 'tool', tool_call_id: 'call_b', content: 'x' }], 'messages[1].tool_calls'],
    ['tool_calls on a system message', [{ role: 'system', content: 'rules', tool_calls: [call('call_b')] }, user('go')], 'messages[0].tool_calls'],
    ['a function_call on a user message', [{ role: 'user', content: 'go', function_call: { name: 'clock', arguments: '{}' } }], 'messages[0].function_call'],
  ] as [string, OpenAIChatMessage[], string][])('%s', (_name, history, path) => {
    const error = refused(history);
    expect(error.path).toBe(path);
    expect(error.rule).toContain("only messages with role 'assistant' can have a function call");
    expect(error.rule).toContain('function-call-not-assistant');
    expect(error.message).toMatch(/move the calls to the assistant message/);
  });

  test('an empty tool_calls list on a user message is no call, and is left as it is', () => {
    const history: OpenAIChatMessage[] = [{ role: 'user', content: 'go', tool_calls: [] }];
    expect(compressContext(history, { format: 'openai' }).messages[0]).toBe(history[0]);
  });

  test('Anthropic: a tool_use block in a user message, a tool_result block in an assistant message', () => {
    const use = { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} };
    const result = { type: 'tool_result', tool_use_id: 'toolu_1', content: 'x' };
    const inUser: AnthropicMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'go' }, use] }];
    expect(refused(inUser, 'anthropic').path).toBe('messages[0].content[1]');
    const inAssistant: AnthropicMessage[] = [{ role: 'user', content: 'go' }, { role: 'assistant', content: [use] }, { role: 'assistant', content: [result] }];
    const error = refused(inAssistant, 'anthropic');
    expect(error.path).toBe('messages[2].content[0]');
    expect(error.rule).toContain('block-wrong-role');
    // The validator names the same fault, as the API counts messages.
    expect(validateMessages(inAssistant, 'anthropic').filter((v) => v.rule === 'block-wrong-role').map((v) => v.message.split(':')[0])).toEqual(['messages.2.content.0']);
    expect(anthropicProblems(inAssistant).length).toBeGreaterThan(0);
  });
});
