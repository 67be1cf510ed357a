import { describe, expect, test } from '@jest/globals';
import { protectedFloor } from '../bench/budget.js';
import type { OpenAIChatMessage, TokenCounter } from '../src/index.js';

/**
 * The benchmark's "over budget only by keepFirst + keepLast" column rests on `protectedFloor`, a
 * lower bound written apart from the planner. Counted here with one token per message, so each
 * case states which messages the bound holds.
 */
const perMessage = { requestOverhead: 0, message: () => 1 } as unknown as TokenCounter;
const call = (id: string) => ({ id, type: 'function' as const, function: { name: 'f', arguments: '{}' } });
const u = (content = 'q'): OpenAIChatMessage => ({ role: 'user', content });
const a = (content = 'ok'): OpenAIChatMessage => ({ role: 'assistant', content });
const calls = (...ids: string[]): OpenAIChatMessage => ({ role: 'assistant', content: null, tool_calls: ids.map(call) });
const result = (id: string): OpenAIChatMessage => ({ role: 'tool', tool_call_id: id, content: 'r' });
const sys: OpenAIChatMessage = { role: 'system', content: 's' };

describe('protectedFloor (benchmark)', () => {
  test('a tail that starts inside a tool exchange is widened to the call that opened it', () => {
    const h = [sys, u(), a(), u(), calls('1', '2'), result('1'), result('2'), a(), u()];
    // Last 3 start at result 2 -> back to the call at 4: messages 4..8, plus the head (the system message).
    expect(protectedFloor(h, 1, 3, perMessage)).toBe(6);
  });

  test('the last user message bounds the tail from below; keepLast 0 keeps from it on', () => {
    const h = [sys, u(), a(), u(), calls('1'), result('1'), a()];
    expect(protectedFloor(h, 1, 0, perMessage)).toBe(1 + 4);
    expect(protectedFloor(h, 0, 0, perMessage)).toBe(1 + 4); // the system message is always sent
  });

  test('a follow-up that opens new calls starts its own exchange: the bound stops there', () => {
    const h = [u(), calls('1'), result('1'), calls('2'), result('2'), a(), u()];
    expect(protectedFloor(h, 1, 3, perMessage)).toBe(1 + 4);
  });

  test('system and developer messages anywhere are counted, the head once', () => {
    const h = [sys, u(), { role: 'developer', content: 'd' } as OpenAIChatMessage, a(), u(), a(), u()];
    expect(protectedFloor(h, 2, 1, perMessage)).toBe(2 + 1 + 1);
  });
});
