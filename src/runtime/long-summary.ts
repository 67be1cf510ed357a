import { foldShare } from '../core/plan.js';
import type { Grouping } from '../core/groups.js';
import type { RollingResult } from '../summarize/rolling.js';
import type { Summarizer } from '../summarize/summarizer.js';

/** Tokens kept back from the long summary's room for its frame's count of covered messages. */
const FRAME_MARGIN = 4;

/** What `longSummary` works from: the fold a job settled on and how to make one more summary of it. */
export interface LongSummaryInput {
  /** The fold the plan asked for, with the room the budget leaves a summary ending at `range.end`. */
  readonly range: { readonly end: number; readonly roomTokens?: number };
  /** Where the fold ends (at or after `range.end`), its summary and the room that summary was given. */
  readonly end: number;
  readonly folded: RollingResult;
  readonly givenTokens: number | undefined;
  /** The smaller of threshold and budget. */
  readonly trigger: number;
  readonly grouping: Grouping;
  readonly counts: ArrayLike<number>;
  readonly countText: (text: string) => number;
  /** Folds the same messages into `roomTokens`; undefined when that attempt failed. */
  readonly attempt: (end: number, roomTokens: number) => Promise<RollingResult | undefined>;
}

/**
 * A longer summary of the same fold, for the views right after it. A fold holds the view to the
 * low-water mark so the next turns have room to append; until they have taken that room, the view
 * can hold more of the summary's facts. When the summary left facts out and its summarizer both
 * states its facts (`reportsFacts`) and shortens its own summaries (`shorten`, the same text every
 * time), it is written again for the room the budget leaves less a fold share, and kept with
 * `compactTokens` = the room it had: views send it whole while it fits beside the turns after it,
 * then shortened to that size, so the fold's cadence and prompt prefix between folds are as
 * before. Undefined when there is no room to gain or the longer one keeps no more facts.
 */
export async function longSummary(
  ctx: { readonly summarizer: Summarizer; readonly planning: { readonly plan: { readonly lowWaterMark?: number } } },
  input: LongSummaryInput,
): Promise<{ readonly folded: RollingResult; readonly compactTokens: number } | undefined> {
  const { summarizer } = ctx;
  const { range, end, folded, givenTokens, grouping, counts } = input;
  if (summarizer.reportsFacts !== true || typeof summarizer.shorten !== 'function') return undefined;
  if (range.roomTokens === undefined || givenTokens === undefined || !Number.isFinite(input.trigger)) return undefined;
  if (folded.factsSeen === undefined || folded.factsKept === undefined) return undefined;
  let folds = 0;
  for (let i = range.end; i < end; i++) if (!grouping.pinned[i]) folds += counts[i];
  const share = foldShare(input.trigger, ctx.planning.plan.lowWaterMark ?? 1);
  const room = range.roomTokens + folds - share - FRAME_MARGIN;
  const compactTokens = Math.min(givenTokens, input.countText(folded.summary));
  // Worth a summarizer call only for a tenth more room at least, and only where the summary had
  // to leave something out: a fact, or text, its room did not hold.
  if (compactTokens < 1 || room <= compactTokens * 1.1) return undefined;
  if (folded.factsKept >= folded.factsSeen && compactTokens < 0.9 * givenTokens) return undefined;
  const longer = await input.attempt(end, room);
  if (!longer || longer.factsKept === undefined || longer.factsKept < folded.factsKept) return undefined;
  if (input.countText(longer.summary) <= compactTokens) return undefined;
  return { folded: longer, compactTokens };
}
