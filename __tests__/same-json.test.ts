import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { sameJson } from '../src/core/same-json.js';
import { propertyParams } from './helpers/property-runs.js';

describe('sameJson', () => {
  test('agrees with comparing canonical JSON texts, for any two JSON values', () => {
    const canonical = (v: unknown): string => JSON.stringify(v, (_k, x) => (x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1))) : x));
    const value = fc.jsonValue({ maxDepth: 3 });
    fc.assert(fc.property(value, value, (a, b) => {
      expect(sameJson(a, b)).toBe(canonical(a) === canonical(b));
      expect(sameJson(a, JSON.parse(JSON.stringify(a)))).toBe(true);
    }), propertyParams());
  });

  test('examples', () => {
    expect(sameJson({ role: 'user', content: 'x' }, { content: 'x', role: 'user' })).toBe(true);
    expect(sameJson({ role: 'user', content: 'x' }, { role: 'user', content: 'y' })).toBe(false);
    expect(sameJson({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(sameJson({ a: 1, b: 2 }, { a: 1 })).toBe(false);
    expect(sameJson([1, 2], [1, 2, 3])).toBe(false);
    expect(sameJson([], {})).toBe(false);
    expect(sameJson(null, {})).toBe(false);
    expect(sameJson({ a: null }, { a: null })).toBe(true);
  });
});
