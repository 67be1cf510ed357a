import { get_encoding, get_encoding_name_for_model, type Tiktoken, type TiktokenEncoding, type TiktokenModel } from 'tiktoken';
import type { TextCounter } from './counter.js';
import { piecesSplitter, splitsLikeTiktoken } from './pretokenize.js';

/**
 * The only module that loads tiktoken. One WASM encoder per encoding is shared by the whole
 * process (about 30 MB each): it is built at the first count and freed by `freeEncoders()`.
 */

/** The encoding used when none is named and the model is unknown. */
export const DEFAULT_ENCODING: TiktokenEncoding = 'o200k_base';

/** Every encoding tiktoken can load, the values `TokenCounterOptions.encoding` accepts. */
export const ENCODINGS: readonly TiktokenEncoding[] = ['o200k_base', 'cl100k_base', 'p50k_base', 'p50k_edit', 'r50k_base', 'gpt2'];

/** True when `name` is one of `ENCODINGS`. */
export function isEncoding(name: string): name is TiktokenEncoding {
  return (ENCODINGS as readonly string[]).includes(name);
}

const loaded = new Map<TiktokenEncoding, Tiktoken>();

/**
 * Picks the tiktoken encoding for a model name: tiktoken's own table first, then family
 * prefixes, then `o200k_base`. Never throws on an unknown model.
 */
export function encodingForModel(model: string | undefined): TiktokenEncoding {
  if (!model) return DEFAULT_ENCODING;
  try {
    return get_encoding_name_for_model(model as TiktokenModel);
  } catch {
    const m = model.toLowerCase();
    if (/^(gpt-3\.5|gpt-4(?!o|\.|-?o)|text-embedding-3|text-embedding-ada)/.test(m)) return 'cl100k_base';
    return DEFAULT_ENCODING;
  }
}

function sharedEncoder(encoding: TiktokenEncoding): Tiktoken {
  let enc = loaded.get(encoding);
  if (!enc) {
    enc = get_encoding(encoding);
    loaded.set(encoding, enc);
  }
  return enc;
}

/**
 * How many of an encoding's tokens, by rank, `singleTokenTexts` holds. Lower ranks are the byte
 * sequences merged first when the vocabulary was trained, the most frequent ones: the first
 * 50,000 hold 72-86% of the distinct pieces of prose, source code and JSON tool output, and take
 * 40-80 ms and about 3 MB to build, against about 180 ms and 11 MB for a whole o200k vocabulary.
 */
export const SINGLE_TOKEN_RANKS = 50_000;

/**
 * Pieces a process encodes one by one (through any counter of an encoding) before it reads that
 * encoding's `singleTokenTexts`. Reading them costs 40-80 ms in all, what encoding some 8,000 to
 * 16,000 pieces costs: a short-lived process that counts little (a CLI run on a small file) never
 * pays for them, and one that keeps counting (a server) pays once, early, in steps of a few
 * milliseconds (`SINGLE_TOKEN_STEP_RANKS`).
 */
export const SINGLE_TOKEN_AFTER = 5_000;

/**
 * Ranks read per step while a counter reads the single-token texts on the way (`countNewPiece`),
 * and pieces encoded between two steps: the 40-80 ms of reading them all is spread over some
 * 1,300 encoded pieces in steps of 2-4 ms, so no one count holds the event loop for long.
 */
const SINGLE_TOKEN_STEP_RANKS = 2_500;
const SINGLE_TOKEN_STEP_EVERY = 64;

const singles = new Map<TiktokenEncoding, ReadonlySet<string>>();
/** Single-token texts being read in steps: the texts so far and the next rank to read. */
const reading = new Map<TiktokenEncoding, { readonly texts: Set<string>; rank: number }>();
const encodedPieces = new Map<TiktokenEncoding, number>();

/**
 * The count of one piece no counter of this process remembers: 1 when the piece is one of the
 * encoding's single-token texts (read in steps once `SINGLE_TOKEN_AFTER` pieces have been
 * encoded, and used once all are read), otherwise tiktoken's count of it.
 */
function countNewPiece(encoding: TiktokenEncoding, piece: string, whole: (text: string) => number): number {
  const known = singles.get(encoding);
  if (known !== undefined) return known.has(piece) ? 1 : whole(piece);
  const encoded = (encodedPieces.get(encoding) ?? 0) + 1;
  encodedPieces.set(encoding, encoded);
  if (encoded >= SINGLE_TOKEN_AFTER && (encoded - SINGLE_TOKEN_AFTER) % SINGLE_TOKEN_STEP_EVERY === 0) readSingleTokenTexts(encoding, SINGLE_TOKEN_STEP_RANKS);
  return whole(piece);
}

/** Reads up to `ranks` more of the encoding's single-token texts; once all are read they are `singles`' (the set is complete before any count uses it). */
function readSingleTokenTexts(encoding: TiktokenEncoding, ranks: number): void {
  let state = reading.get(encoding);
  if (state === undefined) reading.set(encoding, (state = { texts: new Set<string>(), rank: 0 }));
  const enc = sharedEncoder(encoding);
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const end = Math.min(SINGLE_TOKEN_RANKS, state.rank + ranks);
  for (; state.rank < end; state.rank++) {
    try {
      state.texts.add(decoder.decode(enc.decode_single_token_bytes(state.rank)));
    } catch {
      // Not whole UTF-8 (part of a character), or no token has this rank: not a text.
    }
  }
  if (state.rank >= SINGLE_TOKEN_RANKS) {
    singles.set(encoding, state.texts);
    reading.delete(encoding);
  }
}

/**
 * The texts that are exactly one token of `encoding`: each of its first `SINGLE_TOKEN_RANKS`
 * tokens whose bytes are whole UTF-8, decoded byte for byte (a leading byte-order mark kept; a
 * token that splits a character is left out). Built from the vocabulary alone, once per process
 * with the shared encoder (counters use it after `SINGLE_TOKEN_AFTER` pieces), and freed with it.
 * tiktoken looks a whole piece up in its vocabulary before it merges bytes, so a piece found here
 * counts 1 without a call into WASM.
 */
export function singleTokenTexts(encoding: TiktokenEncoding): ReadonlySet<string> {
  if (!singles.has(encoding)) readSingleTokenTexts(encoding, SINGLE_TOKEN_RANKS);
  return singles.get(encoding)!;
}

/** Frees every shared WASM encoder (and the texts read from it); a later count loads them again. Call on shutdown. */
export function freeEncoders(): void {
  for (const enc of loaded.values()) enc.free();
  loaded.clear();
  singles.clear();
  reading.clear();
  encodedPieces.clear();
}

/**
 * Runs of letters (CJK text, `aaaa…`) or of punctuation this long are one pre-tokenizer piece,
 * and tiktoken's merge step is quadratic in a piece's length: 20k Chinese characters without
 * punctuation take seconds. Such runs are counted in slices of `RUN_SLICE_CHARS`, which bounds
 * the cost and over-counts by at most one token per slice seam (under 1% on CJK text).
 */
const LONG_RUN = /[\p{L}\p{M}]{256,}|[^\s\p{L}\p{N}]{256,}/gu;
const RUN_SLICE_CHARS = 128;

/** True when `text` has 256 characters in a row without a space, tab or newline: the only place a `LONG_RUN` can be. */
function hasLongRun(text: string): boolean {
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 10 || c === 9 || c === 13) run = 0;
    else if (++run >= 256) return true;
  }
  return false;
}

/** Counts one window of text, slicing its long runs into `RUN_SLICE_CHARS` pieces. */
function countWindow(text: string, encode: (piece: string) => number): number {
  LONG_RUN.lastIndex = 0;
  let match = LONG_RUN.exec(text);
  if (match === null) return encode(text);
  let total = 0;
  let last = 0;
  while (match !== null) {
    if (match.index > last) total += encode(text.slice(last, match.index));
    const end = match.index + match[0].length;
    for (let k = match.index; k < end; k += RUN_SLICE_CHARS) total += encode(text.slice(k, Math.min(end, k + RUN_SLICE_CHARS)));
    last = end;
    match = LONG_RUN.exec(text);
  }
  if (last < text.length) total += encode(text.slice(last));
  return total;
}

/**
 * Texts with long runs are read in windows of this many characters: the run regex works on one
 * window at a time, so a run of millions of letters never overflows the regex engine's stack.
 */
const WINDOW_CHARS = 32_768;

/** Where a window starting at `start` ends: at a whitespace in its second half when there is one, never inside a surrogate pair. */
function windowEnd(text: string, start: number): number {
  let end = start + WINDOW_CHARS;
  if (end >= text.length) return text.length;
  for (let k = end; k > start + WINDOW_CHARS / 2; k--) {
    const c = text.charCodeAt(k);
    if (c === 32 || c === 10 || c === 9 || c === 13) return k;
  }
  const before = text.charCodeAt(end - 1);
  if (before >= 0xd800 && before <= 0xdbff) end--;
  return end;
}

/**
 * Counts `text` with `encode`, slicing pathological long runs (see `LONG_RUN`); exact for ordinary
 * text. A text with long runs is read in windows (`WINDOW_CHARS`), cut at whitespace where it can
 * be: linear in the text's length, whatever its shape.
 */
export function countInPieces(text: string, encode: (piece: string) => number): number {
  if (text.length === 0) return 0;
  if (text.length < 256 || !hasLongRun(text)) return encode(text);
  if (text.length <= WINDOW_CHARS) return countWindow(text, encode);
  let total = 0;
  for (let start = 0; start < text.length;) {
    const end = windowEnd(text, start);
    total += countWindow(text.slice(start, end), encode);
    start = end;
  }
  return total;
}

/** Most pieces one counter remembers; past it the older half is dropped (two generations). */
const MAX_PIECES = 1 << 16;

/**
 * `count`, remembering the counts of texts up to `RUN_SLICE_CHARS` long (at most `MAX_PIECES`,
 * two generations): the same numbers as `count`, since tiktoken's count of a text never changes.
 * For texts encoded whole by tiktoken: a long run of one character outside the settled ranges
 * (Thai, Devanagari) is thousands of equal slices, each otherwise a call into WASM.
 */
function rememberingSlices(count: (text: string) => number): (text: string) => number {
  let young = new Map<string, number>();
  let old = new Map<string, number>();
  return (text) => {
    if (text.length > RUN_SLICE_CHARS) return count(text);
    let n = young.get(text);
    if (n === undefined) {
      n = old.get(text) ?? count(text);
      if (young.size >= MAX_PIECES) {
        old = young;
        young = new Map();
      }
      young.set(text, n);
    }
    return n;
  };
}

/**
 * A text counter on tiktoken's `encoding`, looked up per count so it keeps working after
 * `freeEncoders()`. For o200k_base and cl100k_base a text whose characters split alike in both
 * regex engines (`splitsLikeTiktoken`) is split into tiktoken's own pieces in JavaScript, and only
 * pieces this counter has not seen are encoded: the count of encoding the whole text, at a
 * fraction of the cost; in a process that has counted much, a piece that is one token by itself
 * (`singleTokenTexts`) is not encoded either. A piece of `LONG_RUN` length is counted in
 * `RUN_SLICE_CHARS` slices, as `countInPieces` does, and a text longer than `WINDOW_CHARS` is
 * split in windows. A text encoded whole is sliced the same way, its short slices remembered
 * (`rememberingSlices`). The piece memory is this counter's own and bounded (`MAX_PIECES`).
 */
export function tiktokenCounter(encoding: TiktokenEncoding): TextCounter {
  const whole = (text: string) => sharedEncoder(encoding).encode_ordinary(text).length;
  const split = piecesSplitter(encoding);
  const wholeSlices = rememberingSlices(whole);
  if (split === undefined) return (t) => countInPieces(t, wholeSlices);
  let young = new Map<string, number>();
  let old = new Map<string, number>();
  let total = 0;
  const addPiece = (piece: string) => {
    if (piece.length >= 256) {
      // One piece this long is a run of letters or punctuation: counted in slices, each slice
      // remembered like a piece (a slice is shorter than the longest piece remembered, so the
      // memory bound is unchanged; a run of one repeated character is encoded once).
      for (let k = 0; k < piece.length; k += RUN_SLICE_CHARS) addPiece(piece.slice(k, k + RUN_SLICE_CHARS));
      return;
    }
    let n = young.get(piece);
    if (n === undefined) {
      n = old.get(piece) ?? countNewPiece(encoding, piece, whole);
      if (young.size >= MAX_PIECES) {
        old = young;
        young = new Map();
      }
      young.set(piece, n);
    }
    total += n;
  };
  const byPieces = (text: string) => {
    total = 0;
    split(text, addPiece);
    return total;
  };
  return (t) => {
    if (t.length === 0) return 0;
    if (!splitsLikeTiktoken(t)) return countInPieces(t, wholeSlices);
    if (t.length <= WINDOW_CHARS) return byPieces(t);
    let sum = 0;
    for (let start = 0; start < t.length;) {
      const end = windowEnd(t, start);
      sum += byPieces(t.slice(start, end));
      start = end;
    }
    return sum;
  };
}
