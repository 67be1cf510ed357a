import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { MAX_NESTING, nestedDeeperThan, pathDeeperThan, pathText } from '../src/core/nesting.js';
import { propertyParams } from './helpers/property-runs.js';

/** Levels of objects and arrays in `value` (a scalar is 0, `{}` and `[]` are 1), written apart from the code under test. */
function levels(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + children.reduce<number>((most, child) => Math.max(most, levels(child)), 0);
}

/** `value` wrapped in `n` alternating arrays and objects. */
function wrapped(value: unknown, n: number): unknown {
  let v = value;
  for (let k = 0; k < n; k++) v = k % 2 === 0 ? [v] : { key: v };
  return v;
}

describe('nestedDeeperThan', () => {
  test('is true exactly when the value has more levels than the limit (random JSON, random limits)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.nat(12), fc.integer({ min: 1, max: 8 }), (json, extra, limit) => {
        const value = wrapped(json, extra);
        expect(nestedDeeperThan(value, limit)).toBe(levels(value) > limit);
      }),
      propertyParams(),
    );
  });

  test('at the default limit: a chain of MAX_NESTING levels passes, one more does not; a chain of 200,000 levels is answered without overflowing the stack', () => {
    expect(nestedDeeperThan(wrapped('x', MAX_NESTING))).toBe(false);
    expect(nestedDeeperThan(wrapped('x', MAX_NESTING + 1))).toBe(true);
    expect(nestedDeeperThan(wrapped(1, 200_000))).toBe(true);
    for (const scalar of [null, undefined, 0, 'text', true]) expect(nestedDeeperThan(scalar)).toBe(false);
  });
});

describe('pathDeeperThan', () => {
  test('is defined exactly when nestedDeeperThan is, and its steps lead to an object or array one level past the limit', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.nat(12), fc.integer({ min: 1, max: 8 }), (json, extra, limit) => {
        const value = wrapped(json, extra);
        const steps = pathDeeperThan(value, limit);
        expect(steps !== undefined).toBe(nestedDeeperThan(value, limit));
        if (steps === undefined) return;
        expect(steps).toHaveLength(limit);
        let at: unknown = value;
        for (const step of steps) at = (at as Record<string | number, unknown>)[step];
        expect(typeof at === 'object' && at !== null).toBe(true);
      }),
      propertyParams(),
    );
  });

  test('a chain of 200,000 levels is answered without overflowing the stack; the path is written by where it starts', () => {
    const steps = pathDeeperThan({ messages: [{ role: 'user', content: [wrapped(1, 200_000)] }] });
    expect(steps).toHaveLength(MAX_NESTING);
    expect(pathText('', steps!)).toBe('messages[0].content[0].key[0].key[0]...');
    expect(pathText('tools', [0, 'a b', 'ok'])).toBe('tools[0]["a b"].ok');
    for (const scalar of [null, undefined, 0, 'text', true]) expect(pathDeeperThan(scalar)).toBeUndefined();
  });
});
