import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { FACT_PREFIX_MARGIN, factsFromTextInPrefixes } from '../src/summarize/facts.js';
import { propertyParams } from './helpers/property-runs.js';

/**
 * A long text is read for facts in growing prefixes (`factsFromTextInPrefixes`), stopping once a
 * prefix holds the first `limit` facts. The invariant: the facts are exactly those read from the
 * whole text. Texts here are made of pieces of every shape the rules take (ids, dates, amounts
 * split over a line break, emails, long URLs and paths, quoted names, capitals), with line breaks
 * placed at random, and read with prefixes a little over the margin so most cuts land among them.
 */
const PIECES: readonly string[] = [
  'order ORD-2025-004211 shipped', 'ticket TCK-77120', 'on 2025-03-07T10:42:00Z', 'at 14:05', 'March 4, 2025',
  'total 1,249.50 EUR', '12.50\nUSD', '$ 99', '371 ms', '4.37 s', 'passed=457', 'user_id: u_81273', 'id=QX7P2K',
  'mail ana.lopez@example.com', '+1 (415) 555-0199', 'see https://example.org/a/b?x=1&y=2', 'src/core/plan.ts:381:7',
  '/var/data/batch_12/part-00017.parquet', 'commit 9f3c2ab71', 'v2.14.3', 'card ending 4242', '"Blue Harbor"',
  'THE QUICK CHECK FAILED AGAIN', 'ABC123 XYZ', '#4521', 'build 7781203', 'note: nothing here', 'and then', 'the', '\n', '\n\n',
];
const longUrl = fc.integer({ min: 200, max: 1500 }).map((n) => `https://files.example.net/${'k'.repeat(n)}.bin`);
/** Values a rule may take across a line break: what a cut there could split. */
const ACROSS_LINES: readonly string[] = ['12.50\nUSD', 'EUR\n1,249.50', '99\n€', 'due\n2025-03-07', 'THE BUILD\nFAILED ON ABC123 AGAIN'];
const piece = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom(...PIECES) },
  { weight: 6, arbitrary: fc.constantFrom(...ACROSS_LINES) },
  { weight: 1, arbitrary: longUrl },
  { weight: 2, arbitrary: fc.integer({ min: 10_000, max: 99_999_999 }).map(String) },
);
const textArb = fc.array(fc.tuple(piece, fc.constantFrom(' ', ' ', '\n', ', ', '. ')), { minLength: 50, maxLength: 900 }).map((xs) => xs.map(([p, sep]) => p + sep).join(''));

describe('facts of a long text, read in prefixes', () => {
  test('the same facts as reading the whole text, at every limit and source', () => {
    let early = 0;
    fc.assert(fc.property(textArb, fc.integer({ min: 1, max: 250 }), fc.constantFrom('prose' as const, 'data' as const), fc.integer({ min: FACT_PREFIX_MARGIN + 64, max: 6 * FACT_PREFIX_MARGIN }), (text, limit, source, first) => {
      const whole = factsFromTextInPrefixes(text, limit, source, Number.POSITIVE_INFINITY);
      const prefixed = factsFromTextInPrefixes(text, limit, source, first);
      expect(prefixed).toEqual(whole);
      if (whole.length === limit && text.length > first) early++;
    }), propertyParams());
    // The prefixes did stop early in some runs (not only the whole-text fallback).
    expect(early).toBeGreaterThan(0);
  });

  test('a value a prefix\'s cut splits is read whole: the prefix is not trusted near its cut', () => {
    // Filler lines with one fact each, then an amount whose code and number a line break separates,
    // the break being the last one before the first prefix's end.
    const first = 2 * FACT_PREFIX_MARGIN;
    let text = '';
    let n = 0;
    while (text.length < first - 40) text += `step ${n} took 371 ms for job JOB-${10_000 + n++}\n`;
    text = `${text.slice(0, text.lastIndexOf('\n', first - 20))} paid EUR\n1,249.50 in full ${'and more words here '.repeat(20)}\n${'and more words here\n'.repeat(200)}`;
    expect(text.lastIndexOf('\n', first)).toBe(text.indexOf('EUR\n') + 3);
    const whole = factsFromTextInPrefixes(text, 1000, 'data', Number.POSITIVE_INFINITY);
    const amount = whole.findIndex((f) => f.value.startsWith('EUR'));
    expect(whole[amount].value.replace(/\s+/g, ' ')).toBe('EUR 1,249.50');
    const limit = amount + 1;
    expect(factsFromTextInPrefixes(text, limit, 'data', first)).toEqual(whole.slice(0, limit));
  });
});
