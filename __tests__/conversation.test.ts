import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { validateMessages } from '../src/formats/profiles.js';
import { openaiProfile } from '../src/formats/openai-chat/profile.js';
import { generateConversation, modelRequestEnds, mulberry32 } from '../bench/fixtures/conversation.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';

/** Ids of each assistant turn's calls, in order. */
function callTurns(messages: readonly OpenAIChatMessage[]): string[][] {
  return messages.filter((m) => m.role === 'assistant' && (m.tool_calls?.length ?? 0) > 0).map((m) => m.tool_calls!.map((c) => c.id));
}

describe('mulberry32', () => {
  test('is a function of its seed alone and stays in [0, 1)', () => {
    const a = mulberry32(99);
    const b = mulberry32(99);
    const c = mulberry32(100);
    const xs = Array.from({ length: 1000 }, () => a());
    expect(Array.from({ length: 1000 }, () => b())).toEqual(xs);
    expect(Array.from({ length: 1000 }, () => c())).not.toEqual(xs);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    // Not stuck on a few values.
    expect(new Set(xs.map((x) => Math.floor(x * 10))).size).toBe(10);
  });
});

describe('generateConversation', () => {
  test('the same seed gives the same conversation, another seed a different one', () => {
    const a = generateConversation({ messages: 800, seed: 3 });
    expect(generateConversation({ messages: 800, seed: 3 })).toEqual(a);
    expect(generateConversation({ messages: 800, seed: 4 })).not.toEqual(a);
  });

  test('returns exactly the requested number of messages, starting with the system prompt', () => {
    for (const n of [0, 1, 2, 3, 4, 5, 6, 7, 13, 100, 999, 1000, 2500]) {
      const msgs = generateConversation({ messages: n, seed: n });
      expect(msgs).toHaveLength(n);
      if (n > 0) expect(msgs[0].role).toBe('system');
    }
  });

  test('every generated history is valid for OpenAI, whatever the length, seed and parallelism', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 400 }), fc.integer({ min: 0, max: 2 ** 31 - 1 }), fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 30 }), (messages, seed, parallelMax, bulkyEvery) => {
        const msgs = generateConversation({ messages, seed, parallelMax, bulkyEvery });
        expect(msgs).toHaveLength(messages);
        expect(validateMessages(msgs, openaiProfile)).toEqual([]);
        for (const turn of callTurns(msgs)) expect(turn.length).toBeLessThanOrEqual(parallelMax);
      }),
      { seed: 20240611, numRuns: 100 },
    );
  });

  test('a 1000-message history is valid and has parallel calls, ids reused across turns, bulky results and mixed text', () => {
    const msgs = generateConversation({ messages: 1000, seed: 11 });
    expect(validateMessages(msgs, openaiProfile)).toEqual([]);
    const turns = callTurns(msgs);
    expect(turns.some((ids) => ids.length >= 2)).toBe(true);
    expect(turns.some((ids) => ids.length === 4)).toBe(true);
    // Ids are unique inside a turn, and some id is used again by a later turn.
    for (const ids of turns) expect(new Set(ids).size).toBe(ids.length);
    const firstTurn = new Map<string, number>();
    let reused = 0;
    turns.forEach((ids, t) => {
      for (const id of ids) {
        const seen = firstTurn.get(id);
        if (seen === undefined) firstTurn.set(id, t);
        else if (seen !== t) reused++;
      }
    });
    expect(reused).toBeGreaterThan(0);
    const tool = msgs.filter((m) => m.role === 'tool').map((m) => m.content as string);
    const bulky = tool.filter((c) => c.length >= 2000);
    expect(bulky.length).toBeGreaterThan(0);
    expect(bulky.every((c) => c.length <= 21_000)).toBe(true);
    expect(bulky.length).toBeLessThan(tool.length / 5);
    const text = msgs.map((m) => (typeof m.content === 'string' ? m.content : ''));
    expect(text.some((c) => /[\u4e00-\u9fff]/.test(c))).toBe(true);
    expect(text.some((c) => /^[A-Za-z]/.test(c) && !/[\u4e00-\u9fff]/.test(c))).toBe(true);
    expect(tool.filter((c) => c.startsWith('{')).every((c) => typeof JSON.parse(c) === 'object')).toBe(true);
  });

  test('parallelMax 1 makes one call per assistant message; bulkyEvery 1 makes every result bulky', () => {
    const single = generateConversation({ messages: 300, seed: 5, parallelMax: 1 });
    expect(callTurns(single).every((ids) => ids.length === 1)).toBe(true);
    const bulky = generateConversation({ messages: 60, seed: 5, bulkyEvery: 1 });
    const results = bulky.filter((m) => m.role === 'tool');
    expect(results.length).toBeGreaterThan(0);
    expect(results.every((m) => (m.content as string).length >= 2000)).toBe(true);
  });

  test('rejects a length that is not a non-negative integer', () => {
    expect(() => generateConversation({ messages: -1, seed: 1 })).toThrow(RangeError);
    expect(() => generateConversation({ messages: 2.5, seed: 1 })).toThrow(RangeError);
  });
});

describe('modelRequestEnds', () => {
  test('lists one request per assistant message: the history right before it, which never ends in a dangling call', () => {
    const msgs = generateConversation({ messages: 500, seed: 2 });
    const ends = modelRequestEnds(msgs);
    expect(ends.length).toBe(msgs.filter((m) => m.role === 'assistant').length);
    for (const end of ends) {
      expect(msgs[end].role).toBe('assistant');
      expect(['user', 'tool']).toContain(msgs[end - 1].role);
      expect(validateMessages(msgs.slice(0, end), openaiProfile)).toEqual([]);
    }
  });
});
