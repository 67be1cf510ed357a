import type { TextCounter } from './counter.js';

/**
 * Counting a long text made of lines (a summary, a ledger block) as the sum of its lines' counts.
 *
 * tiktoken byte-pair encodes each piece its pre-tokenizer splits off, never across pieces. In
 * o200k_base and cl100k_base no piece runs past a line break into a following character that is
 * printable ASCII other than `/`: a piece that holds a line break either ends with it (a run of
 * whitespace ending in `\r`/`\n`; punctuation followed by line breaks, which in o200k_base may
 * also take `/`) or is whitespace throughout, and letters, digits and their optional prefix never
 * hold one. A piece that starts after the break sees the same text in both cases (the patterns
 * look ahead, never behind). So the count of `a + b`, where `a` ends with `\n` and `b` starts with
 * such a character, is the count of `a` plus the count of `b`, exactly.
 *
 * Other encodings (gpt2-style patterns, whose `\s+(?!\S)` gives a line break to the whitespace
 * before it only when nothing follows) and custom counters are not split.
 */

/** The encodings whose counts add up at `lineStarts` breaks (see the module comment). */
export const LINE_ADDITIVE_ENCODINGS: ReadonlySet<string> = new Set(['o200k_base', 'cl100k_base']);

/** Texts shorter than this are counted whole: a split would only add lookups. */
const MIN_SPLIT_CHARS = 256;

/** True when a piece can start at `code` after a line break with none running across it: printable ASCII other than `/`. */
function startsPiece(code: number): boolean {
  return code > 0x20 && code < 0x7f && code !== 0x2f;
}

/**
 * The tokens of `text` as `count` of its parts, cut after each `\n` that a printable ASCII
 * character other than `/` follows. Invariant: equal to `count(text)` when `count` is an exact
 * o200k_base or cl100k_base counter (module comment); each line is counted, and remembered by a
 * caching `count`, on its own, so a text that differs from one counted before in a few lines costs
 * only those lines.
 */
export function countByLines(text: string, count: TextCounter): number {
  if (text.length < MIN_SPLIT_CHARS) return count(text);
  let total = 0;
  let start = 0;
  for (let at = text.indexOf('\n'); at >= 0 && at + 1 < text.length; at = text.indexOf('\n', at + 1)) {
    if (!startsPiece(text.charCodeAt(at + 1))) continue;
    total += count(text.slice(start, at + 1));
    start = at + 1;
  }
  return total + count(start === 0 ? text : text.slice(start));
}
