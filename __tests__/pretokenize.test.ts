import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { get_encoding, type TiktokenEncoding } from 'tiktoken';
import { splitsLikeTiktoken } from '../src/tokens/pretokenize.js';
import { countInPieces, freeEncoders, SINGLE_TOKEN_AFTER, SINGLE_TOKEN_RANKS, singleTokenTexts, tiktokenCounter } from '../src/tokens/tiktoken.js';
import { propertyParams } from './helpers/property-runs.js';

/**
 * The counter splits text into tiktoken's pieces in JavaScript and encodes only pieces it has not
 * seen. Its count must be tiktoken's own count of the whole text: the oracle here is
 * `encode_ordinary` of the whole text, sharing nothing with the splitter.
 */
const ENCODINGS: TiktokenEncoding[] = ['o200k_base', 'cl100k_base'];

/** Characters chosen to hit every branch of the patterns: case, contractions, digits, marks, spaces of every kind, CJK, emoji, and characters outside the settled ranges. */
const TRICKY = [
  'a', 'Z', 'é', 'É', 'ß', 'ſ', 'İ', 'ǅ', 'ʰ', '\u0301', "'", 's', 'S', 't', 'T', 'r', 'e', 'v', 'm', 'l', 'L', 'd', 'D', '0', '7', '٣', '½', ' ', '  ', '\t', '\n', '\r', '\r\n',
  '\u000b', '\f', '\u0085', '\u00a0', '\u2003', '\u2028', '\u3000', '\ufeff', '/', '.', ',', '!', '{', '"', ':', '-', '_', '中', '文', '。', 'カ', 'の', '한', '😀', '👍🏽', '🇫🇷',
  'Ω', 'ж', 'ק', 'ع', 'ह', 'ก', '\u088f', '\u0c5c', '\u{11de0}', '\u{16ff4}', '\ud800',
];

const trickyText = fc.array(fc.constantFrom(...TRICKY), { maxLength: 60, size: 'max' }).map((parts) => parts.join(''));
/** Few characters, many combinations: whitespace of every kind next to letters, apostrophes and punctuation. */
const spacingText = fc.array(fc.constantFrom(' ', '\u0085', '\u00a0', '\u2003', '\t', '\n', '\r', 'a', 'A', 'ſ', "'", 's', '.', '中'), { maxLength: 12, size: 'max' }).map((parts) => parts.join(''));
const anyText = fc.oneof(
  trickyText,
  spacingText,
  fc.string({ unit: 'grapheme', maxLength: 80, size: 'max' }),
  fc.string({ unit: 'binary', maxLength: 80, size: 'max' }),
  fc.array(fc.oneof(fc.constantFrom('the', 'The', "don't", "WE'LL", 'x1', '12345', '  ', '\n\n', '{"k":', '"v"}', '中文字', '😀'), fc.string({ maxLength: 6 })), { maxLength: 40, size: 'max' }).map((p) => p.join(' ')),
);

describe('the single-token texts read on the way', () => {
  test('a fresh process that keeps counting new pieces counts each text exactly before, while and after it reads them in steps', () => {
    freeEncoders();
    const enc = get_encoding('o200k_base');
    try {
      const count = tiktokenCounter('o200k_base');
      // Distinct letter pieces (" bqk", " bql", ...): each is new to the counter, so each is encoded
      // or looked up among the single-token texts, well past SINGLE_TOKEN_AFTER and the reading.
      const word = (i: number) => { let w = ''; for (let k = i + 1000; k > 0; k = Math.floor(k / 26)) w += String.fromCharCode(97 + (k % 26)); return w; };
      const wrong: string[] = [];
      const pieces = 3 * SINGLE_TOKEN_AFTER;
      for (let i = 0; i < pieces; i += 4) {
        const text = ` ${word(i)} ${word(i + 1)} ${word(i + 2)} ${word(i + 3)}`;
        if (count(text) !== enc.encode_ordinary(text).length) wrong.push(text);
      }
      expect(wrong).toEqual([]);
      // By now the texts are read whole.
      expect(singleTokenTexts('o200k_base').size).toBeGreaterThan(0.95 * SINGLE_TOKEN_RANKS);
    } finally {
      enc.free();
    }
  });
});

describe('counting by tiktoken pieces split in JavaScript', () => {
  for (const encoding of ENCODINGS) {
    const enc = get_encoding(encoding);
    const exact = (t: string) => enc.encode_ordinary(t).length;

    test(`${encoding}: every text the counter takes for one token is one token of the vocabulary, byte for byte`, () => {
      const texts = singleTokenTexts(encoding);
      const utf8 = new TextEncoder();
      const notTokens: string[] = [];
      // encode_single_token throws unless the bytes are exactly one token.
      for (const text of texts) {
        try {
          enc.encode_single_token(utf8.encode(text));
        } catch {
          notTokens.push(JSON.stringify(text));
        }
      }
      expect(notTokens).toEqual([]);
      // Only ranks whose bytes split a character are missing (a few percent).
      expect(texts.size).toBeGreaterThan(0.95 * SINGLE_TOKEN_RANKS);
    });

    test(`${encoding}: every text counts exactly as tiktoken counts it whole (property, one counter across runs)`, () => {
      // With the single-token texts read, as in a process that has counted much (a process that
      // has not encodes every new piece, as the other suites' counts check).
      expect(singleTokenTexts(encoding).size).toBeGreaterThan(0);
      const count = tiktokenCounter(encoding);
      fc.assert(fc.property(anyText, (text) => {
        expect(count(text)).toBe(exact(text));
      }), propertyParams());
    });

    test(`${encoding}: every settled code point splits alike in both engines, in several contexts`, () => {
      const count = tiktokenCounter(encoding);
      let checked = 0;
      const wrong: string[] = [];
      // Every code point below U+3000, every 3rd above (a few seconds); the local sweep of all of them found none either.
      for (let cp = 0; cp <= 0x1faff; cp += cp < 0x3000 ? 1 : 3) {
        if (cp >= 0xd800 && cp <= 0xdfff) continue;
        const c = String.fromCodePoint(cp);
        if (!splitsLikeTiktoken(c)) continue;
        checked++;
        for (const probe of [`a${c}b`, ` ${c}1`, `A${c}'s`, `.${c}Ab`, `${c}  x`, `a ${c} a`, `${c}\n`]) {
          if (count(probe) !== exact(probe)) {
            wrong.push(cp.toString(16));
            break;
          }
        }
      }
      expect(checked).toBeGreaterThan(15_000);
      expect(wrong).toEqual([]);
    });
  }

  test('characters outside the settled ranges (newer scripts, lone surrogates) are counted whole by tiktoken', () => {
    expect(splitsLikeTiktoken('plain text, 中文, 한국어, カタカナ, emoji 😀👍🏽')).toBe(true);
    for (const c of ['\u088f', '\u0c5c', 'ह', '\u{11de0}', '\u{1fb00}', '\ud800', '\udc00x', '\ufeff']) expect(splitsLikeTiktoken(`ok ${c} ok`)).toBe(false);
  });

  test('long runs are sliced as before: within 1% above the exact count, and linear in length', () => {
    const enc = get_encoding('o200k_base');
    const count = tiktokenCounter('o200k_base');
    const zh = '我们的系统正在处理您的请求请稍候这是一个很长的没有标点的中文文本'.repeat(40);
    const full = enc.encode_ordinary(zh).length;
    expect(count(zh)).toBeGreaterThanOrEqual(full);
    expect(count(zh)).toBeLessThanOrEqual(Math.ceil(full * 1.01));
    const letters = 'abcdefghij'.repeat(100_000); // 1M letters, one piece: sliced
    expect(count(letters)).toBeGreaterThan(100_000);
  });

  test('a run of one repeated letter counts as its 128-character slices do (slices are remembered like pieces)', () => {
    const enc = get_encoding('o200k_base');
    const count = tiktokenCounter('o200k_base');
    const run = 'x'.repeat(1_000_000);
    // Independent of the counter: windows of 32,768 characters (no whitespace to cut at), each sliced every 128.
    let expected = 0;
    for (let w = 0; w < run.length; w += 32_768) {
      const window = run.slice(w, Math.min(run.length, w + 32_768));
      for (let k = 0; k < window.length; k += 128) expected += enc.encode_ordinary(window.slice(k, k + 128)).length;
    }
    expect(count(run)).toBe(expected);
    expect(count(run)).toBe(expected);
  });

  test('a long run of a character tiktoken encodes whole (Thai) counts as its slices encoded one by one', () => {
    const enc = get_encoding('o200k_base');
    const count = tiktokenCounter('o200k_base');
    const run = `ok ${'\u0e01'.repeat(100_000)} ok`;
    expect(splitsLikeTiktoken(run)).toBe(false);
    expect(count(run)).toBe(countInPieces(run, (t) => enc.encode_ordinary(t).length));
    expect(count(run)).toBe(count(run));
  });
});
