import { describe, expect, test } from '@jest/globals';
import { validateMessages } from '../../src/index.js';
import { fromOpenAIChat, toOpenAIChat } from '../../src/formats/anthropic/convert.js';
import type { AnthropicMessage } from '../../src/formats/anthropic/types.js';
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';
import { anthropicProblems } from '../helpers/anthropic-checker.js';

/** OpenAI Chat <-> Anthropic Messages, feature by feature: what is carried, and what `lost` names. */

const call = (id: string, name: string, args: string) => ({ id, type: 'function', function: { name, arguments: args } });

describe('fromOpenAIChat', () => {
  test('leading system text goes to `system`; parallel calls are one assistant message; consecutive tool messages one user message', () => {
    const history: OpenAIChatMessage[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Paris and Rome?' },
      { role: 'assistant', content: 'Checking both.', tool_calls: [call('call_a', 'weather', '{"city":"Paris"}'), call('call_b', 'weather', '{"city":"Rome"}')] },
      { role: 'tool', tool_call_id: 'call_b', content: 'rain' },
      { role: 'tool', tool_call_id: 'call_a', content: [{ type: 'text', text: 'sun' }] },
      { role: 'assistant', content: 'Paris: sun. Rome: rain.' },
    ];
    const c = fromOpenAIChat(history);
    expect(c.lost).toEqual([]);
    expect(c.system).toBe('Be brief.');
    expect(c.messages).toEqual([
      { role: 'user', content: 'Weather in Paris and Rome?' },
      { role: 'assistant', content: [
        { type: 'text', text: 'Checking both.' },
        { type: 'tool_use', id: 'call_a', name: 'weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'call_b', name: 'weather', input: { city: 'Rome' } },
      ] },
      { role: 'user', content: [
        { type: 'tool_result', tool_use_id: 'call_b', content: 'rain' },
        { type: 'tool_result', tool_use_id: 'call_a', content: [{ type: 'text', text: 'sun' }] },
      ] },
      { role: 'assistant', content: 'Paris: sun. Rome: rain.' },
    ]);
    expect(validateMessages(c.messages, 'anthropic')).toEqual([]);
    expect(anthropicProblems(c.messages, { bedrock: true })).toEqual([]);
    expect(toOpenAIChat(c.messages, { system: c.system })).toEqual({ messages: history, lost: [] });
  });

  test('arguments that are not a JSON object are kept as {"_raw": text}, reported, and restored on the way back', () => {
    const history: OpenAIChatMessage[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [call('call_a', 'run', '{"cmd": "ls"'), call('call_b', 'run', '{"cmd": "ls"}')] },
      { role: 'tool', tool_call_id: 'call_a', content: 'x' },
      { role: 'tool', tool_call_id: 'call_b', content: 'y' },
    ];
    const c = fromOpenAIChat(history);
    expect((c.messages[1].content as { input?: unknown }[]).map((b) => b.input)).toEqual([{ _raw: '{"cmd": "ls"' }, { cmd: 'ls' }]);
    expect(c.lost).toEqual([
      'messages[1].tool_calls[0].function.arguments: not a JSON object; sent as {"_raw": text}',
      'messages[1].tool_calls[1].function.arguments: formatting not kept (sent as a JSON object)',
    ]);
    const back = toOpenAIChat(c.messages).messages;
    expect(back[1].tool_calls!.map((t) => t.function.arguments)).toEqual(['{"cmd": "ls"', '{"cmd":"ls"}']);
  });

  test('a system message mid-history becomes a user message; images become image blocks; a reused id is renamed', () => {
    const history: OpenAIChatMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } }] },
      { role: 'assistant', content: null, tool_calls: [call('call_a', 'look', '{}')] },
      { role: 'tool', tool_call_id: 'call_a', content: 'a cat' },
      { role: 'system', content: 'Answer in one word.' },
      { role: 'assistant', content: null, tool_calls: [call('call_a', 'look', '{}')] },
      { role: 'tool', tool_call_id: 'call_a', content: 'still a cat' },
      { role: 'assistant', content: 'Cat.' },
    ];
    const c = fromOpenAIChat(history);
    expect(c.system).toBeUndefined();
    expect(c.messages[0].content).toEqual([{ type: 'text', text: 'What is this?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }]);
    expect(c.messages[3]).toEqual({ role: 'user', content: [{ type: 'text', text: 'Answer in one word.' }] });
    expect(c.messages[4].content).toEqual([{ type: 'tool_use', id: 'call_a_2', name: 'look', input: {} }]);
    expect(c.messages[5].content).toEqual([{ type: 'tool_result', tool_use_id: 'call_a_2', content: 'still a cat' }]);
    expect(c.lost).toEqual([
      'messages[0].content[1]: the image detail setting was dropped (Anthropic sizes images itself)',
      'messages[3]: a system message in the middle of the history became a user message (Anthropic has no system role in messages)',
      'messages[4].tool_calls[0].id: call_a is used again in this history; Anthropic wants unique tool_use ids, so it is call_a_2 here and in its result',
    ]);
    expect(validateMessages(c.messages, 'anthropic')).toEqual([]);
    expect(fromOpenAIChat(history, { uniqueIds: false }).messages[4].content).toEqual([{ type: 'tool_use', id: 'call_a', name: 'look', input: {} }]);
  });

  test('legacy function calls get an id and a tool_result', () => {
    const c = fromOpenAIChat([
      { role: 'user', content: 'time?' },
      { role: 'assistant', content: null, function_call: { name: 'clock', arguments: '{}' } },
      { role: 'function', name: 'clock', content: '12:00' },
    ]);
    expect(c.messages[1].content).toEqual([{ type: 'tool_use', id: 'toolu_function_0', name: 'clock', input: {} }]);
    expect(c.messages[2].content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_function_0', content: '12:00' }]);
    expect(c.lost).toHaveLength(2);
    expect(validateMessages(c.messages, 'anthropic')).toEqual([]);
  });
});

describe('toOpenAIChat', () => {
  test('thinking, server tools, documents and is_error are reported lost; user words after results follow the tool messages', () => {
    const history: AnthropicMessage[] = [
      { role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'notes' } }, { type: 'text', text: 'Check.' }] },
      { role: 'assistant', content: [
        { type: 'thinking', thinking: 'hm', signature: 'sig' },
        { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'q' } },
        { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
        { type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'a' } },
      ] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'data', is_error: true }, { type: 'text', text: 'and?' }] },
    ];
    const r = toOpenAIChat(history, { system: [{ type: 'text', text: 'Be brief.' }], toolNames: true });
    expect(r.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Check.' }] },
      { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'read', arguments: '{"path":"a"}' } }] },
      { role: 'tool', tool_call_id: 'toolu_1', name: 'read', content: 'data' },
      { role: 'user', content: [{ type: 'text', text: 'and?' }] },
    ]);
    expect(r.lost).toEqual([
      'messages[0].content[0]: a "document" block was dropped (OpenAI Chat has no such part)',
      'messages[1].content[0]: a "thinking" block was dropped (OpenAI Chat has no such part)',
      'messages[1].content[1]: a "server_tool_use" block was dropped (OpenAI Chat has no such part)',
      'messages[1].content[2]: a "web_search_tool_result" block was dropped (OpenAI Chat has no such part)',
      'messages[2].content[0]: is_error was dropped (OpenAI tool messages have no error flag)',
    ]);
  });
});
