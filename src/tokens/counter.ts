import { InputError } from '../errors.js';
import type { MessageLens } from '../formats/lens.js';
import { messageTokens, REQUEST_OVERHEAD_TOKENS } from './accounting.js';
import { BYTE_BOUNDED_ENCODINGS } from './byte-bound.js';
import { countByLines, LINE_ADDITIVE_ENCODINGS } from './line-sum.js';
import { TextMemo } from './text-memo.js';
import { ENCODINGS, encodingForModel, isEncoding, tiktokenCounter } from './tiktoken.js';

/** Counts the tokens of a text. Any tokenizer can stand in for tiktoken here. */
export type TextCounter = (text: string) => number;

/** Options for `createTokenCounter`. */
export interface TokenCounterOptions {
  /** Model name; picks the encoding when `encoding` is not given. */
  readonly model?: string;
  /** tiktoken encoding name: `o200k_base`, `cl100k_base`, `p50k_base`, `p50k_edit`, `r50k_base` or `gpt2`. */
  readonly encoding?: string;
  /** Your own text counter instead of tiktoken. */
  readonly countText?: TextCounter;
  /** Most bytes of text the count cache keeps; least recently used texts go first. Default 32 MiB. */
  readonly cacheMaxBytes?: number;
}

/**
 * Counts what a provider bills for texts and messages. Every text count is remembered by the
 * text's content in a cache bounded by bytes (least recently used first), so a text seen before
 * is never encoded again; the counter keeps no messages or histories.
 */
export interface TokenCounter {
  /** Tokens of one text. */
  readonly text: TextCounter;
  /**
   * Tokens of a long text made of lines, such as a summary written and counted again and again
   * as it is fitted to its room: always the same number as `text`. On o200k_base and cl100k_base
   * it is the sum of the text's lines, each from the cache (`countByLines`: the encoding merges
   * no tokens across those line breaks), so a text that differs from one counted before in a few
   * lines costs only those lines; otherwise it is `text`. Optional, for counters built by hand:
   * callers fall back to `text`.
   */
  readonly textByLines?: TextCounter;
  /** Tokens one message costs: content, tool-call names and arguments, results, overhead. */
  message<M>(message: M, lens: MessageLens<M>): number;
  /** Tokens added once per request. */
  readonly requestOverhead: number;
  /**
   * True when no text ever counts more than `utf8TokenBound(text)` (its UTF-8 bytes; set on
   * tiktoken's o200k_base and cl100k_base, see `byte-bound.ts`): a history whose bound is within
   * its window is then planned without tokenizing it. Unset on counters on `countText` or built by hand.
   */
  readonly atMostUtf8Bytes?: boolean;
  /** Texts encoded, texts served from the cache, and what the cache holds. */
  stats(): { encoded: number; cachedHits: number; cachedTexts: number; cachedBytes: number };
}

/** Default bound of a counter's text cache. */
export const DEFAULT_COUNT_CACHE_BYTES = 32 * 1024 * 1024;

/**
 * Creates a token counter on tiktoken (the model's encoding, `o200k_base` by default) or on
 * `countText`. An `encoding` tiktoken does not have is an `InputError` naming the ones it has.
 */
export function createTokenCounter(options: TokenCounterOptions = {}): TokenCounter {
  if (options.countText !== undefined && typeof options.countText !== 'function') {
    throw new InputError('options.countText', `must be a function (text) => number of tokens, got ${typeof options.countText}`);
  }
  if (options.countText === undefined && options.encoding !== undefined && (typeof options.encoding !== 'string' || !isEncoding(options.encoding))) {
    throw new InputError('options.encoding', `must be one of ${ENCODINGS.join(', ')}, got ${JSON.stringify(options.encoding) ?? String(options.encoding)}`);
  }
  const encoding = options.countText === undefined ? (options.encoding as ReturnType<typeof encodingForModel> | undefined) ?? encodingForModel(options.model) : undefined;
  const raw = options.countText ?? tiktokenCounter(encoding!);
  const memo = new TextMemo<number>(options.cacheMaxBytes ?? DEFAULT_COUNT_CACHE_BYTES);
  let encoded = 0;
  let cachedHits = 0;
  const text: TextCounter = (t) => {
    const hit = memo.get(t);
    if (hit !== undefined) {
      cachedHits++;
      return hit;
    }
    const n = raw(t);
    // A custom counter that returns NaN or a fraction would turn the budget off without a word.
    if (!Number.isSafeInteger(n) || n < 0) {
      throw new InputError('options.countText', `returned ${String(n)} for a text of ${t.length} characters; it must return a whole number of tokens >= 0`);
    }
    encoded++;
    memo.set(t, n);
    return n;
  };
  const byLines = encoding !== undefined && LINE_ADDITIVE_ENCODINGS.has(encoding);
  return {
    text,
    textByLines: byLines ? (t) => countByLines(t, text) : text,
    requestOverhead: REQUEST_OVERHEAD_TOKENS,
    ...(encoding !== undefined && BYTE_BOUNDED_ENCODINGS.has(encoding) ? { atMostUtf8Bytes: true } : {}),
    message: (m, lens) => messageTokens(m, lens, text),
    stats: () => {
      const { texts, bytes } = memo.size();
      return { encoded, cachedHits, cachedTexts: texts, cachedBytes: bytes };
    },
  };
}

/** The text counter to fit a summary with: `counter.textByLines`, or `counter.text` on a counter built by hand. Same counts either way. */
export function summaryTextCounter(counter: TokenCounter): TextCounter {
  return counter.textByLines ?? counter.text;
}
