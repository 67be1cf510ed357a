import type { Grouping } from './groups.js';

/** What `countBackward` needs to know about the plan to come. */
export interface BackwardBounds {
  /** End of the head (always sent). */
  readonly headEnd: number;
  /** Start of the kept tail (always sent). */
  readonly tailStart: number;
  /** Lowest index worth counting: the end of what a summary covers, else the head's end. */
  readonly floor: number;
  /**
   * Counting stops once the head, pinned messages, tail and the groups counted so far pass this
   * many tokens (with the request overhead): the larger of the budget and the threshold.
   */
  readonly limit: number;
  readonly overheadTokens: number;
}

/**
 * Counts what a view can hold, newest first: the head, the pinned system messages and the kept
 * tail, then whole groups backwards from the tail until their sum passes `limit`. Messages older
 * than that can never be sent, so they are not tokenized: their entry in `counts` stays NaN.
 * Entries already counted (not NaN) are reused; `count` prices one message (the token counter's). Returns the index from which every message is
 * counted (the plan's `countedFrom`); `floor` when everything worth counting was counted.
 */
export function countBackward<M>(messages: readonly M[], count: (message: M) => number, counts: Float64Array, grouping: Grouping, bounds: BackwardBounds): number {
  const n = messages.length;
  const at = (i: number): number => {
    let t = counts[i];
    if (t !== t) counts[i] = t = count(messages[i]);
    return t;
  };
  let total = bounds.overheadTokens;
  for (let i = 0; i < bounds.headEnd; i++) total += at(i);
  for (let i = bounds.tailStart; i < n; i++) total += at(i);
  const { pinned, groups, groupOf } = grouping;
  for (let i = bounds.headEnd; i < bounds.tailStart; i++) if (pinned[i]) total += at(i);
  if (bounds.tailStart <= bounds.floor) return bounds.tailStart;
  for (let g = groupOf[bounds.tailStart - 1]; g >= 0; g--) {
    const group = groups[g];
    if (group.end <= bounds.floor) break;
    if (!pinned[group.start]) for (let i = Math.max(group.start, bounds.floor); i < group.end; i++) total += at(i);
    if (total > bounds.limit) return Math.max(group.start, bounds.floor);
  }
  return bounds.floor;
}
