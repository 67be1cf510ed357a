import { describe, expect, test } from '@jest/globals';
import { compressContext, repairHistory, validateMessages } from '../src/index.js';
import type { AnthropicMessage } from '../src/formats/anthropic/types.js';
import { anthropicProblems } from './helpers/anthropic-checker.js';

/**
 * Repair in rounds: what one round changes can leave what only the next one sees. Found by the
 * malformed-history property (malformed.property.test.ts), here as one case: a result message
 * moved away from its call into the run of an earlier call turn, in front of that turn's result.
 */

const use = (id: string): AnthropicMessage => ({ role: 'assistant', content: [{ type: 'tool_use', id, name: 'read_file', input: {} }] });
const result = (id: string, text?: string): AnthropicMessage => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: `result of ${id}` }, ...(text ? [{ type: 'text', text }] : [])] });
const user = (text: string): AnthropicMessage => ({ role: 'user', content: text });
const say = (text: string): AnthropicMessage => ({ role: 'assistant', content: [{ type: 'text', text }] });

describe('repair goes on while a round leaves the history broken', () => {
  // toolu_4's result (with the user's words after it) stands between toolu_1 and its result.
  const history = [user('go'), use('toolu_1'), result('toolu_4', 'and then?'), result('toolu_1'), say('done'), user('more'), use('toolu_4'), say('done')];

  test('the stray block goes, the user\'s words stay, and toolu_1 keeps its own result', () => {
    const { messages, actions } = repairHistory(history, { format: 'anthropic' });
    expect(validateMessages(messages, 'anthropic')).toEqual([]);
    expect(anthropicProblems(messages)).toEqual([]);
    // The real result of toolu_1 is kept (joined before the user's words), not replaced by an error.
    expect(messages[2]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'result of toolu_1' }, { type: 'text', text: 'and then?' }] });
    expect(actions.map((a) => a.action)).toEqual(expect.arrayContaining(['removed-orphan', 'moved-result', 'added-result']));
    // Every action names a message of the input.
    for (const a of actions) expect(a.index).toBeLessThan(history.length);
  });

  test('compressContext sends a view the checker accepts', () => {
    const { messages } = compressContext(history, { format: 'anthropic' });
    expect(anthropicProblems(messages)).toEqual([]);
  });
});
