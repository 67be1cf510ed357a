import assert from 'node:assert/strict';
import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { alignCut, headEnd, lastUserGroupStart, tailStart } from '../src/core/boundary.js';
import { buildGroups, type Grouping } from '../src/core/groups.js';
import { openaiChatLens } from '../src/formats/openai-chat/lens.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { anyHistory } from './helpers/arbitraries.js';
import { propertyParams } from './helpers/property-runs.js';

const groupsOf = (messages: readonly OpenAIChatMessage[]) => buildGroups(messages, openaiChatLens);

/** Indexes where a cut may fall: 0, n, and every group start. */
function cutPoints(g: Grouping): Set<number> {
  const points = new Set<number>([0, g.groupOf.length]);
  for (const grp of g.groups) points.add(grp.start);
  return points;
}

const history: OpenAIChatMessage[] = [
  { role: 'system', content: 'be brief' }, // 0
  { role: 'user', content: 'order a part' }, // 1
  { role: 'assistant', content: null, tool_calls: [
    { id: 'call_a', type: 'function', function: { name: 'search', arguments: '{}' } },
    { id: 'call_b', type: 'function', function: { name: 'price', arguments: '{}' } },
  ] }, // 2
  { role: 'tool', tool_call_id: 'call_b', content: '120 USD' }, // 3
  { role: 'tool', tool_call_id: 'call_a', content: 'QMX417' }, // 4
  { role: 'assistant', content: 'QMX417 for 120 USD?' }, // 5
  { role: 'user', content: 'yes' }, // 6
  { role: 'assistant', content: 'Booked.' }, // 7
];

describe('boundary: examples', () => {
  const g = groupsOf(history);

  test('alignCut snaps a cut inside a turn back to the turn start', () => {
    expect([3, 4, 5].map((c) => alignCut(g, c))).toEqual([2, 2, 2]);
    expect(alignCut(g, 2)).toBe(2);
    expect(alignCut(g, 6)).toBe(6);
    expect(alignCut(g, -3)).toBe(0);
    expect(alignCut(g, 8)).toBe(8);
    expect(alignCut(g, 99)).toBe(8);
  });

  test('headEnd rounds the protected prefix out to whole groups', () => {
    expect(headEnd(g, 0)).toBe(0);
    expect(headEnd(g, 1)).toBe(1);
    expect(headEnd(g, 3)).toBe(6);
    expect(headEnd(g, 20)).toBe(8);
  });

  test('tailStart keeps whole groups and always reaches back to the last user message', () => {
    expect(tailStart(g, 0, 0)).toBe(6);
    expect(tailStart(g, 1, 0)).toBe(6);
    expect(tailStart(g, 4, 0)).toBe(2);
    expect(tailStart(g, 4, 5)).toBe(5);
    expect(lastUserGroupStart(g)).toBe(6);
  });

  test('without any user message the last group is the protected one', () => {
    const noUser = history.filter((m) => m.role !== 'user');
    const h = groupsOf(noUser);
    expect(lastUserGroupStart(h)).toBe(h.groups[h.groups.length - 1].start);
    expect(lastUserGroupStart(groupsOf([]))).toBe(0);
  });
});

describe('boundary: properties', () => {
  test('alignCut returns the start of the group holding the cut, never after the cut', () => {
    fc.assert(fc.property(anyHistory(), fc.integer({ min: -2, max: 90 }), (messages, cut) => {
      const g = groupsOf(messages);
      const n = messages.length;
      const a = alignCut(g, cut);
      expect(cutPoints(g).has(a)).toBe(true);
      expect(a).toBeLessThanOrEqual(Math.max(0, cut));
      if (cut > 0 && cut < n) expect(a).toBe(g.groups[g.groupOf[cut]].start);
      if (cut >= n) expect(a).toBe(n);
      // No group straddles the aligned cut.
      for (const grp of g.groups) assert.ok(!(grp.start < a && a < grp.end), `group [${grp.start}, ${grp.end}) straddles ${a}`);
    }), propertyParams());
  });

  test('headEnd covers keepFirst at a group boundary; tailStart covers keepLast and the last user turn', () => {
    fc.assert(fc.property(anyHistory(), fc.nat(6), fc.nat(14), (messages, keepFirst, keepLast) => {
      const g = groupsOf(messages);
      const n = messages.length;
      const points = cutPoints(g);
      const h = headEnd(g, keepFirst);
      expect(points.has(h)).toBe(true);
      expect(h).toBeGreaterThanOrEqual(Math.min(keepFirst, n));
      if (keepFirst > 0 && keepFirst < n) expect(h).toBe(g.groups[g.groupOf[keepFirst - 1]].end);

      const t = tailStart(g, keepLast, h);
      expect(points.has(t)).toBe(true);
      expect(t).toBeGreaterThanOrEqual(h);
      expect(t).toBeLessThanOrEqual(Math.max(h, n - keepLast));
      expect(t).toBeLessThanOrEqual(Math.max(h, lastUserGroupStart(g)));

      const lastUser = messages.map((m) => m.role).lastIndexOf('user');
      if (lastUser >= 0) expect(lastUserGroupStart(g)).toBe(lastUser);
    }), propertyParams());
  });
});
