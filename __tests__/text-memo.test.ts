import { describe, expect, test } from '@jest/globals';
import { MAX_GENERATION_TEXTS, TextMemo } from '../src/tokens/text-memo.js';

/**
 * The memo of counts and fingerprints: bounded by the bytes of text it keeps, and by the number of
 * texts per generation (a `Map` that grows past 2^17 entries copies them all in one long step).
 */
describe('TextMemo', () => {
  test('keeps at most its bytes; recent texts stay, the texts of two generations ago are gone', () => {
    const memo = new TextMemo<number>(1_000);
    for (let i = 0; i < 200; i++) memo.set(`text number ${i}`, i);
    const { bytes } = memo.size();
    expect(bytes).toBeLessThanOrEqual(1_000);
    expect(memo.get('text number 199')).toBe(199);
    expect(memo.get('text number 0')).toBeUndefined();
  });

  test('a text used again from the old generation survives the next turnover', () => {
    const memo = new TextMemo<number>(400);
    memo.set('kept by use', 1);
    // Fill the young generation so 'kept by use' becomes old, then use it.
    for (let i = 0; i < 8; i++) memo.set(`filler ${i}`, i);
    expect(memo.get('kept by use')).toBe(1);
    for (let i = 8; i < 14; i++) memo.set(`filler ${i}`, i);
    expect(memo.get('kept by use')).toBe(1);
  });

  test('many short texts: a generation ends at MAX_GENERATION_TEXTS texts, far under the byte bound', () => {
    const memo = new TextMemo<number>(32 * 1024 * 1024);
    const n = MAX_GENERATION_TEXTS * 4 + 17;
    for (let i = 0; i < n; i++) memo.set(`n${i}`, i);
    const { texts, bytes } = memo.size();
    // Every text is at most 8 characters: without the cap all of them would fit in the bytes.
    expect(n * 2 * 8).toBeLessThan(32 * 1024 * 1024 / 2);
    expect(texts).toBeLessThanOrEqual(2 * MAX_GENERATION_TEXTS);
    expect(texts).toBeGreaterThan(MAX_GENERATION_TEXTS);
    expect(bytes).toBeLessThan(32 * 1024 * 1024);
    // The newest texts are all there, with their values.
    for (let i = n - MAX_GENERATION_TEXTS; i < n; i++) if (memo.get(`n${i}`) !== i) throw new Error(`n${i} lost`);
    expect(memo.get('n0')).toBeUndefined();
  });
});
