import type { MessageLens } from '../formats/lens.js';
import { sameJson } from '../core/same-json.js';
import { encodingForModel, sharedEncoder } from './tiktoken.js';
import { inSlices } from '../runtime/slices.js';
import { TextMemo } from './text-memo.js';

/** Counts the tokens of a text. Any tokenizer can stand in for tiktoken here. */
export type TextCounter = (text: string) => number;

/** Per-message and per-request overheads of the chat format (OpenAI's published accounting). */
export const MESSAGE_OVERHEAD_TOKENS = 3;
export const CALL_OVERHEAD_TOKENS = 3;
export const REQUEST_OVERHEAD_TOKENS = 3;

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

/** Counts `text` with `encode`, slicing pathological long runs (see `LONG_RUN`); exact for ordinary text. */
export function countInPieces(text: string, encode: (piece: string) => number): number {
  if (text.length === 0) return 0;
  if (text.length < 256 || !hasLongRun(text)) return encode(text);
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

/** Options for `createTokenCounter`. */
export interface TokenCounterOptions {
  /** Model name; picks the encoding when `encoding` is not given. */
  readonly model?: string;
  /** tiktoken encoding name (`o200k_base`, `cl100k_base`, ...). */
  readonly encoding?: string;
  /** Your own text counter instead of tiktoken. */
  readonly countText?: TextCounter;
  /** Texts shorter than this are counted directly, not cached. Default 0: a cache lookup is far cheaper than a WASM call. */
  readonly cacheMinChars?: number;
  /** Upper bound on characters held by the text cache before it is cleared. */
  readonly cacheMaxChars?: number;
}

/**
 * A history the counter remembers: a snapshot of its messages and their counts, plus what a
 * planner attached to it (its grouping, the format it was read as) for reuse by the next request.
 */
export interface RememberedHistory {
  readonly messages: readonly unknown[];
  readonly counts: Float64Array;
  /** Attached by the planner; valid for `messages` exactly. */
  grouping?: unknown;
  format?: string;
  /** Message ids computed so far, by position (holes where none was needed yet). */
  ids?: string[];
}

/** A history matched against the remembered ones: the one it continues, and how many leading messages they share. */
export interface Recall {
  readonly history?: RememberedHistory;
  readonly shared: number;
}

/** Counts what a provider bills for messages, remembering every count it has made. */
export interface TokenCounter {
  /** Tokens of one text. */
  readonly text: TextCounter;
  /** Tokens one message costs: content, tool-call names and arguments, results, overhead. */
  message<M>(message: M, lens: MessageLens<M>): number;
  /**
   * Tokens of every message of a history, in order. A history that continues one seen recently
   * (the same messages at the same positions: the same objects, as when a caller appends to its
   * array, or equal content, as in a re-parsed request body) costs one comparison per known
   * message; other messages go through the text cache. The array returned may be the one the
   * counter remembers for that history: read it, never write to it.
   */
  messages<M>(messages: readonly M[], lens: MessageLens<M>, recall?: Recall): Float64Array;
  /** The remembered history `messages` continues (same messages at the same leading positions). */
  recall(messages: readonly unknown[]): Recall;
  /** The remembered entry for exactly `messages` (after `messages()` counted them), to attach planner data. */
  remembered(messages: readonly unknown[]): RememberedHistory | undefined;
  /**
   * `messages()` for a long cold history: counts in slices of `sliceMs` (default 4 ms), giving the
   * event loop a turn between them, and remembers the history so a following `messages()` over
   * it costs one comparison per message.
   */
  messagesInSlices<M>(messages: readonly M[], lens: MessageLens<M>, sliceMs?: number): Promise<Float64Array>;
  /** Tokens added once per request. */
  readonly requestOverhead: number;
  /**
   * Counts made: texts encoded, texts served from the text cache, and messages served by
   * position from a recent history (`identityHits`).
   */
  stats(): { encoded: number; cachedHits: number; identityHits: number };
}

/** Histories remembered for the identity fast path (a server interleaves several chats). */
const RECENT_HISTORIES = 16;

/**
 * Creates a token counter. Counts are cached twice: by text content (a text seen before is never
 * encoded again) and, for whole histories, by position in a recent history (a request that
 * repeats the previous one's messages pays one comparison each, not a hash of every text). The
 * text cache is bounded by `cacheMaxChars`; the last 16 histories are kept alive for comparison.
 */
export function createTokenCounter(options: TokenCounterOptions = {}): TokenCounter {
  const minChars = options.cacheMinChars ?? 0;
  const maxChars = options.cacheMaxChars ?? 64 * 1024 * 1024;
  let raw: TextCounter;
  if (options.countText) raw = options.countText;
  else {
    // The WASM encoder takes about half a second to build: it is built at the first count, and
    // looked up each time so a counter keeps working after `freeEncoders()`.
    const encoding = (options.encoding ?? encodingForModel(options.model)) as Parameters<typeof sharedEncoder>[0];
    raw = (t) => countInPieces(t, (piece) => sharedEncoder(encoding).encode_ordinary(piece).length);
  }
  const byText = new TextMemo<number>(maxChars);
  const recent: RememberedHistory[] = [];
  let encoded = 0;
  let cachedHits = 0;
  let identityHits = 0;

  const text: TextCounter = (t) => {
    if (t.length < minChars) return raw(t);
    const hit = byText.get(t);
    if (hit !== undefined) {
      cachedHits++;
      return hit;
    }
    const n = raw(t);
    encoded++;
    byText.set(t, n);
    return n;
  };

  function message<M>(m: M, lens: MessageLens<M>): number {
    if (lens.billedTextTokens) return MESSAGE_OVERHEAD_TOKENS + 1 + lens.billedTextTokens(m, text, CALL_OVERHEAD_TOKENS);
    const t = lens.transcript(m);
    let n = MESSAGE_OVERHEAD_TOKENS + 1 + text(t.text);
    for (const c of t.calls) n += CALL_OVERHEAD_TOKENS + text(c.name) + text(c.arguments);
    for (const r of t.results) n += text(r.content) + (r.name ? 1 : 0);
    return n;
  }

  return {
    text,
    requestOverhead: REQUEST_OVERHEAD_TOKENS,
    message,
    messages<M>(messages: readonly M[], lens: MessageLens<M>, known?: Recall): Float64Array {
      return countHistory(messages, lens, undefined, known) as Float64Array;
    },
    async messagesInSlices<M>(messages: readonly M[], lens: MessageLens<M>, sliceMs = 4): Promise<Float64Array> {
      return countHistory(messages, lens, sliceMs, undefined);
    },
    recall,
    remembered(messages) {
      const last = recent[recent.length - 1];
      return last && last.messages.length === messages.length && (messages.length === 0 || last.messages[0] === messages[0] || sameJson(last.messages[0], messages[0])) ? last : undefined;
    },
    stats: () => ({ encoded, cachedHits, identityHits }),
  };

  /** The remembered history `messages` continues and how many leading messages they share. */
  function recall(messages: readonly unknown[]): Recall {
    const n = messages.length;
    // The remembered history this one continues: same first message (object, or equal content
    // for a re-parsed request body), the longest such.
    let known: RememberedHistory | undefined;
    if (n > 0) {
      for (let r = recent.length - 1; r >= 0; r--) {
        const candidate = recent[r];
        if (known && candidate.messages.length <= known.messages.length) continue;
        if (sameJson(candidate.messages[0], messages[0])) known = candidate;
      }
    }
    const limit = known ? Math.min(n, known.messages.length) : 0;
    let shared = 0;
    // Positions holding the same message (the same object, or equal content: comparing two
    // strings is far cheaper than hashing one for the text cache).
    const before = known?.messages;
    while (shared < limit && (before![shared] === messages[shared] || sameJson(before![shared], messages[shared]))) shared++;
    return { history: known, shared };
  }

  /** `messages()`, giving the event loop a turn every `sliceMs` when set (then it returns a promise). */
  function countHistory<M>(messages: readonly M[], lens: MessageLens<M>, sliceMs: number | undefined, given: Recall | undefined): Float64Array | Promise<Float64Array> {
    const n = messages.length;
    const { history: known, shared } = given ?? recall(messages);
    let i = shared;
    identityHits += i;
    // The very history seen before: its counts serve as they are, nothing is allocated.
    if (known && i === n && known.messages.length === n) {
      // Most recent last, so `remembered()` finds it.
      const at = recent.indexOf(known);
      if (at >= 0) recent.splice(at, 1);
      recent.push(known);
      return sliceMs === undefined ? known.counts : Promise.resolve(known.counts);
    }
    const counts = new Float64Array(n);
    if (i > 0) counts.set(known!.counts.subarray(0, i));
    const remember = () => {
      const at = known ? recent.indexOf(known) : -1;
      if (at >= 0 && known!.messages.length <= n) recent.splice(at, 1);
      // A snapshot: callers append to their arrays in place, and the counts are for this content.
      recent.push({ messages: messages.slice(), counts });
      if (recent.length > RECENT_HISTORIES) recent.shift();
      return counts;
    };
    if (n === 0) return sliceMs === undefined ? counts : Promise.resolve(counts);
    if (sliceMs === undefined) {
      for (; i < n; i++) counts[i] = message(messages[i], lens);
      return remember();
    }
    const from = i;
    return inSlices(n - from, (k) => { counts[from + k] = message(messages[from + k], lens); }, sliceMs).then(remember);
  }
}
