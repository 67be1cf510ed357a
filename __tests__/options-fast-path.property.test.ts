import { isDeepStrictEqual } from 'node:util';
import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { InputError } from '../src/errors.js';
import { commonCompressOptions } from '../src/runtime/options-fast-path.js';
import { schemaCompressOptions } from '../src/runtime/options.js';
import { createHistoryCache } from '../src/runtime/history-cache.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { propertyParams } from './helpers/property-runs.js';

/**
 * The hand-written check of common `compressContext` options may only accept what the schema
 * accepts, and must return what the schema returns; everything else it leaves to the schema. The
 * oracle is the schema itself (zod), which the fast path does not call.
 */
const counter = createTokenCounter();
const historyCache = createHistoryCache();

const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ min: -3, max: 200_000 }),
  fc.constantFrom(0, 1, -0, 0.5, 1.5, 2 ** 53, -1, Number.NaN, Number.POSITIVE_INFINITY, 1e-9, 0.7, 1),
  fc.constantFrom('', 'x', 'user', 'system', 'auto', 'openai', 'anthropic', 'gemini', 'hermes', 'nope', 'gpt-4o'),
  fc.boolean(),
  fc.constantFrom(null, undefined, [], {}, counter, historyCache, { text: 1, message: () => 0 }, { recall: () => undefined, remember: () => undefined }, () => 0),
);

/** Each key with values that are usually valid for it, and now and then anything at all. */
const VALID: Record<string, fc.Arbitrary<unknown>> = {
  maxContextTokens: fc.integer({ min: 1, max: 200_000 }),
  compressionThresholdTokens: fc.integer({ min: 1, max: 200_000 }),
  keepFirst: fc.nat(8),
  keepLast: fc.nat(8),
  reserveOutputTokens: fc.nat(100),
  lowWaterMark: fc.double({ min: 0.01, max: 1, noNaN: true }),
  summaryRole: fc.constantFrom('user', 'system'),
  format: fc.constantFrom('auto', 'openai', 'anthropic', 'gemini', 'hermes', 'qwen-agent', 'ai-sdk', 'openai-responses'),
  model: fc.string(),
  repair: fc.boolean(),
  chatId: fc.string({ minLength: 1 }),
  counter: fc.constant(counter),
  historyCache: fc.constant(historyCache),
  // Keys the fast path always leaves to the schema.
  toolOutputTrim: fc.oneof(fc.boolean(), fc.record({ minChars: fc.nat(5000) })),
  summary: fc.constantFrom(null, { text: 's', coveredIds: ['a'] }),
  tools: fc.constant([{ type: 'function', function: { name: 'f' } }]),
  provider: fc.constantFrom('openai', 'anthropic'),
  maxTokens: fc.nat(),
  constructor: fc.constant(1),
};

const COMMON = Object.keys(VALID).slice(0, 13);
const OTHERS = Object.keys(VALID).slice(13);
/** Values at and just past every bound the rules have. */
const edge = fc.constantFrom(0, -0, 1, -1, 0.5, 1.5, 1 + 2 ** -52, 2 ** -1074, 2 ** 53 - 1, 2 ** 53, Number.NaN, Number.POSITIVE_INFINITY, '', ' ', null);
const valueFor = (k: string) => fc.oneof({ weight: 6, arbitrary: VALID[k] }, { weight: 3, arbitrary: edge }, { weight: 1, arbitrary: anyValue });
/** Up to four common keys, and in one run of four also a key only the schema reads. */
const optionsArb = fc.tuple(
  fc.uniqueArray(fc.constantFrom(...COMMON), { maxLength: 4 }),
  fc.option(fc.constantFrom(...OTHERS), { freq: 3 }),
).chain(([keys, other]) => fc.record(Object.fromEntries([...keys, ...(other === null ? [] : [other])].map((k) => [k, valueFor(k)])), { noNullPrototype: true }));

function bySchema(options: unknown): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: schemaCompressOptions(options) };
  } catch (error) {
    if (!InputError.isInstance(error)) throw error;
    return { ok: false };
  }
}

describe('common compressContext options checked by hand', () => {
  test('accepted only when the schema accepts them, and then equal to what the schema returns (same keys, same values, same objects)', () => {
    let accepted = 0;
    let deferred = 0;
    let deferredValid = 0;
    fc.assert(fc.property(optionsArb, (options) => {
      const fast = commonCompressOptions(options);
      const schema = bySchema(options);
      if (fast === undefined) {
        deferred++;
        if (schema.ok) deferredValid++;
        return;
      }
      accepted++;
      expect(schema.ok).toBe(true);
      if (!schema.ok) return;
      expect(Object.keys(fast).sort()).toEqual(Object.keys(schema.value as object).sort());
      if (!isDeepStrictEqual(fast, schema.value)) expect(fast).toEqual(schema.value);
      for (const key of ['counter', 'historyCache'] as const) expect((fast as Record<string, unknown>)[key]).toBe((schema.value as Record<string, unknown>)[key]);
      expect(fast).not.toBe(options); // a copy: the caller's object is never handed on
    }), propertyParams());
    // Both sides of the check are reached, including valid options left to the schema.
    expect(accepted).toBeGreaterThan(propertyParams().numRuns / 10);
    expect(deferred).toBeGreaterThan(propertyParams().numRuns / 10);
    expect(deferredValid).toBeGreaterThan(0);
  });

  test('every common key with every edge value, alone and beside valid options: accepted exactly when the schema accepts, with the same result', () => {
    const edges: unknown[] = [
      0, -0, 1, -1, 2, 0.5, 1.5, 1 + 2 ** -52, 1 - 2 ** -53, 2 ** -1074, 2 ** 53 - 1, 2 ** 53, -(2 ** 53), Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY,
      '', ' ', 'user', 'system', 'auto', 'openai', 'OpenAI', 'nope', true, false, null, undefined, [], {}, () => 0,
      counter, historyCache, { text: () => 0 }, { text: () => 0, message: 1 }, { recall: () => undefined }, { recall: () => undefined, remember: 1 },
    ];
    const base = { maxContextTokens: 4000, keepLast: 2, chatId: 'c', counter, historyCache };
    let checked = 0;
    for (const key of COMMON) {
      for (const value of edges) {
        for (const options of [{ [key]: value }, { ...base, [key]: value }]) {
          const fast = commonCompressOptions(options);
          const schema = bySchema(options);
          // Every valid set of common options is taken by hand: nothing here needs the schema.
          expect({ key, value, accepted: fast !== undefined }).toEqual({ key, value, accepted: schema.ok });
          if (fast !== undefined && schema.ok && !isDeepStrictEqual(fast, schema.value)) expect(fast).toEqual(schema.value);
          checked++;
        }
      }
    }
    expect(checked).toBe(COMMON.length * edges.length * 2);
  });

  test('non-plain objects and the schema\'s own refusals are left to the schema', () => {
    expect(commonCompressOptions(undefined)).toBeUndefined();
    expect(commonCompressOptions(null)).toBeUndefined();
    expect(commonCompressOptions([])).toBeUndefined();
    expect(commonCompressOptions(Object.assign(Object.create(null), { keepLast: 2 }))).toBeUndefined();
    expect(commonCompressOptions(Object.assign(Object.create({ maxContextTokens: 5 }), { keepLast: 2 }))).toBeUndefined();
    expect(commonCompressOptions({ maxContextTokens: 0 })).toBeUndefined();
    expect(commonCompressOptions({ chatId: '' })).toBeUndefined();
    expect(commonCompressOptions({ maxTokens: 10 })).toBeUndefined();
    expect(commonCompressOptions({ toString: 1 })).toBeUndefined();
    expect(commonCompressOptions({ keepLast: 2, chatId: 'c', counter })).toEqual({ keepLast: 2, chatId: 'c', counter });
  });
});
