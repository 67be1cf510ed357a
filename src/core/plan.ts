import type { MessageLens } from './lens.js';
import { headEnd, lastUserGroupStart, tailStart } from './boundary.js';
import type { Grouping } from './groups.js';
import { DROP, droppedRanges, type DroppedRange } from './report.js';
import { collapsedPlaceholder, omittedNoteText, summaryMessageText } from './summary-frame.js';
import type { SummaryShortener } from './summary-fit.js';

/** A tool result whose content was replaced by a placeholder (the call/result pair stays). */
export interface CollapsedResult {
  readonly index: number;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
}

/** Options the planner needs, already resolved to numbers (see `compressContext` for defaults). */
export interface PlanOptions {
  readonly keepFirst: number;
  readonly keepLast: number;
  /**
   * The kept tail yields to `maxContextTokens`, only when the view is over it otherwise: the
   * tail's oldest groups become droppable, one at a time, until what is never dropped fits (going
   * on to a cut point with `lowWaterMark`); then the groups after the one holding the last user
   * text, oldest first, that group itself kept, never the newest group. It also yields to a
   * summary that covers into it, up to the group holding the last user text. On unless false:
   * with false, the kept tail is sent whole whatever the budget (`overBudget` reports it).
   */
  readonly keepLastYields?: boolean;
  readonly maxContextTokens?: number;
  readonly compressionThresholdTokens?: number;
  /** Collapse tool results of at least this many characters when over budget (the kept tail's last, never its newest); off when absent. */
  readonly collapseMinChars?: number;
  /** Role of the summary message. */
  readonly summaryRole: 'system' | 'user';
  /**
   * The provider wants user and assistant turns to alternate (Bedrock): where the plan brings two
   * turns of one role together (around what it dropped or summarized), it puts a short note of the
   * other role between them (`lens.bridgeMessage` / `lens.summaryMessage`), paid for in the budget.
   */
  readonly alternateRoles?: boolean;
  /** Tokens added once per request (reply priming). */
  readonly requestOverheadTokens: number;
  /**
   * Fold in steps: when the view must drop groups for the budget, it resumes only at a cut point,
   * and cut points lie about `(1 - lowWaterMark) x maxContextTokens` tokens apart. They depend on
   * each group's position and tokens alone, so a history that grows by appending keeps its cut
   * points and its views keep the same prefix (which providers cache) until the next step. Where
   * none lies within two steps, finer ones stand in (`stepCut`).
   * 1 (or absent) resumes right after the last group that had to go.
   */
  readonly lowWaterMark?: number;
}

/** A summary resolved against the history: its text and where the messages it covers end. */
export interface ResolvedSummary {
  readonly text: string;
  /** Messages in [head end, coveredEnd) are replaced by the summary; must be a group start. */
  readonly coveredEnd: number;
  /**
   * The tokens `text` is shortened to (by `shortenSummary`, so the same text every time) once the
   * whole of it no longer fits beside everything the view keeps after it; the threshold and the
   * next fold count the summary at most at this size (plus its frame).
   */
  readonly compactTokens?: number;
}

/** What the planner did and why; plain data, safe to serialize. */
export interface PlanDecisions {
  /** Tokens of the whole history; when `tokensBeforeExact` is false, those of the messages counted (a lower bound). */
  readonly tokensBefore: number;
  /** False when messages the view could never hold were not counted (see `PlanInput.countedFrom`): `tokensBefore` leaves them out. */
  readonly tokensBeforeExact: boolean;
  readonly tokensAfter: number;
  readonly messagesBefore: number;
  readonly messagesAfter: number;
  readonly groups: number;
  readonly headEnd: number;
  readonly tailStart: number;
  /**
   * Start of what is never dropped at the end: every message from here on is in the view. It is
   * the kept tail (`keepLast`), which holds the last user text, unless that tail yielded to the
   * limit: then it is later, and the last user turn may lie before it (`heldUserTurn`).
   */
  readonly protectedStart: number;
  /**
   * Set only when the kept tail yielded past the last user turn: that turn's messages
   * (`start` to `end`, exclusive), kept before `protectedStart` while the tool rounds between them
   * gave way.
   */
  readonly heldUserTurn?: { readonly start: number; readonly end: number };
  readonly summaryApplied: boolean;
  /** Tokens the summary message took, and the most it was allowed (the room left); absent without a budget or summary. */
  readonly summaryTokens?: number;
  readonly summaryAllowedTokens?: number;
  /** True when the stored summary was shortened to fit the room. */
  readonly summaryShortened: boolean;
  /** End of the messages the summary replaces (= headEnd when none is applied). */
  readonly coveredEnd: number;
  /** Where the view resumes after what it summarized or dropped before the kept part (a group start, or `coveredEnd`). */
  readonly cutAt: number;
  readonly dropped: readonly DroppedRange[];
  readonly collapsed: readonly CollapsedResult[];
  /** True when even the smallest valid view is over `maxContextTokens`. */
  readonly overBudget: boolean;
  /** Tokens of the smallest valid view: head, pinned system messages, the kept tail and the request overhead (NaN when one of them was not counted). */
  readonly minimumTokens: number;
  /**
   * Groups not yet summarized, between head/summary and tail, when the view with the current
   * summary (before any trimming) is at or above the threshold.
   */
  readonly summarize?: SummarizeRange;
  readonly notes: readonly string[];
  /** How the view's tokens split (`ViewSplit`); they add up to `tokensAfter`. */
  readonly split: ViewSplit;
}

/**
 * How a view's tokens are spent: the head (`keepFirst` and system messages), the summary, the
 * turns sent word for word between them and what is never dropped (`middle`), what is never
 * dropped at the end (`tail`: from `protectedStart` on, and a held last user turn), the notes the
 * plan puts in (between turns of one role, before a leading model turn) and the request's own
 * overhead (reply priming, tool definitions, response format). They add up to the view's tokens.
 */
export interface ViewSplit {
  readonly head: number;
  readonly summary: number;
  readonly middle: number;
  readonly tail: number;
  readonly notes: number;
  readonly overhead: number;
}

/**
 * Messages a summarizer should fold next, [start, end), and `roomTokens`: the most tokens a summary
 * of them can take so that head, system messages, the summary (framed) and every message from
 * `end` on fit `maxContextTokens` (absent without a budget). A summary sized to it never pushes
 * that view over the budget.
 */
export interface SummarizeRange {
  readonly start: number;
  readonly end: number;
  readonly roomTokens?: number;
  /**
   * True when folding now would fold less than a fold step (`1 - lowWaterMark` of the trigger)
   * while the floor alone stands above the low-water mark (`foldsAStep`): a background summary
   * may wait for more (`createCompressor` does, without recall); a one-shot summary folds it now.
   */
  readonly belowStep?: true;
}

/** The planner's output: the view to send and the decisions behind it. */
export interface Plan<M> {
  readonly messages: M[];
  readonly decisions: PlanDecisions;
}

/** What `planView` plans from: the history, how to read it, what was found in it, and the options. */
export interface PlanInput<M> {
  readonly messages: readonly M[];
  readonly lens: MessageLens<M>;
  /** The history's groups (`buildGroups`). */
  readonly grouping: Grouping;
  /** Tokens of each message; read only. */
  readonly counts: ArrayLike<number>;
  /** Prices a message the plan makes itself (the summary, a collapsed result). */
  readonly count: (message: M) => number;
  readonly options: PlanOptions;
  /** The summary to apply, already resolved against the history. */
  readonly summary?: ResolvedSummary;
  /**
   * Shortens a summary text to a number of tokens, when the summary as stored does not fit the
   * room left (the budget less head, system messages, kept tail and overhead). Without it, a
   * summary that does not fit is left out (and the report says so).
   */
  readonly shortenSummary?: SummaryShortener;
  /**
   * Messages before this index (after the head, not pinned) were not counted, because the ones
   * from here to the tail already exceed the budget: their counts are never read (NaN or not), the
   * plan drops them whatever else it decides, and the threshold counts as reached. Default: none.
   */
  readonly countedFrom?: number;
  /** The placeholder of the result cleared at `index` (`chars` long); default `collapsedPlaceholder(chars)`. */
  readonly clearedText?: (index: number, chars: number) => string;
}

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
function stepCut(grouping: Grouping, tokens: ArrayLike<number>, from: number, limit: number, step: number, total: number, floor: number, spared: (i: number) => boolean, accept: (cut: { at: number; total: number }) => boolean): { at: number; total: number } | undefined {
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
function foldEnd(grouping: Grouping, tokens: ArrayLike<number>, coveredEnd: number, countedFrom: number, tStart: number, untrimmed: number, inForce: number, options: PlanOptions): number {
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
function foldsAStep(grouping: Grouping, tokens: ArrayLike<number>, coveredEnd: number, coverLimit: number, untrimmed: number, inForce: number, options: PlanOptions): boolean {
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

/** The text of a note put between two turns of one role that a cut brought together. */
const BRIDGE_TEXT = '[earlier turns of this conversation are left out here]';

/**
 * Puts a note of the other role between two turns of one role that meet at a seam the plan made
 * (user turns, tool results included, against a user turn; assistant against assistant), in place
 * in `out`. Returns the tokens the notes cost.
 */
function bridgeSeams<M>(out: M[], seam: readonly number[], lens: MessageLens<M>, count: (m: M) => number): number {
  const side = (m: M): 'user' | 'assistant' | undefined => {
    const kind = lens.read(m).kind;
    return kind === 'user' || kind === 'result' ? 'user' : kind === 'assistant' ? 'assistant' : undefined;
  };
  let cost = 0;
  for (let k = out.length - 1; k > 0; k--) {
    if (!seam[k]) continue;
    const a = side(out[k - 1]);
    if (a === undefined || a !== side(out[k])) continue;
    const note = a === 'user' ? lens.bridgeMessage!(BRIDGE_TEXT) : lens.summaryMessage(BRIDGE_TEXT, 'user');
    out.splice(k, 0, note);
    cost += count(note);
  }
  return cost;
}

/**
 * The group of the newest tool results, those the next reply reads: the last message from `from`
 * on that carries results, when no user text comes after it (-1 otherwise). They are never cleared.
 */
function newestResultsGroup<M>(grouping: Grouping, messages: readonly M[], lens: MessageLens<M>, from: number): number {
  for (let i = messages.length - 1; i >= from; i--) {
    const read = lens.read(messages[i]);
    if (read.results.length > 0) return grouping.groupOf[i];
    if (read.hasUserText) return -1;
  }
  return -1;
}

/** How many messages from `from` on were dropped or summarized. */
function countDropped(reason: Uint8Array, from: number): number {
  let k = 0;
  for (let i = from; i < reason.length; i++) if (reason[i] !== DROP.kept) k++;
  return k;
}

/** Tokens of what is never dropped: the head, pinned system messages, the kept tail, and the request overhead. */
function protectedTokens(grouping: Grouping, tokens: ArrayLike<number>, hEnd: number, protectedStart: number, overhead: number): number {
  let total = overhead;
  const n = grouping.groupOf.length;
  for (let i = 0; i < n; i++) if (i < hEnd || i >= protectedStart || grouping.pinned[i]) total += tokens[i];
  return total;
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
 * Plans the view of a history: head + optional summary + the rest, then, while over
 * `maxContextTokens`, collapses bulky old tool results and drops the oldest groups whole; as a
 * last resort (collapse on, still over), clears the kept tail's bulky results but the newest. The
 * head, system messages, the group holding the last user text and the newest group are never
 * dropped; the rest of the kept tail (`keepLast`) only where it alone is over the limit
 * (`keepLastYields`, unless false); no group is ever split, so the view is valid whenever the input
 * is. Linear in the number of messages.
 */
export function planView<M>(input: PlanInput<M>): Plan<M> {
  const plan = planWith(input, false);
  // The kept tail yields (unless `keepLastYields` is false) only where the view is over the limit without that,
  // and only when that makes it smaller: a format whose views must lead with a user turn, or
  // alternate roles, pays a note where the cut lands, which can outweigh what yielding saved.
  if (input.options.keepLastYields === false || !plan.decisions.overBudget) return plan;
  const yielded = planWith(input, true);
  return yielded.decisions.tokensAfter < plan.decisions.tokensAfter ? yielded : plan;
}

/** `planView`, the kept tail yielding to the limit or not. */
function planWith<M>(input: PlanInput<M>, yields: boolean): Plan<M> {
  const { messages, lens, grouping, counts, count, options, summary, shortenSummary } = input;
  const n = messages.length;
  const { groups } = grouping;
  const notes: string[] = [];
  const tokens = counts;
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
  // Fold in steps (`lowWaterMark`): tokens between cut points, on average; under 1, no steps.
  const step = max === undefined ? 0 : max * (1 - (options.lowWaterMark ?? 1));
  // The kept tail (the last `keepLast` messages in whole groups, and always the group holding the
  // last user text) is sent whole unless it alone is over the limit and yields (`yields`): then its
  // oldest groups may go, then the rounds after the last user turn, never that turn or the newest group.
  let protectedStart = tStart;
  // The smallest valid view (head, pinned, kept tail, overhead): the summary's room and the report's minimum.
  let minimumTokens = protectedTokens(grouping, tokens, hEnd, protectedStart, options.requestOverheadTokens);
  // The last user turn's group, kept while the rounds after it yield (-1: none held).
  let heldStart = -1;
  let heldEnd = -1;
  if (yields && max !== undefined && minimumTokens > max) {
    const lastUser = lastUserGroupStart(grouping);
    const lastTurn = Math.max(lastUser, hEnd);
    const pinned = (i: number) => grouping.pinned[i] === 1;
    const yieldTo = (limit: number) => {
      while (protectedStart < limit && minimumTokens > max) {
        const g = grouping.groupOf[protectedStart];
        for (; protectedStart < n && grouping.groupOf[protectedStart] === g; protectedStart++) {
          if (!pinned(protectedStart)) minimumTokens -= tokens[protectedStart];
        }
      }
      // In steps, as the drop below: once it fits, on to the next cut point within two steps'
      // worth (a finer one when none is), so the next requests append to the same prefix.
      if (step < 1 || minimumTokens > max) return;
      const floor = minimumTokens - 2 * step;
      const cut = stepCut(grouping, tokens, protectedStart, limit, step, minimumTokens, floor, pinned, (c) => c.at < limit && c.total >= floor);
      if (cut) [protectedStart, minimumTokens] = [cut.at, cut.total];
    };
    // The tail's turns before the last user turn first; then the rounds of tool calls after it,
    // oldest first, while its own group stays, and never the newest group (what the reply reads).
    yieldTo(lastTurn);
    const newest = groups.length > 0 ? groups[groups.length - 1].start : n;
    if (minimumTokens > max && protectedStart === lastTurn && lastTurn < newest) {
      // (A last user turn inside the head is sent with it: nothing after the head is held.)
      if (lastUser >= hEnd) {
        heldStart = lastTurn;
        heldEnd = groups[grouping.groupOf[lastTurn]].end;
        protectedStart = heldEnd;
      }
      const from = protectedStart;
      yieldTo(newest);
      if (protectedStart === from) {
        protectedStart = lastTurn;
        heldStart = heldEnd = -1;
      }
    }
    if (protectedStart > tStart) {
      const rounds = heldStart < 0 ? 0 : protectedStart - heldEnd;
      notes.push(`keepLast yielded to the limit: ${protectedStart - tStart - (heldStart < 0 ? 0 : heldEnd - heldStart)} message(s) of the kept tail were droppable${rounds > 0 ? `, ${rounds} of them after the last user turn, which is kept` : ''}`);
    }
  }
  /** True for a message of the held last user turn: kept, never dropped, cleared or summarized. */
  const held = (i: number) => i >= heldStart && i < heldEnd;
  // A summary never covers the last user turn: it replaces messages in place, before what it keeps.
  const coverLimit = heldStart >= 0 ? heldStart : protectedStart;

  const reason = new Uint8Array(n); // DROP code per message; 0 = kept
  let total = before;

  const minChars = options.collapseMinChars;
  const clearedCopies = new Map<number, { message: M; tokens: number } | null>();
  /**
   * Message `i` with its bulky results cleared (each result of at least its share of `minChars`;
   * the user's own text beside results is kept) and its tokens; undefined when it has none, or
   * clearing saves nothing (always, without `collapseMinChars`). Worked out once per message.
   */
  const clearedCopy = (i: number): { message: M; tokens: number } | undefined => {
    if (minChars === undefined) return undefined;
    const results = lens.read(messages[i]).results;
    if (results.length === 0) return undefined;
    let chars = 0;
    for (const r of results) chars += r.content.length;
    if (chars < minChars) return undefined;
    const known = clearedCopies.get(i);
    if (known !== undefined) return known ?? undefined;
    let copy: { message: M; tokens: number } | null = null;
    let cleared = messages[i];
    for (let slot = results.length - 1; slot >= 0; slot--) {
      const length = results[slot].content.length;
      if (length >= minChars / results.length) cleared = lens.collapseResult(cleared, slot, input.clearedText ? input.clearedText(i, length) : collapsedPlaceholder(length));
    }
    const after = count(cleared);
    if (after < tokens[i]) copy = { message: cleared, tokens: after };
    clearedCopies.set(i, copy);
    return copy ?? undefined;
  };
  // The kept tail's bulky results (never the newest) the view must clear anyway, with no summary
  // in it, when the protected part alone is over the limit: oldest first, only as many as that
  // takes (the last pass below clears the same). The room they free is the summary's.
  // The group of the newest results (what the next reply reads): never cleared.
  const newestGroup = max !== undefined && minChars !== undefined ? newestResultsGroup(grouping, messages, lens, protectedStart) : -1;
  let tailSavings = 0;
  if (max !== undefined && minChars !== undefined) {
    for (let i = protectedStart; i < n && minimumTokens - tailSavings > max; i++) {
      if (grouping.groupOf[i] === newestGroup) continue;
      const copy = clearedCopy(i);
      if (copy) tailSavings += tokens[i] - copy.tokens;
    }
  }

  let summaryMessage: M | undefined;
  let summaryTokens: number | undefined;
  let summaryAllowedTokens: number | undefined;
  let summaryShortened = false;
  let coveredEnd = hEnd;
  const clipped = summary ? Math.min(Math.max(summary.coveredEnd, hEnd), coverLimit) : hEnd;
  if (summary && clipped < summary.coveredEnd) notes.push('summary covers part of the protected last turn; those messages are sent too');
  const frame = (text: string) => lens.summaryMessage(summaryMessageText(text, clipped - hEnd), options.summaryRole);
  const compact = summary?.compactTokens;
  let frameCost = 0;
  if (summary && summary.text.trim() !== '' && clipped > hEnd) {
    let message: M | undefined = frame(summary.text);
    let cost = count(message);
    if (max !== undefined) {
      // The summary gets the room the protected part leaves (its bulky results cleared where the
      // view must clear them anyway): it never pushes a view over the budget.
      const room = max - minimumTokens + tailSavings;
      summaryAllowedTokens = Math.max(0, room);
      if (cost > room) {
        frameCost = count(frame(''));
        // A summary with a compact size is shortened to it wherever that fits: one text for every
        // request until the next fold, so the prompt prefix stays the same.
        let target = compact !== undefined ? Math.min(room - frameCost, compact) : room - frameCost;
        message = undefined;
        for (let attempt = 0; attempt < 4 && shortenSummary && target > 0; attempt++) {
          const text = shortenSummary(summary.text, target);
          if (text.trim() === '') break;
          const candidate = frame(text);
          const candidateCost = count(candidate);
          if (candidateCost <= room) {
            message = candidate;
            cost = candidateCost;
            summaryShortened = true;
            break;
          }
          target -= candidateCost - room; // the counts disagreed a little: ask for that much less
        }
        notes.push(message
          ? `summary shortened to ${cost} of the ${room} tokens left once the head, system messages and kept tail are sent${tailSavings > 0 ? ' (its bulky results cleared)' : ''}`
          : `summary left out: only ${Math.max(0, room)} tokens are left once the head, system messages and kept tail are sent${tailSavings > 0 ? ' (its bulky results cleared)' : ''}`);
      }
    }
    if (message) {
      summaryMessage = message;
      summaryTokens = cost;
      coveredEnd = clipped;
      total += cost;
    }
  }
  if (summaryMessage) {
    for (let g = grouping.groupOf[hEnd] ?? groups.length; g < groups.length && groups[g].start < coveredEnd; g++) {
      const grp = groups[g];
      if (grp.system) continue; // instructions stay in force even when the turns around them are summarized
      for (let i = grp.start; i < grp.end; i++) {
        reason[i] = DROP.summarized;
        if (i >= countedFrom) total -= tokens[i];
      }
    }
  }

  // A summary written longer than a view holds for long is sent whole only while everything kept
  // after it fits beside it; otherwise in its compact form, never a turn dropped for its length.
  if (summaryMessage && summary && compact !== undefined && shortenSummary && max !== undefined && total > max) {
    if (frameCost === 0) frameCost = count(frame(''));
    if ((summaryTokens ?? 0) > compact + frameCost) {
      const text = shortenSummary(summary.text, compact);
      const candidate = text.trim() === '' ? undefined : frame(text);
      const candidateCost = candidate === undefined ? Infinity : count(candidate);
      if (candidate !== undefined && candidateCost < (summaryTokens ?? 0)) {
        total += candidateCost - (summaryTokens ?? 0);
        notes.push(`summary sent in its compact form (${candidateCost} tokens): the whole of it (${summaryTokens}) does not fit beside the turns after it`);
        summaryMessage = candidate;
        summaryTokens = candidateCost;
        summaryShortened = true;
      }
    }
  }
  // What the summary counts for the threshold and the next fold: at most its compact size.
  if (summaryMessage && compact !== undefined && frameCost === 0) frameCost = count(frame(''));
  const summaryExtra = summaryMessage && compact !== undefined ? Math.max(0, (summaryTokens ?? 0) - compact - frameCost) : 0;
  // What the view costs with the current summary and nothing trimmed: the threshold is checked
  // against this, so a chat is summarized again only once the unsummarized part has grown back.
  const untrimmed = total - summaryExtra;
  let leadNote: M | undefined;
  let leadNoteAt = -1;
  const replaced = new Map<number, M>();
  const collapsed: CollapsedResult[] = [];
  /** Clears the bulky results of message `i` in place (the pair stays, so the view stays valid) when that saves tokens. */
  const collapseBulky = (i: number) => {
    const copy = clearedCopy(i);
    if (!copy) return;
    replaced.set(i, copy.message);
    collapsed.push({ index: i, tokensBefore: tokens[i], tokensAfter: copy.tokens });
    total += copy.tokens - tokens[i];
  };
  if (max !== undefined && total > max && minChars !== undefined) {
    // Clear bulky results older than the tail first.
    for (let i = Math.max(coveredEnd, countedFrom); i < protectedStart && total > max; i++) {
      if (reason[i] === DROP.kept && !held(i)) collapseBulky(i);
    }
  }
  let cutAt = coveredEnd;
  if ((max !== undefined && total > max) || countedFrom > coveredEnd) {
    // Drop the oldest whole groups until the view fits; the current turn is never dropped. This
    // walks the typed arrays only (group of each message, pinned system groups): a long history
    // drops tens of thousands of groups here. A collapsed result counts at its new size.
    const collapsedTokens = new Map(collapsed.map((c) => [c.index, c.tokensAfter]));
    const { groupOf, pinned } = grouping;
    let i = coveredEnd;
    const dropGroup = () => {
      const g = groupOf[i];
      let j = i;
      if (pinned[i] || held(i)) {
        while (j < n && groupOf[j] === g) j++;
      } else {
        for (; j < n && groupOf[j] === g; j++) {
          reason[j] = DROP.budget;
          const t = collapsedTokens.size > 0 ? (collapsedTokens.get(j) ?? tokens[j]) : tokens[j];
          if (j >= countedFrom) total -= t;
        }
      }
      i = j;
    };
    /**
     * The nearest group start before `to`, not before `from`, that is a user turn this pass
     * dropped, and the tokens taking back every turn dropped from there to `to` would cost.
     */
    const userTurnBefore = (to: number, from: number): { at: number; tokens: number } | undefined => {
      let tokensBack = 0;
      for (let c = to - 1; c >= from; c--) {
        if (reason[c] !== DROP.budget) continue;
        tokensBack += collapsedTokens.size > 0 ? (collapsedTokens.get(c) ?? tokens[c]) : tokens[c];
        if ((c === 0 || groupOf[c - 1] !== groupOf[c]) && lens.read(messages[c]).kind === 'user') return { at: c, tokens: tokensBack };
      }
      return undefined;
    };
    // Messages never counted are dropped first: the counted ones after them already fill the budget.
    while (i < protectedStart && i < countedFrom) dropGroup();
    if (max !== undefined && total > max) {
      while (i < protectedStart && total > max) dropGroup();
      // Fold in steps: go on to the next cut point within two steps' worth (a finer one when none is).
      if (step >= 1) {
        const floor = total - 2 * step;
        // A tail that yielded resumes where it yields (a cut point itself, when it went on to one).
        const accept = (c: { at: number; total: number }) => (c.at < protectedStart || (c.at === protectedStart && protectedStart > tStart)) && c.total >= floor;
        const cut = stepCut(grouping, tokens, i, protectedStart, step, total, floor, (k) => pinned[k] === 1 || held(k), accept);
        if (cut) while (i < cut.at) dropGroup();
      }
    }
    // A format whose views must not go on with a model turn right after a cut (where no user turn
    // or tool results the view keeps come before it) gets a short note of what was left out before
    // it (a user message), paid for like anything else in the view; or, where that costs less, the
    // turns dropped since the nearest user turn are taken back, and no note is needed.
    if (lens.leadsWithUser && !summaryMessage && i > coveredEnd) {
      for (;;) {
        let k = i;
        while (k < n && (reason[k] !== DROP.kept || pinned[k])) k++;
        if (k >= n || lens.read(messages[k]).kind === 'user') break;
        let p = k - 1;
        while (p >= 0 && reason[p] !== DROP.kept) p--;
        const before = p >= 0 ? lens.read(messages[p]).kind : undefined;
        if (before === 'user' || before === 'result') break;
        const note = lens.summaryMessage(omittedNoteText(countDropped(reason, hEnd)), 'user');
        const cost = count(note);
        const back = userTurnBefore(i, Math.max(coveredEnd, countedFrom));
        if (back !== undefined && back.tokens <= cost && (max === undefined || total + back.tokens <= max || i >= protectedStart)) {
          for (let j = back.at; j < i; j++) if (reason[j] === DROP.budget) reason[j] = DROP.kept;
          total += back.tokens;
          i = back.at;
          break;
        }
        if (max === undefined || total + cost <= max || i >= protectedStart) {
          leadNote = note;
          leadNoteAt = k;
          total += cost;
          break;
        }
        dropGroup();
      }
    }
    cutAt = i;
  }
  if (max !== undefined && total > max && minChars !== undefined) {
    // Nothing older is left to drop: clear bulky results from `protectedStart` on (what is never
    // dropped: the kept tail, or what is left of it when it yielded), oldest first, but never the
    // newest results (those the next reply reads). A view over the budget is refused by the
    // provider, so this is the last thing tried before reporting `overBudget`. (The first pass
    // stopped before `protectedStart`.)
    for (let i = protectedStart; i < n && total > max; i++) if (grouping.groupOf[i] !== newestGroup) collapseBulky(i);
  }
  const out: M[] = [];
  /** 1 where the plan left something out or put something in right before `out[k]`. */
  const seam: number[] = [];
  let gap = false;
  const emit = (m: M, made: boolean) => {
    seam.push(gap || made ? 1 : 0);
    out.push(m);
    gap = made;
  };
  let summaryPlaced = false;
  for (let i = 0; i < n; i++) {
    if (i === leadNoteAt && leadNote !== undefined) emit(leadNote, true);
    if (reason[i] !== DROP.kept) {
      gap = true;
      if (summaryMessage && !summaryPlaced && reason[i] === DROP.summarized) {
        emit(summaryMessage, true);
        summaryPlaced = true;
      }
      continue;
    }
    if (summaryMessage && !summaryPlaced && i >= hEnd) {
      emit(summaryMessage, true);
      summaryPlaced = true;
    }
    emit(replaced.size > 0 ? (replaced.get(i) ?? messages[i]) : messages[i], false);
  }
  if (summaryMessage && !summaryPlaced) emit(summaryMessage, true);
  if (bridgeReserve > 0) total += bridgeSeams(out, seam, lens, count);
  const limit = options.maxContextTokens;
  const overBudget = limit !== undefined && total > limit;
  if (overBudget) {
    const cleared = minChars === undefined ? '' : ` (its bulky tool results, all but the newest, were cleared)`;
    notes.push(`the smallest valid view is ${total} tokens, over the limit of ${limit}: the head (keepFirst), system messages, the kept tail (keepLast${yields ? '' : '; keepLastYields lets it give way'}) and the last user turn are never dropped or split${cleared}`);
  }
  const collapsedFinal = collapsed.filter((c) => reason[c.index] === DROP.kept);
  const split = { head: 0, summary: summaryMessage ? summaryTokens ?? 0 : 0, middle: 0, tail: 0, notes: 0, overhead: options.requestOverheadTokens };
  const collapsedAt = new Map(collapsed.map((c) => [c.index, c.tokensAfter]));
  for (let i = 0; i < n; i++) {
    if (reason[i] !== DROP.kept) continue;
    const t = collapsedAt.get(i) ?? tokens[i];
    if (i < hEnd || grouping.pinned[i]) split.head += t;
    else if (i >= protectedStart || held(i)) split.tail += t;
    else split.middle += t;
  }
  split.notes = total - split.head - split.summary - split.middle - split.tail - split.overhead;

  let summarize: PlanDecisions['summarize'];
  const threshold = options.compressionThresholdTokens;
  // Uncounted messages mean the counted ones alone passed the budget and the threshold.
  // What the kept tail yielded to the limit may be summarized too: it is no longer sent whole.
  // A summary shortened to make room for the kept tail may take that tail in (unless
  // `keepLastYields` is false), up to the group holding the last user text: its facts cost less
  // room in the summary than word for word, and the next view yields the tail to it.
  const foldLimit = summaryShortened && options.keepLastYields !== false && heldStart < 0
    ? Math.max(coverLimit, Math.min(lastUserGroupStart(grouping), n))
    : coverLimit;
  if (threshold !== undefined && (untrimmed >= threshold || countedFrom > coveredEnd) && coveredEnd < foldLimit) {
    const counted = (summaryTokens ?? 0) - summaryExtra;
    const end = foldEnd(grouping, tokens, coveredEnd, countedFrom, foldLimit, untrimmed, counted, options);
    const belowStep = countedFrom <= coveredEnd && !foldsAStep(grouping, tokens, coveredEnd, foldLimit, untrimmed, counted, options);
    summarize = max === undefined ? { start: coveredEnd, end } : { start: coveredEnd, end, roomTokens: summaryRoom(grouping, tokens, hEnd, end, max, options.requestOverheadTokens, count(lens.summaryMessage(summaryMessageText('', end - hEnd), options.summaryRole)), tailSavings) };
    if (belowStep) summarize = { ...summarize, belowStep };
  }
  return {
    messages: out,
    decisions: {
      tokensBefore: before,
      tokensBeforeExact: uncounted === 0,
      tokensAfter: total,
      messagesBefore: n,
      messagesAfter: out.length,
      groups: groups.length,
      headEnd: hEnd,
      tailStart: tStart,
      protectedStart,
      ...(heldStart >= 0 ? { heldUserTurn: { start: heldStart, end: heldEnd } } : {}),
      summaryApplied: summaryMessage !== undefined,
      summaryTokens,
      summaryAllowedTokens,
      summaryShortened,
      coveredEnd,
      cutAt,
      dropped: droppedRanges(reason),
      collapsed: collapsedFinal,
      overBudget,
      minimumTokens,
      summarize,
      notes,
      split,
    },
  };
}
