import type { TextCounter } from '../tokens/counter.js';

/**
 * `text` cut to at most `maxTokens` (by `count`): unchanged when it fits; else its longest prefix
 * that fits with `marker` appended; else (the marker alone is too long) its longest prefix that
 * fits; '' when `maxTokens` < 1. Invariant: `count(result) <= maxTokens`, for any text.
 * Binary search over the prefix length: O(log n) counts.
 */
export function fitText(text: string, maxTokens: number, count: TextCounter, marker = ''): string {
  if (maxTokens < 1 || text === '') return '';
  if (count(text) <= maxTokens) return text;
  const longest = (suffix: string): string | undefined => {
    let lo = 0; // a prefix of this many characters fits
    let hi = text.length;
    if (count(suffix) > maxTokens) return undefined;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (count(cut(text, mid) + suffix) <= maxTokens) lo = mid;
      else hi = mid - 1;
    }
    return cut(text, lo) + suffix;
  };
  const withMarker = marker === '' ? undefined : longest(marker);
  return withMarker ?? longest('') ?? '';
}

/** The first `n` characters, never ending inside a surrogate pair. */
function cut(text: string, n: number): string {
  const code = text.charCodeAt(n - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? n - 1 : n);
}
