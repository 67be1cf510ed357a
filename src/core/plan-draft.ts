import { headEnd, lastUserGroupStart, tailStart } from './boundary.js';
import type { Grouping } from './groups.js';
import type { CollapsedResult, PlanInput } from './plan.js';
import { BRIDGE_TEXT } from './summary-frame.js';

/**
 * A plan in the making, as the stages of `planView` pass it on: what framing fixed (read only),
 * then what each stage writes, in the order they run. `reason` holds one DROP code per message
 * and `total` the tokens of the view so far; every stage keeps `total` equal to the tokens of
 * what `reason` keeps, plus what was put in (summary, notes) and the request overhead.
 */
export interface Draft<M> extends Pick<PlanInput<M>, 'messages' | 'lens' | 'grouping' | 'count' | 'options'> {
  readonly input: PlanInput<M>;
  /** Tokens of each message (`input.counts`). */
  readonly tokens: ArrayLike<number>;
  /** The kept tail may yield to the limit in this plan (`planView` tries both). */
  readonly yields: boolean;
  readonly n: number;
  readonly hEnd: number;
  /** Messages after the head and before this index (pinned ones aside) are never sent and never read. */
  readonly countedFrom: number;
  /** Tokens of the history (the counted part) with the request overhead, and how many messages were not counted. */
  readonly before: number;
  readonly uncounted: number;
  /** Start of the kept tail, after it yielded to a summary that covers into it. */
  readonly tStart: number;
  /** Tokens kept back for the notes between turns of one role (alternating formats). */
  readonly bridgeReserve: number;
  /** The budget less `bridgeReserve`; undefined without one. */
  readonly max: number | undefined;
  /** Tokens between cut points on average (`lowWaterMark`); under 1, no steps. */
  readonly step: number;
  readonly notes: string[];

  /** Start of what is never dropped at the end, the smallest view's tokens, and the held last user turn (-1: none). */
  protectedStart: number;
  minimumTokens: number;
  heldStart: number;
  heldEnd: number;
  /** A summary never covers past this: the held last user turn, or what is never dropped. */
  coverLimit: number;

  readonly reason: Uint8Array;
  total: number;

  /** The group of the newest tool results (never cleared), and what clearing the kept tail frees where the view must clear it anyway. */
  newestGroup: number;
  tailSavings: number;

  summaryMessage?: M;
  summaryTokens?: number;
  summaryAllowedTokens?: number;
  summaryShortened: boolean;
  /** Tokens a long summary is sent above its compact size (`ResolvedSummary.compactTokens`): not counted for the threshold or the next fold. */
  summaryExtra: number;
  coveredEnd: number;
  /** The view's tokens with the current summary and nothing trimmed: the threshold is checked against it. */
  untrimmed: number;

  readonly replaced: Map<number, M>;
  readonly collapsed: CollapsedResult[];

  leadNote?: M;
  leadNoteAt: number;
  cutAt: number;
}

/** True for a message of the held last user turn: kept, never dropped, cleared or summarized. */
export function isHeld<M>(d: Draft<M>, i: number): boolean {
  return i >= d.heldStart && i < d.heldEnd;
}

/** Tokens of what is never dropped: the head, pinned system messages, the kept tail, and the request overhead. */
export function protectedTokens(grouping: Grouping, tokens: ArrayLike<number>, hEnd: number, protectedStart: number, overhead: number): number {
  let total = overhead;
  const n = grouping.groupOf.length;
  for (let i = 0; i < n; i++) if (i < hEnd || i >= protectedStart || grouping.pinned[i]) total += tokens[i];
  return total;
}

/**
 * Frame: the head, the part that was counted, the kept tail (yielding to a summary that covers
 * into it), the budget and the fold step; every message kept, nothing put in yet.
 */
export function frame<M>(input: PlanInput<M>, yields: boolean): Draft<M> {
  const { messages, lens, grouping, counts: tokens, count, options, summary } = input;
  const n = messages.length;
  const notes: string[] = [];
  const hEnd = headEnd(grouping, options.keepFirst);
  // Messages after the head and before `countedFrom` (pinned ones aside) are never sent, and their
  // counts are not read even where known, so the plan is the same whatever was counted before.
  const countedFrom = Math.min(Math.max(input.countedFrom ?? 0, hEnd), tailStart(grouping, options.keepLast, hEnd));
  let before = options.requestOverheadTokens;
  let uncounted = 0;
  for (let i = 0; i < n; i++) {
    if (i >= hEnd && i < countedFrom && !grouping.pinned[i]) uncounted++;
    else before += tokens[i];
  }
  // The kept tail yields to a summary that covers into it (unless `keepLastYields` is false): the
  // messages it stands for are in the summary, where their facts cost less room than word for word.
  // Never past the group holding the last user text: a summary replaces messages before it only.
  const keptTail = tailStart(grouping, options.keepLast, hEnd);
  const tStart = options.keepLastYields !== false && summary && summary.text.trim() !== '' && summary.coveredEnd > keptTail
    ? Math.min(summary.coveredEnd, Math.max(lastUserGroupStart(grouping), hEnd))
    : keptTail;
  if (tStart > keptTail) notes.push(`keepLast yielded to the summary: it covers ${tStart - keptTail} message(s) of the kept tail`);
  // Up to two seams (before and after what is left out) may need a note when roles must alternate.
  const bridgeReserve = options.alternateRoles && lens.bridgeMessage ? 2 * count(lens.bridgeMessage(BRIDGE_TEXT)) : 0;
  const max = options.maxContextTokens === undefined ? undefined : options.maxContextTokens - bridgeReserve;
  // The smallest valid view (head, pinned, kept tail, overhead): the summary's room and the report's minimum.
  const minimumTokens = protectedTokens(grouping, tokens, hEnd, tStart, options.requestOverheadTokens);
  return {
    input, messages, lens, grouping, tokens, count, options, yields, n, hEnd, countedFrom, before, uncounted, tStart, bridgeReserve, max,
    step: max === undefined ? 0 : max * (1 - (options.lowWaterMark ?? 1)),
    notes,
    protectedStart: tStart, minimumTokens, heldStart: -1, heldEnd: -1, coverLimit: tStart,
    reason: new Uint8Array(n), // DROP code per message; 0 = kept
    total: before,
    newestGroup: -1, tailSavings: 0,
    summaryShortened: false, summaryExtra: 0, coveredEnd: hEnd, untrimmed: before,
    replaced: new Map(), collapsed: [],
    leadNoteAt: -1, cutAt: hEnd,
  };
}
