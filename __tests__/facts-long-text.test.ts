import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { createExtractiveSummarizer } from '../src/index.js';
import { factsFromText } from '../src/summarize/facts.js';
import type { TranscriptEntry } from '../src/formats/lens.js';
import { propertyParams } from './helpers/property-runs.js';

/**
 * Reading a long tool output for facts must take time in proportion to its length. A rule that
 * searched the rest of a run of characters, or back to the start of a line, at every place a
 * value may start read `12-7-93-...`, `4,18,77,...` or `2025-2025-...` over and over: 160,000
 * characters of numbers joined by `-` held the event loop for 24 s in a background summary.
 *
 * This is a guard against that blow-up, not a speed goal (those live in bench/), and it holds on
 * a loaded host: it compares a text with one a quarter as long, read in the same process one
 * after the other. Linear reading takes about 4 times as long for 4 times the text, a rule that
 * searches back or ahead at every place 16 times or more; the bound is 10 times, plus a slack
 * for timer noise on tiny times. Each text below is read in well under 100 ms (120,000
 * characters), and was read in 10 s to minutes before.
 */
const CHARS = 120_000;
/** Most times as long 4 times the text may take, and the slack on top, in ms. */
const GROWTH = 10;
const SLACK_MS = 500;

/** Milliseconds `run` takes. */
async function timed(run: () => unknown): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

/** Shapes whose runs a value may start anywhere in: joined numbers, dates, amounts, file lines, codes, names. */
const SHAPES: Record<string, (k: number) => string> = {
  'numbers joined by -': (k) => `${(k * 37) % 100}-`,
  'numbers joined by ,': (k) => `${(k * 37) % 1000},`,
  'a JSON array of numbers': (k) => `${(k * 7919) % 100_000},`,
  'years joined by -': () => '2025-',
  'amounts after a sign': (k) => `$${k % 10}`,
  'amounts before a code': (k) => `${k % 10} USD `,
  'times': (k) => `${k % 24}:${k % 6} `,
  'quantities': (k) => `${k % 9} s `,
  'file lines': (k) => `a.ts:${k % 9} `,
  'quoted names': () => '"Ana Lopez" ',
  'codes on one line': (k) => `QX${k % 10}PTK `,
  'capitals on one line': () => 'BXRTLMQ ',
  'a long local part, then one address': (k) => (k === 0 ? 'a@b.io ' : 'a.'),
  'dates': (k) => `Jan ${1 + (k % 28)} `,
};

function entries(content: string): TranscriptEntry[] {
  return [
    { role: 'user', text: 'read it', calls: [], results: [] },
    { role: 'assistant', text: '', calls: [{ id: 'c1', name: 'read', arguments: '{}' }], results: [] },
    { role: 'tool', text: '', calls: [], results: [{ id: 'c1', name: 'read', content }] },
  ];
}

function textOf(piece: (k: number) => string, chars = CHARS): string {
  let text = '';
  for (let k = 0; text.length < chars; k++) text += piece(k);
  return text.slice(0, chars);
}

describe('facts in a long text are read in time proportional to its length', () => {
  const summarizer = createExtractiveSummarizer();
  for (const [name, piece] of Object.entries(SHAPES)) {
    test(`${name}: ${CHARS.toLocaleString('en')} characters summarized in at most ${GROWTH} times the time of a quarter of them`, async () => {
      let summary = '';
      const read = (chars: number) => timed(async () => {
        summary = await summarizer.summarize({ messages: entries(textOf(piece, chars)), signal: new AbortController().signal, maxTokens: 2_000 });
      });
      const quarter = await read(CHARS / 4);
      const whole = await read(CHARS);
      expect(summary.length).toBeGreaterThan(0);
      expect(whole).toBeLessThan(GROWTH * quarter + SLACK_MS);
    });
  }

  test('a long run of one or two characters from a tricky set, as a property', () => {
    const unit = fc.array(fc.constantFrom('1', '9', 'a', 'Z', '-', '_', ',', '.', ':', '$', '@', '/', ' ', '"', 'T'), { minLength: 1, maxLength: 3 }).map((c) => c.join(''));
    const read = (text: string) => {
      const started = performance.now();
      factsFromText(text, 10_000, 'data');
      return performance.now() - started;
    };
    fc.assert(fc.property(unit, (u) => {
      const quarter = read(u.repeat(Math.ceil(20_000 / u.length)));
      const whole = read(u.repeat(Math.ceil(80_000 / u.length)));
      expect(whole).toBeLessThan(GROWTH * quarter + SLACK_MS);
    }), { ...propertyParams(), numRuns: 40 });
  });
});

describe('the rules keep what they found before', () => {
  const values = (text: string) => factsFromText(text, 50, 'data').map((f) => f.value);

  test('joined ids need a digit and a letter in the match itself', () => {
    expect(values('order ORD-1003 and user_name_1234, pi_3Mtw9xQ')).toEqual(expect.arrayContaining(['ORD-1003', 'user_name_1234', 'pi_3Mtw9xQ']));
    expect(values('steps 12-34-56 and well-known-name')).not.toEqual(expect.arrayContaining(['12-34-56']));
    expect(values('steps 12-34-56 and well-known-name')).not.toEqual(expect.arrayContaining(['well-known-name']));
  });

  test('an email is found whole, and a local part over 64 characters is not an address', () => {
    expect(values('write to ana.lopez+ops@mail.example.com today')).toContain('ana.lopez+ops@mail.example.com');
    const long = `${'a'.repeat(65)}@example.com`;
    expect(values(`from ${long}`).some((v) => v.includes('@'))).toBe(false);
    expect(values(`from ${'a'.repeat(64)}@example.com`)).toContain(`${'a'.repeat(64)}@example.com`);
  });

  test('amounts with separators, and file lines, as before', () => {
    expect(values('charged 1,234,567.89 USD and €12.50')).toEqual(expect.arrayContaining(['1,234,567.89 USD', '€12.50']));
    expect(values('failed at router.ts:142:7')).toContain('router.ts:142:7');
  });
});
