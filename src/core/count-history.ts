import type { Grouping } from './groups.js';
import type { PlanDecisions } from './plan.js';

/** Counts a history carries over from the one it continues: that history's counts and length, and how many leading messages the two share. */
export interface CarriedCounts {
  readonly counts: Float64Array;
  readonly length: number;
  readonly shared: number;
}

/**
 * Tokens of every message: those shared with the remembered history by position are taken from
 * it (one comparison each was already paid), the rest are counted. The very history seen before
 * reuses its counts array as it is. With `lazy`, new messages stay uncounted (NaN) and
 * `countBackward` counts only what a view can hold; otherwise every message not counted yet is
 * counted now (the array may be the cache's own).
 */
export function countHistory<M>(messages: readonly M[], count: (message: M) => number, carried: CarriedCounts | undefined, lazy: boolean): Float64Array {
  const n = messages.length;
  const shared = carried?.shared ?? 0;
  let counts: Float64Array;
  if (carried && shared === n && carried.length === n) counts = carried.counts;
  else {
    counts = new Float64Array(n);
    if (carried && shared > 0) counts.set(carried.counts.subarray(0, shared));
    counts.fill(NaN, shared);
  }
  if (!lazy) for (let i = 0; i < n; i++) if (counts[i] !== counts[i]) counts[i] = count(messages[i]);
  return counts;
}

/**
 * A cheap estimate of the tokens of the messages the plan did not count (after the head, before
 * `countedFrom`, pinned aside): as many as the counted messages cost on average. Constant time:
 * the messages themselves are not read again.
 */
export function estimateUncounted(d: PlanDecisions, countedFrom: number, grouping: Grouping): number {
  let uncounted = 0;
  for (let i = d.headEnd; i < countedFrom; i++) if (!grouping.pinned[i]) uncounted++;
  const counted = d.messagesBefore - uncounted;
  return counted > 0 ? Math.round((d.tokensBefore / counted) * uncounted) : 0;
}
