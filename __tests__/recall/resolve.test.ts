import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { MemoryStore } from '../../src/store/memory-store.js';
import { resolveRecall, type RecallSource } from '../../src/recall/resolve.js';
import type { OriginalRecord } from '../../src/store/originals.js';
import { fitText } from '../../src/recall/fit-text.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import type { ChatState } from '../../src/store/state.js';
import { InputError } from '../../src/errors.js';
import { propertyParams } from '../helpers/property-runs.js';

const counter = createTokenCounter();
const count = counter.text;

/** A chat whose summary covers six messages, each kept as an original. */
async function storeWithSummary(): Promise<{ store: MemoryStore; records: OriginalRecord[] }> {
  const store = new MemoryStore();
  const records: OriginalRecord[] = [
    'Open the quarterly ledger for the north depot and list the late invoices.',
    '-> call read_ledger({"depot":"north","quarter":"Q3"}) [id call_1]',
    '<- result of read_ledger [id call_1]: {"late":["INV-20931","INV-20977"],"total":"4,210.50 EUR"}',
    'Two invoices are late: INV-20931 and INV-20977, 4,210.50 EUR in all.',
    `A long pasted note: ${'lorem ipsum dolor sit amet '.repeat(300)}`,
    'Thanks. Also check whether the forklift maintenance was scheduled for the depot.',
  ].map((text, i) => ({ id: `${i + 1}:${'f'.repeat(16)}`, index: i + 1, role: i % 2 === 0 ? 'user' : 'assistant', text, raw: JSON.stringify({ content: text }) }));
  const state: ChatState = {
    chatId: 'chat', version: 1, summary: 'folded', coveredIds: records.map((r) => r.id), summarizer: 'test',
    tokensBefore: 100, tokensAfter: 2, createdAt: 't', updatedAt: 't',
  };
  await store.commit(state, 0);
  await store.putOriginals('chat', records);
  return { store, records };
}

describe('resolveRecall', () => {
  test('ids by number (#k, k, a whole number) and by message id, in the order asked, then search hits without repeats', async () => {
    const { store, records } = await storeWithSummary();
    const answer = await resolveRecall(store, 'chat', { ids: ['#4', 2, records[0].id], query: 'INV-20977' }, { maxTokens: 2000, countTokens: count });
    expect(answer.isError).toBe(false);
    // #3 holds INV-20977 too and comes from the search; #4 was asked by number and is not repeated.
    expect(answer.ids).toEqual([records[3].id, records[1].id, records[0].id, records[2].id]);
    expect(answer.text).toContain('--- #4 (assistant) ---\nTwo invoices are late');
    expect(answer.text).toContain('--- #2 (assistant) ---\n-> call read_ledger');
    expect(answer.text.indexOf('#4 (assistant)')).toBeLessThan(answer.text.indexOf('#2 (assistant)'));
    expect(answer.text.match(/--- #4 /g)).toHaveLength(1);
  });

  test('a JSON text of arguments works as the object does (OpenAI sends arguments as text)', async () => {
    const { store } = await storeWithSummary();
    const a = await resolveRecall(store, 'chat', '{"ids":["#1"]}', { maxTokens: 500, countTokens: count });
    const b = await resolveRecall(store, 'chat', { ids: ['#1'] }, { maxTokens: 500, countTokens: count });
    expect(a).toEqual(b);
    expect(a.text).toContain('quarterly ledger');
  });

  test('numbers outside the summary and originals not kept are named, not errors', async () => {
    const { store } = await storeWithSummary();
    const answer = await resolveRecall(store, 'chat', { ids: ['#99', '7:unknown'] }, { maxTokens: 500, countTokens: count });
    expect(answer.isError).toBe(false);
    expect(answer.text).toContain('#99: not a summarized message (they are #1-#6)');
    expect(answer.text).toContain('message 7:unknown: its original was not kept');
    const none = await resolveRecall(store, 'no-summary', { ids: ['#1'] }, { maxTokens: 500, countTokens: count });
    expect(none.text).toContain('no message of this conversation is summarized yet');
  });

  test('bounded: whole records while they fit, then one cut with a marker, then a count of what was left out', async () => {
    const { store } = await storeWithSummary();
    const answer = await resolveRecall(store, 'chat', { ids: ['#4', '#5', '#6', '#1'] }, { maxTokens: 200, countTokens: count });
    expect(count(answer.text)).toBeLessThanOrEqual(200);
    expect(answer.text).toContain('Two invoices are late');
    expect(answer.text).toMatch(/\[\.\.\. cut to fit 200 tokens\]/);
    expect(answer.text).toMatch(/\[2 more message\(s\) left out to fit 200 tokens; ask for fewer ids\]$/);
    expect(answer.ids).toHaveLength(2);
  });

  test('bad arguments give an error text naming the field and the rule', async () => {
    const { store } = await storeWithSummary();
    const cases: [unknown, RegExp][] = [
      ['not json', /arguments must be a JSON object .*got text that is not JSON/],
      [[1, 2], /arguments must be a JSON object .*got an array/],
      [{}, /pass "ids" .* or "query"/],
      [{ ids: {} }, /^ctxfold_recall error: ids: must be an array of message numbers/],
      [{ ids: [null] }, /ids\[0\]: must be a message number/],
      [{ ids: Array.from({ length: 51 }, (_, i) => `#${i + 1}`) }, /ids: at most 50 per call, got 51/],
      [{ query: 42 }, /query: must be a string/],
      [{ query: 'x'.repeat(1001) }, /query: must be at most 1000 characters/],
      [{ ids: ['#1'], filter: 'x' }, /unknown field "filter": the fields are "ids" .* and "query"/],
    ];
    for (const [args, rule] of cases) {
      const answer = await resolveRecall(store, 'chat', args, { maxTokens: 300, countTokens: count });
      expect({ args, isError: answer.isError, text: answer.text }).toEqual({ args, isError: true, text: expect.stringMatching(rule) });
    }
  });

  test('a failing store is an error text, not a rejection; bad options are an InputError', async () => {
    const failing: RecallSource = {
      get: async () => { throw new Error('disk unplugged'); },
      putOriginals: async () => {},
      getOriginals: async () => [],
      searchOriginals: async () => [],
    };
    const answer = await resolveRecall(failing, 'chat', { ids: ['#1'] }, { maxTokens: 100, countTokens: count });
    expect(answer).toEqual({ isError: true, ids: [], text: expect.stringMatching(/the store did not answer \(disk unplugged\)/) });
    const { store } = await storeWithSummary();
    await expect(resolveRecall(store, 'chat', { ids: ['#1'] }, { maxTokens: 0, countTokens: count })).rejects.toThrow(InputError);
  });

  test('property: any arguments and any bound give a text within the bound, and never throw', async () => {
    const { store } = await storeWithSummary();
    const args = fc.oneof(
      fc.anything(),
      fc.json(),
      fc.record({ ids: fc.oneof(fc.array(fc.oneof(fc.string(), fc.integer({ min: -3, max: 9 }), fc.constantFrom('#1', '#5', '#6', '6'))), fc.anything()), query: fc.oneof(fc.string(), fc.constantFrom('INV-20931', 'lorem', 'depot'), fc.anything()) }, { requiredKeys: [] }),
    );
    await fc.assert(fc.asyncProperty(args, fc.integer({ min: 1, max: 400 }), async (a, maxTokens) => {
      const answer = await resolveRecall(store, 'chat', a, { maxTokens, countTokens: count });
      expect(typeof answer.text).toBe('string');
      expect(count(answer.text)).toBeLessThanOrEqual(maxTokens);
    }), { ...propertyParams(), numRuns: Math.min(300, propertyParams().numRuns) });
  });
});

describe('fitText', () => {
  test('property: the result is a prefix (plus the marker) within the bound', () => {
    fc.assert(fc.property(fc.string({ maxLength: 600, unit: 'grapheme', size: 'max' }), fc.integer({ min: 0, max: 80 }), (text, max) => {
      const out = fitText(text, max, count, ' [cut]');
      expect(count(out)).toBeLessThanOrEqual(Math.max(0, max));
      const body = out.endsWith(' [cut]') && out !== text ? out.slice(0, -' [cut]'.length) : out;
      expect(text.startsWith(body)).toBe(true);
    }), { ...propertyParams(), numRuns: Math.min(300, propertyParams().numRuns) });
  });
});
