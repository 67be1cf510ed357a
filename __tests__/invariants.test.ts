import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { buildGroups } from '../src/core/groups.js';
import { INVARIANTS } from '../src/core/invariants/index.js';
import { scanStructure } from '../src/core/structure.js';
import type { FormatName, MessageLens } from '../src/formats/lens.js';
import { convertMessages } from '../src/formats/convert.js';
import { repairHistory, validateMessages } from '../src/formats/profiles.js';
import { LENSES } from '../src/formats/registry.js';
import { generateConversation } from '../bench/fixtures/conversation.js';
import { brokenHistory } from './helpers/arbitraries.js';
import { propertyParams } from './helpers/property-runs.js';

/**
 * The shared invariants (every call answered, a result answers a call, no result twice) are each
 * one object with its check, its repair and its cut constraint. These tests hold each part to the
 * others: a valid history breaks none, its groups never split a span the invariant forbids cutting,
 * the profiles report exactly the invariant's findings, and repair leaves none.
 */

const FORMATS: readonly FormatName[] = ['openai', 'anthropic', 'gemini', 'openai-responses', 'ai-sdk', 'qwen-agent', 'hermes'];

const inFormat = (format: FormatName, seed: number): unknown[] => {
  const messages = generateConversation({ messages: 60, seed, parallelMax: 3, bulkyEvery: 5 });
  return format === 'openai' ? messages : convertMessages(messages, { from: 'openai', to: format }).messages as unknown[];
};

describe('each shared invariant: check, repair and cut constraint agree', () => {
  test.each(FORMATS)('%s: a valid history breaks none, and no group splits a span an invariant forbids cutting', (format) => {
    const lens = LENSES[format] as MessageLens<unknown>;
    for (const seed of [1, 2, 3]) {
      const messages = inFormat(format, seed);
      const structure = scanStructure(messages, lens);
      const { groupOf, regular } = buildGroups(messages, lens);
      expect(regular).toBe(true);
      for (const invariant of INVARIANTS) {
        expect(invariant.find(structure)).toEqual([]);
        const spans = invariant.cut(structure);
        expect(spans.length).toBeGreaterThan(0);
        for (const s of spans) expect(groupOf[s.end - 1]).toBe(groupOf[s.start]);
      }
    }
  });

  test('OpenAI: the profile reports each invariant where it finds a break, and repair leaves none', () => {
    const lens = LENSES.openai as MessageLens<unknown>;
    fc.assert(fc.property(brokenHistory(), (messages) => {
      const structure = scanStructure(messages, lens);
      const violations = validateMessages(messages, 'openai');
      for (const invariant of INVARIANTS) {
        const found = invariant.find(structure).length > 0;
        expect(violations.some((v) => v.rule === invariant.id)).toBe(found);
      }
      const repaired = repairHistory(messages, { format: 'openai' }).messages;
      const after = scanStructure(repaired, lens);
      for (const invariant of INVARIANTS) expect(invariant.find(after)).toEqual([]);
    }), propertyParams());
  });
});
