import assert from 'node:assert/strict';
import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { buildGroups, type Grouping } from '../src/core/groups.js';
import { repairHistory } from '../src/formats/profiles.js';
import { openaiChatLens } from '../src/formats/openai-chat/lens.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { anyHistory, validHistory } from './helpers/arbitraries.js';
import { corpusDescribe, loadCorpus } from './helpers/corpus.js';
import { propertyParams } from './helpers/property-runs.js';

const groupsOf = (messages: readonly OpenAIChatMessage[]) => buildGroups(messages, openaiChatLens);
const spans = (g: Grouping) => g.groups.map((x) => [x.start, x.end, x.type, x.complete]);

const call = (id: string, name = 'lookup') => ({ id, type: 'function', function: { name, arguments: '{}' } });
const calls = (...ids: string[]): OpenAIChatMessage => ({ role: 'assistant', content: null, tool_calls: ids.map((id) => call(id)) });
const result = (id: string, content = `result of ${id}`): OpenAIChatMessage => ({ role: 'tool', tool_call_id: id, content });
const user = (content: string): OpenAIChatMessage => ({ role: 'user', content });
const assistant = (content: string): OpenAIChatMessage => ({ role: 'assistant', content });

/** Asserts that the groups tile [0, n) in order and that `groupOf` agrees with them (plain asserts: hot loop). */
function expectTiling(messages: readonly OpenAIChatMessage[], g: Grouping) {
  assert.equal(g.groupOf.length, messages.length);
  let at = 0;
  g.groups.forEach((grp, k) => {
    assert.equal(grp.index, k, `group ${k} has index ${grp.index}`);
    assert.equal(grp.start, at, `group ${k} starts at ${grp.start}, expected ${at} (gap or overlap)`);
    assert.ok(grp.end > grp.start, `group ${k} is empty`);
    for (let i = grp.start; i < grp.end; i++) assert.equal(g.groupOf[i], k, `groupOf[${i}] is ${g.groupOf[i]}, expected ${k}`);
    at = grp.end;
  });
  assert.equal(at, messages.length, 'groups do not reach the end of the history');
}

/** Asserts that a turn holds its opener, every result it needs, and at most one follow-up after them. */
function expectWholeTurn(messages: readonly OpenAIChatMessage[], start: number, end: number) {
  const opener = messages[start];
  const where = `turn [${start}, ${end})`;
  const members = messages.slice(start + 1, end);
  let r = 0;
  while (r < members.length && (members[r].role === 'tool' || members[r].role === 'function')) r++;
  const results = members.slice(0, r);
  const rest = members.slice(r);
  // Results come right after the opener; then at most one assistant message that opens nothing.
  assert.ok(rest.length <= 1, `${where}: more than one message after its results`);
  for (const m of rest) {
    assert.equal(m.role, 'assistant', `${where}: follow-up is a ${m.role} message`);
    assert.ok((m.tool_calls ?? []).length === 0 && !m.function_call, `${where}: follow-up opens calls`);
  }
  if (opener.function_call) {
    assert.deepEqual(results.map((m) => m.name), [opener.function_call.name], `${where}: legacy result`);
  } else {
    const ids = (opener.tool_calls ?? []).map((c) => c.id);
    assert.deepEqual(results.map((m) => m.tool_call_id).sort(), [...ids].sort(), `${where}: results do not match calls`);
  }
}

describe('buildGroups: examples', () => {
  test('parallel calls answered out of order form one turn with their follow-up', () => {
    const messages = [
      { role: 'system', content: 'be brief' },
      user('weather in Paris and Tokyo?'),
      calls('call_a', 'call_b', 'call_c'),
      result('call_c'),
      result('call_a'),
      result('call_b'),
      assistant('Paris 18C, Tokyo 22C.'),
      user('thanks'),
    ];
    const g = groupsOf(messages);
    expect(spans(g)).toEqual([[0, 1, 'single', true], [1, 2, 'single', true], [2, 7, 'turn', true], [7, 8, 'single', true]]);
    expect(g.groups[0].system).toBe(true);
    expect(g.groups[1].userText).toBe(true);
    expect(g.groups[2].userText).toBe(false);
  });

  test('an id reused by a later turn pairs with its own turn, not the earlier one', () => {
    const messages = [
      user('first'),
      calls('call_1'),
      result('call_1', 'first answer'),
      assistant('done'),
      user('second'),
      calls('call_1'),
      result('call_1', 'second answer'),
      user('third'),
    ];
    expect(spans(groupsOf(messages))).toEqual([
      [0, 1, 'single', true], [1, 4, 'turn', true], [4, 5, 'single', true], [5, 7, 'turn', true], [7, 8, 'single', true],
    ]);
  });

  test('a legacy function_call turn takes its function result and follow-up', () => {
    const messages: OpenAIChatMessage[] = [
      user('what time is it?'),
      { role: 'assistant', content: null, function_call: { name: 'clock', arguments: '{}' } },
      { role: 'function', name: 'clock', content: '12:00' },
      assistant('It is noon.'),
    ];
    expect(spans(groupsOf(messages))).toEqual([[0, 1, 'single', true], [1, 4, 'turn', true]]);
  });

  test('back-to-back call turns stay separate (OpenAI does not split parallel calls)', () => {
    const messages = [calls('call_a'), result('call_a'), calls('call_b'), result('call_b'), assistant('ok')];
    expect(spans(groupsOf(messages))).toEqual([[0, 2, 'turn', true], [2, 5, 'turn', true]]);
  });

  test('a follow-up is not taken by a turn whose calls are not all answered', () => {
    const messages = [calls('call_a', 'call_b'), result('call_b'), assistant('partial')];
    expect(spans(groupsOf(messages))).toEqual([[0, 2, 'turn', false], [2, 3, 'single', true]]);
  });

  test('a user message between a call and its result leaves the turn incomplete and the result alone', () => {
    const messages = [calls('call_a'), user('hello?'), result('call_a')];
    expect(spans(groupsOf(messages))).toEqual([[0, 1, 'turn', false], [1, 2, 'single', true], [2, 3, 'single', true]]);
  });

  test('a result that answers no call of the turn ends its run', () => {
    const messages = [calls('call_a'), result('call_zz'), result('call_a'), assistant('x')];
    expect(spans(groupsOf(messages))).toEqual([[0, 1, 'turn', false], [1, 2, 'single', true], [2, 3, 'single', true], [3, 4, 'single', true]]);
  });

  test('an empty history has no groups', () => {
    const g = groupsOf([]);
    expect(g.groups).toHaveLength(0);
    expect(g.groupOf).toHaveLength(0);
  });
});

describe('buildGroups: properties', () => {
  test('groups tile any history (valid or broken): contiguous, no gaps or overlaps, groupOf consistent', () => {
    fc.assert(fc.property(anyHistory(), (messages) => {
      const g = groupsOf(messages);
      expectTiling(messages, g);
      for (const grp of g.groups) {
        if (grp.type === 'single') assert.equal(grp.end - grp.start, 1, `single group ${grp.index} spans ${grp.end - grp.start} messages`);
        else assert.ok(openaiChatLens.read(messages[grp.start]).calls.length > 0, `turn ${grp.index} does not start with calls`);
      }
    }), propertyParams());
  });

  test('in a valid history every turn holds its calls and all their results, and no result is outside a turn', () => {
    fc.assert(fc.property(validHistory(), (messages) => {
      const g = groupsOf(messages);
      for (const grp of g.groups) {
        const first = messages[grp.start];
        if (grp.type === 'turn') {
          assert.ok(grp.complete, `turn ${grp.index} is incomplete`);
          expectWholeTurn(messages, grp.start, grp.end);
        } else {
          assert.ok(first.role !== 'tool' && first.role !== 'function', `result at ${grp.start} is outside every turn`);
        }
        assert.equal(grp.system, grp.type === 'single' && (first.role === 'system' || first.role === 'developer'));
        assert.equal(grp.userText, messages.slice(grp.start, grp.end).some((m) => m.role === 'user'));
      }
    }), propertyParams());
  });
});

corpusDescribe(describe)('buildGroups over the shared corpus', () => {
  test('every turn is complete, and the 73 reused call ids pair with their own turn', () => {
    let reuses = 0;
    let turns = 0;
    for (const conv of loadCorpus()) {
      const messages = conv.messages;
      const g = groupsOf(messages);
      expectTiling(messages, g);
      for (const grp of g.groups) {
        if (grp.type !== 'turn') continue;
        turns++;
        assert.ok(grp.complete, `${conv.id}: turn at ${grp.start} is incomplete`);
        expectWholeTurn(messages, grp.start, grp.end);
      }
      const firstUse = new Map<string, number>();
      messages.forEach((m, i) => {
        for (const c of m.tool_calls ?? []) {
          const earlier = firstUse.get(c.id);
          if (earlier === undefined) {
            firstUse.set(c.id, i);
            continue;
          }
          reuses++;
          const mine = g.groups[g.groupOf[i]];
          const theirs = g.groups[g.groupOf[earlier]];
          expect(mine.index).not.toBe(theirs.index);
          expect(mine.start).toBe(i);
          const answersIn = (start: number, end: number) => messages.slice(start, end).filter((r) => r.tool_call_id === c.id);
          expect(answersIn(mine.start, mine.end)).toHaveLength(1);
          expect(answersIn(theirs.start, theirs.end)).toHaveLength(1);
        }
      });
    }
    expect(reuses).toBe(73);
    expect(turns).toBeGreaterThan(1000);
  });
});

describe('Grouping.regular', () => {
  test('is true exactly when repairHistory has nothing to change (so the repair pass can be skipped)', () => {
    let irregular = 0;
    fc.assert(fc.property(anyHistory(), (messages) => {
      const changes = repairHistory(messages, { format: 'openai' }).actions.filter((a) => a.action !== 'reported');
      const { regular } = buildGroups(messages, openaiChatLens);
      if (!regular) irregular++;
      expect(regular).toBe(changes.length === 0);
    }), propertyParams());
    expect(irregular).toBeGreaterThan(0);
  });
});

describe('buildGroups with resume', () => {
  test('resuming from an earlier grouping of a shared prefix equals a fresh pass', () => {
    fc.assert(fc.property(anyHistory(), anyHistory(), fc.nat(), (history, other, pick) => {
      // The earlier history shares the first `a` messages (same objects), then went elsewhere.
      const a = pick % (history.length + 1);
      const earlier = [...history.slice(0, a), ...other];
      let shared = 0;
      while (shared < Math.min(history.length, earlier.length) && history[shared] === earlier[shared]) shared++;
      const old = buildGroups(earlier, openaiChatLens);
      const resumed = buildGroups(history, openaiChatLens, { grouping: old, shared });
      const fresh = buildGroups(history, openaiChatLens);
      expect(resumed.groups).toEqual(fresh.groups);
      expect([...resumed.groupOf]).toEqual([...fresh.groupOf]);
      expect(resumed.regular).toBe(fresh.regular);
      expect(resumed.firstIrregular).toBe(fresh.firstIrregular);
    }), propertyParams());
  });
});
