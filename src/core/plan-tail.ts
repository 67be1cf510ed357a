import { lastUserGroupStart } from './boundary.js';
import { stepCut } from './fold-steps.js';
import type { Draft } from './plan-draft.js';

/**
 * Protect the tail: the kept tail (the last `keepLast` messages in whole groups, and always the
 * group holding the last user text) is sent whole unless it alone is over the limit and yields
 * (`d.yields`): then its oldest groups may go, then the rounds after the last user turn, never
 * that turn or the newest group. Sets `protectedStart`, `minimumTokens`, the held turn and
 * `coverLimit` (a summary never covers the last user turn: it replaces messages before what it keeps).
 */
export function protectTail<M>(d: Draft<M>): void {
  const max = d.max;
  if (d.yields && max !== undefined && d.minimumTokens > max) yieldTail(d, max);
  d.coverLimit = d.heldStart >= 0 ? d.heldStart : d.protectedStart;
}

/** The kept tail yields to `max`: its turns before the last user turn first; then the tool rounds after it, oldest first, while that turn's own group stays. */
function yieldTail<M>(d: Draft<M>, max: number): void {
  const { grouping, hEnd, n } = d;
  const { groups } = grouping;
  const lastUser = lastUserGroupStart(grouping);
  const lastTurn = Math.max(lastUser, hEnd);
  yieldTo(d, max, lastTurn);
  const newest = groups.length > 0 ? groups[groups.length - 1].start : n;
  if (d.minimumTokens > max && d.protectedStart === lastTurn && lastTurn < newest) {
    // (A last user turn inside the head is sent with it: nothing after the head is held.)
    if (lastUser >= hEnd) {
      d.heldStart = lastTurn;
      d.heldEnd = groups[grouping.groupOf[lastTurn]].end;
      d.protectedStart = d.heldEnd;
    }
    const from = d.protectedStart;
    yieldTo(d, max, newest);
    if (d.protectedStart === from) {
      d.protectedStart = lastTurn;
      d.heldStart = d.heldEnd = -1;
    }
  }
  if (d.protectedStart > d.tStart) {
    const held = d.heldStart < 0 ? 0 : d.heldEnd - d.heldStart;
    const rounds = d.heldStart < 0 ? 0 : d.protectedStart - d.heldEnd;
    d.notes.push(`keepLast yielded to the limit: ${d.protectedStart - d.tStart - held} message(s) of the kept tail were droppable${rounds > 0 ? `, ${rounds} of them after the last user turn, which is kept` : ''}`);
  }
}

/**
 * Moves `protectedStart` on by whole groups, up to `limit`, until the smallest view fits `max`;
 * in steps, as the drop does: once it fits, on to the next cut point within two steps' worth (a
 * finer one when none is), so the next requests append to the same prefix.
 */
function yieldTo<M>(d: Draft<M>, max: number, limit: number): void {
  const { grouping, tokens, n, step } = d;
  const pinned = (i: number) => grouping.pinned[i] === 1;
  while (d.protectedStart < limit && d.minimumTokens > max) {
    const g = grouping.groupOf[d.protectedStart];
    for (; d.protectedStart < n && grouping.groupOf[d.protectedStart] === g; d.protectedStart++) {
      if (!pinned(d.protectedStart)) d.minimumTokens -= tokens[d.protectedStart];
    }
  }
  if (step < 1 || d.minimumTokens > max) return;
  const floor = d.minimumTokens - 2 * step;
  const cut = stepCut(grouping, tokens, d.protectedStart, limit, step, d.minimumTokens, floor, pinned, (c) => c.at < limit && c.total >= floor);
  if (cut) [d.protectedStart, d.minimumTokens] = [cut.at, cut.total];
}
