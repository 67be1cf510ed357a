/**
 * Fold in steps (`lowWaterMark`): where cut points lie, how far a fold goes, and whether one is
 * worth making yet. Cut points depend on positions and tokens alone, so a history that grows by
 * appending keeps its cut and its views keep their prefix (which providers cache).
 */
import type { Grouping } from './groups.js';
import type { PlanOptions } from './plan.js';

/**
 * True when the group starting at `start` is a cut point for steps of `step` tokens: a pseudo-random
 * draw from its position, against its share of a step, so cut points lie about `step` tokens apart
 * on average and never move when messages are appended after them. A pinned group is never one.
 */
function isCutPoint(start: number, grouping: Grouping, tokens: ArrayLike<number>, step: number): boolean {
  if (grouping.pinned[start]) return false;
  const g = grouping.groupOf[start];
  let t = 0;
  for (let k = start; k < tokens.length && grouping.groupOf[k] === g; k++) t += tokens[k];
  // mulberry32-style mix of the position: the same group start always draws the same number.
  let h = Math.imul(start ^ 0x9e3779b9, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 4294967296 < t / step;
}

/**
 * Fold in steps: from the group starting at `from`, walks whole groups towards `limit` until one
 * starts at a cut point, taking their tokens off `total` (all but those `spared`, which stay in
 * the view). Stops early once `total` falls under `floor` (more than a fold should leave out).
 * Returns where the walk stopped and the total there; the caller resumes there only when it is a
 * cut point before `limit` and the total is still at or over `floor`.
 */
function walkToCutPoint(grouping: Grouping, tokens: ArrayLike<number>, from: number, limit: number, step: number, total: number, floor: number, spared: (i: number) => boolean): { at: number; total: number } {
  const { groupOf } = grouping;
  let at = from;
  let t = total;
  while (at < limit && t >= floor && !isCutPoint(at, grouping, tokens, step)) {
    const g = groupOf[at];
    for (; at < groupOf.length && groupOf[at] === g; at++) if (!spared(at)) t -= tokens[at];
  }
  return { at, total: t };
}

/** Finer cut points tried, each step half the last, when none lies within reach at the coarser one. */
const CUT_LEVELS = 4;

/**
 * Fold in steps, with a fallback: walks to the next cut point (`walkToCutPoint`) and returns it
 * when `accept` takes it; when none is within reach (cut points are drawn at random, so a gap of
 * several steps happens), tries again with steps half as long, up to `CUT_LEVELS` times. Every
 * coarser cut point is also a finer one (the same draw against a larger share), so each level
 * depends on positions and tokens alone, as the first does: a history that grows by appending
 * keeps its cut and the views their prefix, where before the view fell back to the first group
 * that fits and moved on every request. Undefined when no level finds one.
 */
export function stepCut(grouping: Grouping, tokens: ArrayLike<number>, from: number, limit: number, step: number, total: number, floor: number, spared: (i: number) => boolean, accept: (cut: { at: number; total: number }) => boolean): { at: number; total: number } | undefined {
  for (let level = 0, s = step; level < CUT_LEVELS && s >= 1; level++, s /= 2) {
    const cut = walkToCutPoint(grouping, tokens, from, limit, s, total, floor, spared);
    if (accept(cut)) return cut;
  }
  return undefined;
}

/**
 * Tokens a fold keeps free for the next summary in the view right after it, which is held to the
 * low-water mark (`lowWaterMark` x `trigger`): what the summary in force takes (`inForce`) plus
 * half of what a fold frees, so a rolling summary can grow as it folds more in, up to half of the
 * low-water view (the recent turns keep the other half). Without steps (`lowWaterMark` 1) it is
 * the summary in force: the fold ends where it always did.
 */
function summaryReserve(trigger: number, lowWaterMark: number, inForce: number): number {
  return Math.min(Math.floor((lowWaterMark * trigger) / 2), inForce + foldShare(trigger, lowWaterMark));
}

/** Half of what a fold frees (`(1 - lowWaterMark) / 2` of the trigger): the least room a background summary is given, and what it may grow by per fold. */
export function foldShare(trigger: number, lowWaterMark: number): number {
  return Math.floor(((1 - lowWaterMark) / 2) * trigger);
}

/** What a fold is reckoned against: the smaller of threshold and budget (Infinity with neither). */
export function foldTrigger(options: Pick<PlanOptions, 'compressionThresholdTokens' | 'maxContextTokens'>): number {
  return Math.min(options.compressionThresholdTokens ?? Infinity, options.maxContextTokens ?? Infinity);
}

/** Tokens of the view, the current summary counted, that a fold brings it to: the low-water mark less what the next summary may add (`summaryReserve`). */
function foldTarget(trigger: number, lowWaterMark: number, inForce: number): number {
  return trigger * lowWaterMark - Math.max(0, summaryReserve(trigger, lowWaterMark, inForce) - inForce);
}

/**
 * Where the next summary should end: it folds the oldest groups not yet summarized (all that were
 * never counted among them) until the view without them, with the next summary in it, is at the
 * low-water mark of the trigger (the smaller of threshold and budget), so the summary replaces
 * what the budget cannot hold and the recent turns stay as they were. The next summary is
 * reckoned at `summaryReserve` tokens (`inForce`: the summary the view holds now, counted in
 * `untrimmed`). At least one group; never into the kept tail.
 */
export function foldEnd(grouping: Grouping, tokens: ArrayLike<number>, coveredEnd: number, countedFrom: number, tStart: number, untrimmed: number, inForce: number, options: PlanOptions): number {
  const trigger = foldTrigger(options);
  if (!Number.isFinite(trigger)) return tStart;
  const target = foldTarget(trigger, options.lowWaterMark ?? 1, inForce);
  const { groupOf, pinned } = grouping;
  let j = Math.max(coveredEnd, Math.min(countedFrom, tStart));
  let t = untrimmed;
  do {
    const g = groupOf[j];
    for (; j < tStart && groupOf[j] === g; j++) if (!pinned[j] && j >= countedFrom) t -= tokens[j];
  } while (j < tStart && t > target);
  return j;
}

/**
 * False when a summary now would fold too little to be worth a background summarizer call: folding all it
 * may fold (every group not yet summarized before the kept tail) still leaves the view above the
 * low-water mark, so the view stays at the trigger whatever is folded, and those groups cost less
 * than a fold step (`1 - lowWaterMark` of the trigger). There, folding as soon as anything is
 * foldable summarizes one turn per request (each call rewriting the summary and the prompt prefix
 * after it); waiting for a step's worth makes each summary fold a step, as it does where the mark
 * can be reached. True wherever the mark can be reached, and with `lowWaterMark` 1.
 */
export function foldsAStep(grouping: Grouping, tokens: ArrayLike<number>, coveredEnd: number, coverLimit: number, untrimmed: number, inForce: number, options: PlanOptions): boolean {
  const trigger = foldTrigger(options);
  const lowWaterMark = options.lowWaterMark ?? 1;
  if (!Number.isFinite(trigger) || lowWaterMark >= 1) return true;
  const target = foldTarget(trigger, lowWaterMark, inForce);
  // Enough to fold: what reaches the mark, or a step; the sum stops as soon as it is reached.
  const enough = Math.min(untrimmed - target, trigger * (1 - lowWaterMark));
  let foldable = 0;
  for (let j = coveredEnd; j < coverLimit && foldable < enough; j++) if (!grouping.pinned[j]) foldable += tokens[j];
  return foldable >= enough;
}
