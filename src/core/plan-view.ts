import type { MessageLens } from './lens.js';
import { isHeld, type Draft } from './plan-draft.js';
import type { PlanDecisions, ViewSplit } from './plan.js';
import { summarizeRange } from './plan-summary.js';
import { DROP, droppedRanges } from './report.js';
import { BRIDGE_TEXT } from './summary-frame.js';

/**
 * Assemble: the view in history order, the summary where the first message it covers was (or
 * right after the head), the lead note before the message it leads, a collapsed result in its
 * place; then, where roles must alternate, a note between two turns of one role that a seam
 * brought together (paid for in `total`).
 */
export function assemble<M>(d: Draft<M>): M[] {
  const { n, reason, messages, replaced, summaryMessage, leadNote, leadNoteAt, hEnd } = d;
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
  if (d.bridgeReserve > 0) d.total += bridgeSeams(out, seam, d.lens, d.count);
  return out;
}

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

/** How the view's tokens split (`ViewSplit`); the notes are what is left of `total`. */
function splitOf<M>(d: Draft<M>): ViewSplit {
  const { n, reason, tokens, hEnd, grouping, protectedStart } = d;
  const split = { head: 0, summary: d.summaryMessage ? d.summaryTokens ?? 0 : 0, middle: 0, tail: 0, notes: 0, overhead: d.options.requestOverheadTokens };
  const collapsedAt = new Map(d.collapsed.map((c) => [c.index, c.tokensAfter]));
  for (let i = 0; i < n; i++) {
    if (reason[i] !== DROP.kept) continue;
    const t = collapsedAt.get(i) ?? tokens[i];
    if (i < hEnd || grouping.pinned[i]) split.head += t;
    else if (i >= protectedStart || isHeld(d, i)) split.tail += t;
    else split.middle += t;
  }
  split.notes = d.total - split.head - split.summary - split.middle - split.tail - split.overhead;
  return split;
}

/** Report: what the plan did and why, with the over-budget note when even the smallest valid view is over the limit. */
export function decisionsOf<M>(d: Draft<M>, out: readonly M[]): PlanDecisions {
  const limit = d.options.maxContextTokens;
  const overBudget = limit !== undefined && d.total > limit;
  if (overBudget) {
    const cleared = d.options.collapseMinChars === undefined ? '' : ` (its bulky tool results, all but the newest, were cleared)`;
    d.notes.push(`the smallest valid view is ${d.total} tokens, over the limit of ${limit}: the head (keepFirst), system messages, the kept tail (keepLast${d.yields ? '' : '; keepLastYields lets it give way'}) and the last user turn are never dropped or split${cleared}`);
  }
  const split = splitOf(d);
  const summarize = summarizeRange(d);
  return {
    tokensBefore: d.before,
    tokensBeforeExact: d.uncounted === 0,
    tokensAfter: d.total,
    messagesBefore: d.n,
    messagesAfter: out.length,
    groups: d.grouping.groups.length,
    headEnd: d.hEnd,
    tailStart: d.tStart,
    protectedStart: d.protectedStart,
    ...(d.heldStart >= 0 ? { heldUserTurn: { start: d.heldStart, end: d.heldEnd } } : {}),
    summaryApplied: d.summaryMessage !== undefined,
    summaryTokens: d.summaryTokens,
    summaryAllowedTokens: d.summaryAllowedTokens,
    summaryShortened: d.summaryShortened,
    coveredEnd: d.coveredEnd,
    cutAt: d.cutAt,
    dropped: droppedRanges(d.reason),
    collapsed: d.collapsed.filter((c) => d.reason[c.index] === DROP.kept),
    overBudget,
    minimumTokens: d.minimumTokens,
    summarize,
    notes: d.notes,
    split,
  };
}
