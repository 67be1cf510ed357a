import { lastUserGroupStart } from './boundary.js';
import { foldEnd, foldsAStep } from './fold-steps.js';
import type { Grouping } from './groups.js';
import type { Draft } from './plan-draft.js';
import type { SummarizeRange } from './plan.js';
import { DROP } from './report.js';
import { summaryMessageText } from './summary-frame.js';

/**
 * Summary: the stored summary goes in right after the head, covering up to `coverLimit`; with a
 * budget it gets the room the protected part leaves (its bulky results cleared where the view
 * must clear them anyway), shortened to it or left out, so it never pushes a view over the
 * budget. The messages it stands for are marked summarized (system messages stay in force).
 */
export function placeSummary<M>(d: Draft<M>): void {
  const { summary } = d.input;
  const { hEnd } = d;
  const clipped = summary ? Math.min(Math.max(summary.coveredEnd, hEnd), d.coverLimit) : hEnd;
  if (summary && clipped < summary.coveredEnd) d.notes.push('summary covers part of the protected last turn; those messages are sent too');
  if (!summary || summary.text.trim() === '' || clipped <= hEnd) return;
  const frame = (text: string) => d.lens.summaryMessage(summaryMessageText(text, clipped - hEnd), d.options.summaryRole);
  let message: M | undefined = frame(summary.text);
  let cost = d.count(message);
  if (d.max !== undefined) {
    const room = d.max - d.minimumTokens + d.tailSavings;
    d.summaryAllowedTokens = Math.max(0, room);
    if (cost > room) [message, cost] = shortenToRoom(d, summary.text, frame, room, summary.compactTokens);
  }
  if (!message) return;
  d.summaryMessage = message;
  d.summaryTokens = cost;
  d.coveredEnd = clipped;
  d.total += cost;
  markSummarized(d);
  if (summary.compactTokens !== undefined) compactIfCrowded(d, summary.text, frame, summary.compactTokens);
}

/**
 * A summary written longer than a view holds for long is sent whole only while everything kept
 * after it fits beside it; otherwise in its compact form, never a turn dropped for its length.
 * Either way the tokens it takes above its compact size (and frame) are `summaryExtra`.
 */
function compactIfCrowded<M>(d: Draft<M>, text: string, frame: (text: string) => M, compact: number): void {
  const frameCost = d.count(frame(''));
  const shorten = d.input.shortenSummary;
  const tokens = d.summaryTokens ?? 0;
  if (shorten && d.max !== undefined && d.total > d.max && tokens > compact + frameCost) {
    const shorter = shorten(text, compact);
    const candidate = shorter.trim() === '' ? undefined : frame(shorter);
    const candidateCost = candidate === undefined ? Infinity : d.count(candidate);
    if (candidate !== undefined && candidateCost < tokens) {
      d.total += candidateCost - tokens;
      d.notes.push(`summary sent in its compact form (${candidateCost} tokens): the whole of it (${tokens}) does not fit beside the turns after it`);
      d.summaryMessage = candidate;
      d.summaryTokens = candidateCost;
      d.summaryShortened = true;
    }
  }
  d.summaryExtra = Math.max(0, (d.summaryTokens ?? 0) - compact - frameCost);
}

/** The summary shortened to `room` tokens (up to four tries, as the counts may disagree a little), or undefined; notes which. */
function shortenToRoom<M>(d: Draft<M>, text: string, frame: (text: string) => M, room: number, compact?: number): [M | undefined, number] {
  const shorten = d.input.shortenSummary;
  // A summary with a compact size is shortened to it wherever that fits: one text for every
  // request until the next fold, so the prompt prefix stays the same.
  let target = compact !== undefined ? Math.min(room - d.count(frame('')), compact) : room - d.count(frame(''));
  let message: M | undefined;
  let cost = 0;
  for (let attempt = 0; attempt < 4 && shorten && target > 0; attempt++) {
    const shorter = shorten(text, target);
    if (shorter.trim() === '') break;
    const candidate = frame(shorter);
    const candidateCost = d.count(candidate);
    if (candidateCost <= room) {
      message = candidate;
      cost = candidateCost;
      d.summaryShortened = true;
      break;
    }
    target -= candidateCost - room; // the counts disagreed a little: ask for that much less
  }
  const cleared = d.tailSavings > 0 ? ' (its bulky results cleared)' : '';
  d.notes.push(message
    ? `summary shortened to ${cost} of the ${room} tokens left once the head, system messages and kept tail are sent${cleared}`
    : `summary left out: only ${Math.max(0, room)} tokens are left once the head, system messages and kept tail are sent${cleared}`);
  return [message, cost];
}

/** Marks the groups after the head that the summary covers as summarized; instructions stay in force even when the turns around them are summarized. */
function markSummarized<M>(d: Draft<M>): void {
  const { groups, groupOf } = d.grouping;
  for (let g = groupOf[d.hEnd] ?? groups.length; g < groups.length && groups[g].start < d.coveredEnd; g++) {
    const grp = groups[g];
    if (grp.system) continue;
    for (let i = grp.start; i < grp.end; i++) {
      d.reason[i] = DROP.summarized;
      if (i >= d.countedFrom) d.total -= d.tokens[i];
    }
  }
}

/**
 * The room a summary of [hEnd, end) has in the view that keeps everything else: `max` minus the
 * head, pinned messages, every message from `end` on (less `cleared`, what clearing the kept
 * tail's bulky results frees where the view must clear them anyway), the request overhead and the
 * summary's frame; at least 0. Every message it adds up was counted (a fold ends at or after the
 * counted part).
 */
function summaryRoom(grouping: Grouping, tokens: ArrayLike<number>, hEnd: number, end: number, max: number, overhead: number, frameCost: number, cleared: number): number {
  let kept = overhead + frameCost - cleared;
  const n = grouping.groupOf.length;
  for (let i = 0; i < n; i++) if (i < hEnd || i >= end || grouping.pinned[i]) kept += tokens[i];
  return Math.max(0, max - kept);
}

/**
 * What to summarize next, when the untrimmed view is at or over the threshold (or messages were
 * left uncounted: the counted ones alone passed the budget and the threshold). What the kept tail
 * yielded to the limit may be summarized too: it is no longer sent whole. A summary shortened to
 * make room for the kept tail may take that tail in (unless `keepLastYields` is false), up to the
 * group holding the last user text: its facts cost less room in the summary than word for word,
 * and the next view yields the tail to it.
 */
export function summarizeRange<M>(d: Draft<M>): SummarizeRange | undefined {
  const { grouping, tokens, options, coveredEnd, countedFrom, untrimmed, hEnd, max } = d;
  const threshold = options.compressionThresholdTokens;
  const foldLimit = d.summaryShortened && options.keepLastYields !== false && d.heldStart < 0
    ? Math.max(d.coverLimit, Math.min(lastUserGroupStart(grouping), d.n))
    : d.coverLimit;
  if (threshold === undefined || !(untrimmed >= threshold || countedFrom > coveredEnd) || coveredEnd >= foldLimit) return undefined;
  const inForce = (d.summaryTokens ?? 0) - d.summaryExtra;
  const end = foldEnd(grouping, tokens, coveredEnd, countedFrom, foldLimit, untrimmed, inForce, options);
  const belowStep = countedFrom <= coveredEnd && !foldsAStep(grouping, tokens, coveredEnd, foldLimit, untrimmed, inForce, options);
  const frameCost = () => d.count(d.lens.summaryMessage(summaryMessageText('', end - hEnd), options.summaryRole));
  const range: SummarizeRange = max === undefined ? { start: coveredEnd, end } : { start: coveredEnd, end, roomTokens: summaryRoom(grouping, tokens, hEnd, end, max, options.requestOverheadTokens, frameCost(), d.tailSavings) };
  return belowStep ? { ...range, belowStep } : range;
}
