import { describe, expect, test } from '@jest/globals';
import { compressContext, repairHistory, validateMessages } from '../src/index.js';
import type { QwenAgentMessage } from '../src/formats/qwen-agent/types.js';
import { checkQwenAgent } from './helpers/qwen-agent-checker.js';

/**
 * Qwen-Agent renders a turn's results by position (`<tool_response>` blocks in message order),
 * so repair leaves them in the order of the calls. Found by malformed.property.test.ts: a result
 * moved back to its call went to the end of the run, after the result of a later call.
 */

const call = (name: string, id?: string): QwenAgentMessage => ({ role: 'assistant', content: '', function_call: { name, arguments: '{}' }, ...(id ? { extra: { function_id: id } } : {}) });
const result = (name: string, id?: string): QwenAgentMessage => ({ role: 'function', name, content: `result of ${name}`, ...(id ? { extra: { function_id: id } } : {}) });

describe('Qwen-Agent: repaired results stand in call order', () => {
  test('a result separated from its call by assistant text goes back in its call\'s place, not after a later call\'s result', () => {
    const history: QwenAgentMessage[] = [{ role: 'user', content: 'go' }, call('a', 'c0'), call('b', 'c1'), result('b', 'c1'), { role: 'assistant', content: 'working' }, result('a', 'c0'), { role: 'user', content: 'next' }];
    const { messages } = repairHistory(history, { format: 'qwen-agent' });
    expect(messages.map((m) => m.name ?? m.function_call?.name ?? m.role)).toEqual(['user', 'a', 'b', 'a', 'b', 'assistant', 'user']);
    expect(validateMessages(messages, 'qwen-agent')).toEqual([]);
    expect(checkQwenAgent(messages)).toEqual([]);
    expect(checkQwenAgent(compressContext(history, { format: 'qwen-agent' }).messages)).toEqual([]);
  });

  test('results kept while a stray and a duplicate are removed are put in call order', () => {
    // One id for every call ("1", Qwen-Agent's fixed function_id): pairing is by name and position.
    const history: QwenAgentMessage[] = [{ role: 'user', content: 'go' }, call('list', '1'), call('code', '1'), result('code', '1'), result('weather', '1'), result('list', '1'), result('code', '1'), { role: 'assistant', content: 'done' }];
    const { messages } = repairHistory(history, { format: 'qwen-agent' });
    expect(messages.filter((m) => m.role === 'function').map((m) => m.name)).toEqual(['list', 'code']);
    expect(validateMessages(messages, 'qwen-agent')).toEqual([]);
    expect(checkQwenAgent(messages)).toEqual([]);
  });

  test('results sent out of call order are put in it (before, the history counted as regular and went out as it came)', () => {
    const history: QwenAgentMessage[] = [{ role: 'user', content: 'go' }, call('a'), call('b'), result('b'), result('a'), { role: 'assistant', content: 'done' }];
    const { messages, report } = compressContext(history, { format: 'qwen-agent' });
    expect(messages.map((m) => m.name ?? m.function_call?.name ?? m.role)).toEqual(['user', 'a', 'b', 'a', 'b', 'assistant']);
    expect(report.repaired.map((a) => a.action)).toEqual(['moved-result']);
    expect(checkQwenAgent(messages)).toEqual([]);
  });
});
