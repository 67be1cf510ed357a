import type { Grouping } from './groups.js';

/**
 * Snaps a proposed cut index back to the start of the group it falls in, so that a call and its
 * results always land on the same side of the cut (a split pair is what providers reject with 400).
 * `cut` is a message index in [0, n]; n means "cut after everything".
 */
export function alignCut(grouping: Grouping, cut: number): number {
  const n = grouping.groupOf.length;
  if (cut <= 0) return 0;
  if (cut >= n) return n;
  return grouping.groups[grouping.groupOf[cut]].start;
}

/** End (exclusive) of the protected head: the first `keepFirst` messages rounded out to whole groups. */
export function headEnd(grouping: Grouping, keepFirst: number): number {
  const n = grouping.groupOf.length;
  if (keepFirst <= 0 || n === 0) return 0;
  if (keepFirst >= n) return n;
  return grouping.groups[grouping.groupOf[keepFirst - 1]].end;
}

/**
 * Start of the kept tail: the last `keepLast` messages rounded out to whole groups, moved back
 * further when needed so the group holding the last user text is in it. Never before `floor`.
 */
export function tailStart(grouping: Grouping, keepLast: number, floor: number): number {
  const n = grouping.groupOf.length;
  let start = alignCut(grouping, Math.max(0, n - Math.max(0, keepLast)));
  const lastUser = lastUserGroupStart(grouping);
  if (lastUser < start) start = lastUser;
  return Math.max(start, floor);
}

/**
 * Start of the group holding the last message with user text: the turn the model is answering.
 * It and everything after it are never dropped. Falls back to the last group when no user text.
 */
export function lastUserGroupStart(grouping: Grouping): number {
  const { groups } = grouping;
  for (let g = groups.length - 1; g >= 0; g--) if (groups[g].userText) return groups[g].start;
  return groups.length > 0 ? groups[groups.length - 1].start : 0;
}
