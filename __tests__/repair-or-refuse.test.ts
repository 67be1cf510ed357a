import { describe, expect, test } from '@jest/globals';
import { compressContext, InputError, repairHistory, validateMessages } from '../src/index.js';
import type { HermesMessage } from '../src/formats/hermes/types.js';
import { checkHermes } from './helpers/hermes-checker.js';

/**
 * Repair either fixes a history or refuses it: what it cannot settle without guessing is an
 * InputError naming the input message and the rule, never a view still broken. Found by
 * malformed.property.test.ts (Hermes): a results message repeated into the next call turn's run.
 */

const call = (name: string) => `<tool_call>\n{"name": "${name}", "arguments": {}}\n</tool_call>`;
const response = (text: string) => `<tool_response>\n${text}\n</tool_response>`;

describe('what repair cannot settle is refused, naming the message and the rule', () => {
  // Three results by position for two calls, over two user messages: which one is extra cannot be told.
  const history: HermesMessage[] = [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: `${call('a')}\n${call('b')}` },
    { role: 'user', content: response('x') },
    { role: 'user', content: `${response('r1')}\n${response('r2')}\n\nthanks` },
    { role: 'assistant', content: 'done' },
  ];

  test('compressContext and repairHistory throw the same InputError, at a message of the input', () => {
    let error: unknown;
    try {
      compressContext(history, { format: 'hermes' });
    } catch (e) {
      error = e;
    }
    expect(InputError.isInstance(error)).toBe(true);
    const e = error as InputError;
    expect(e.path).toBe('messages[3]');
    expect(e.rule).toContain('(rule results-split)');
    expect(e.rule).toContain('repair cannot settle this without guessing');
    expect(() => repairHistory(history, { format: 'hermes' })).toThrow(e.message);
  });

  test('the same results in one message are repaired (the one too many removed), as before', () => {
    const one: HermesMessage[] = [history[0], history[1], { role: 'user', content: `${response('r1')}\n${response('r2')}\n${response('r3')}` }, history[4]];
    const { messages } = repairHistory(one, { format: 'hermes' });
    expect(validateMessages(messages, 'hermes')).toEqual([]);
    expect(checkHermes(messages)).toEqual([]);
  });

  test('with repair off the history goes out as it came', () => {
    expect(compressContext(history, { format: 'hermes', repair: false }).messages).toEqual(history);
  });
});
