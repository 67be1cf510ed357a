import { afterAll, describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { get_encoding, type Tiktoken, type TiktokenEncoding } from 'tiktoken';
import { createTokenCounter } from '../src/index.js';
import { countByLines } from '../src/tokens/line-sum.js';
import { propertyParams } from './helpers/property-runs.js';

/**
 * `textByLines` counts a long text as the sum of its lines. Its count must be tiktoken's own count
 * of the whole text: the oracle is `encode_ordinary` of the whole text, sharing nothing with the
 * rule that says where a text may be cut.
 */
const ENCODINGS: TiktokenEncoding[] = ['o200k_base', 'cl100k_base'];
const encoders = new Map<TiktokenEncoding, Tiktoken>(ENCODINGS.map((e) => [e, get_encoding(e)]));
afterAll(() => { for (const enc of encoders.values()) enc.free(); });
const whole = (encoding: TiktokenEncoding, text: string) => encoders.get(encoding)!.encode_ordinary(text).length;

/**
 * Line starts and ends chosen where pieces could run across a line break: whitespace of every
 * kind, `/` (o200k_base lets punctuation take it after line breaks), punctuation that takes line
 * breaks, apostrophes, digits, letters and characters outside ASCII.
 */
const EDGES = [' ', '  ', '\t', '\r', '\n', '\r\n', '\u0085', '\u00a0', '\u2003', '/', '//', '.', ').', '-', '- [', '"', "'s", "'", '7', '123', 'a', 'Z', 'é', '中', '😀', '', '\u0301', '{', '}'];
const line = fc.tuple(
  fc.array(fc.constantFrom(...EDGES), { maxLength: 3 }),
  fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 20 }), fc.constantFrom('key=value 2025-01-02T03:04:05Z', '| a | b |', 'src/x/y.ts:12:3', "it's", 'Tool calls:')),
  fc.array(fc.constantFrom(...EDGES), { maxLength: 3 }),
).map(([a, b, c]) => a.join('') + b + c.join(''));
/** Long enough to be split (texts under 256 characters are counted whole). */
const text = fc.array(line, { minLength: 8, maxLength: 60 }).map((lines) => lines.join('\n')).filter((t) => t.length >= 256);

describe('a text counted line by line', () => {
  for (const encoding of ENCODINGS) {
    test(`${encoding}: textByLines equals encode_ordinary of the whole text`, () => {
      const counter = createTokenCounter({ encoding });
      fc.assert(fc.property(text, (t) => {
        expect(counter.textByLines!(t)).toBe(whole(encoding, t));
      }), propertyParams());
    });
  }

  test('it is cut, and each line is counted on its own: a text differing in one line encodes one new line', () => {
    const counter = createTokenCounter();
    const lines = Array.from({ length: 40 }, (_, k) => `- [item @${k}] key_${k}=value-${k * 7919} at=2025-03-0${k % 9}T10:00:00Z`);
    const first = lines.join('\n');
    expect(counter.textByLines!(first)).toBe(whole('o200k_base', first));
    const before = counter.stats().encoded;
    const second = [...lines.slice(0, 20), '- [item @x] changed=1', ...lines.slice(21)].join('\n');
    expect(counter.textByLines!(second)).toBe(whole('o200k_base', second));
    expect(counter.stats().encoded - before).toBe(1);
  });

  test('a break followed by a line break or `/` is not a cut: the pieces there would differ', () => {
    // Texts where a cut at every break would be wrong (found by trying line ends against line
    // starts), which the rule must leave whole.
    const pad = 'x'.repeat(300);
    for (const encoding of ENCODINGS) {
      const count = (t: string) => whole(encoding, t);
      const cases = [`${pad}).\n/usr`, `${pad}.\n\nc`, `${pad}a \n\nc`];
      let naiveWrong = 0;
      for (const t of cases) {
        const parts = t.split(/(?<=\n)/);
        if (parts.reduce((n, p) => n + count(p), 0) !== count(t)) naiveWrong++;
        expect(countByLines(t, count)).toBe(count(t));
      }
      // A cut at every break is off on these (o200k_base on all three; cl100k_base, whose
      // punctuation does not take `/`, on the two with a second line break).
      expect(naiveWrong).toBe(encoding === 'o200k_base' ? 3 : 2);
    }
  });

  test('a counter on your own countText, or another encoding, counts the whole text', () => {
    const seen: string[] = [];
    const own = createTokenCounter({ countText: (t) => { seen.push(t); return Math.ceil(t.length / 4); } });
    const t = Array.from({ length: 30 }, (_, k) => `line ${k} of a text long enough to be cut`).join('\n');
    expect(own.textByLines!(t)).toBe(Math.ceil(t.length / 4));
    expect(seen).toEqual([t]);
    const p50k = createTokenCounter({ encoding: 'p50k_base' });
    expect(p50k.textByLines).toBe(p50k.text);
  });
});
