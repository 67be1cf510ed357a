import { stepCut } from './fold-steps.js';
import { isHeld, type Draft } from './plan-draft.js';
import { DROP } from './report.js';
import { omittedNoteText } from './summary-frame.js';

/** Walks the droppable groups after what the summary covers, oldest first; `at` is where the view resumes. */
interface Dropper {
  at: number;
  /** Drops the group starting at `at` (a pinned or held one is stepped over) and moves on. */
  dropGroup(): void;
  /**
   * The nearest group start before `to`, not before `from`, that is a user turn this pass
   * dropped, and the tokens taking back every turn dropped from there to `to` would cost.
   */
  userTurnBefore(to: number, from: number): { at: number; tokens: number } | undefined;
}

/**
 * This walks the typed arrays only (group of each message, pinned system groups): a long history
 * drops tens of thousands of groups here. A collapsed result counts at its new size.
 */
function dropper<M>(d: Draft<M>): Dropper {
  const collapsedTokens = new Map(d.collapsed.map((c) => [c.index, c.tokensAfter]));
  const { groupOf, pinned } = d.grouping;
  const { n, tokens, reason, countedFrom } = d;
  const tokensAt = (j: number) => (collapsedTokens.size > 0 ? (collapsedTokens.get(j) ?? tokens[j]) : tokens[j]);
  const walk: Dropper = {
    at: d.coveredEnd,
    dropGroup() {
      const g = groupOf[walk.at];
      let j = walk.at;
      if (pinned[walk.at] || isHeld(d, walk.at)) {
        while (j < n && groupOf[j] === g) j++;
      } else {
        for (; j < n && groupOf[j] === g; j++) {
          reason[j] = DROP.budget;
          if (j >= countedFrom) d.total -= tokensAt(j);
        }
      }
      walk.at = j;
    },
    userTurnBefore(to, from) {
      let tokensBack = 0;
      for (let c = to - 1; c >= from; c--) {
        if (reason[c] !== DROP.budget) continue;
        tokensBack += tokensAt(c);
        if ((c === 0 || groupOf[c - 1] !== groupOf[c]) && d.lens.read(d.messages[c]).kind === 'user') return { at: c, tokens: tokensBack };
      }
      return undefined;
    },
  };
  return walk;
}

/**
 * Drop: the oldest whole groups go until the view fits (the messages never counted first: the
 * counted ones after them already fill the budget); the current turn is never dropped. In steps,
 * the drop goes on to the next cut point within two steps' worth (a finer one when none is).
 * Then a format that must lead with a user turn gets one (`leadWithUser`). Sets `cutAt`.
 */
export function dropToFit<M>(d: Draft<M>): void {
  d.cutAt = d.coveredEnd;
  const max = d.max;
  if (!((max !== undefined && d.total > max) || d.countedFrom > d.coveredEnd)) return;
  const walk = dropper(d);
  const { protectedStart } = d;
  while (walk.at < protectedStart && walk.at < d.countedFrom) walk.dropGroup();
  if (max !== undefined && d.total > max) {
    while (walk.at < protectedStart && d.total > max) walk.dropGroup();
    if (d.step >= 1) {
      const floor = d.total - 2 * d.step;
      const { pinned } = d.grouping;
      // A tail that yielded resumes where it yields (a cut point itself, when it went on to one).
      const accept = (c: { at: number; total: number }) => (c.at < protectedStart || (c.at === protectedStart && protectedStart > d.tStart)) && c.total >= floor;
      const cut = stepCut(d.grouping, d.tokens, walk.at, protectedStart, d.step, d.total, floor, (k) => pinned[k] === 1 || isHeld(d, k), accept);
      if (cut) while (walk.at < cut.at) walk.dropGroup();
    }
  }
  if (d.lens.leadsWithUser && !d.summaryMessage && walk.at > d.coveredEnd) leadWithUser(d, walk);
  d.cutAt = walk.at;
}

/**
 * A format whose views must not go on with a model turn right after a cut (where no user turn or
 * tool results the view keeps come before it) gets a short note of what was left out before it
 * (a user message), paid for like anything else in the view; or, where that costs less, the
 * turns dropped since the nearest user turn are taken back, and no note is needed.
 */
function leadWithUser<M>(d: Draft<M>, walk: Dropper): void {
  const { n, reason, messages, lens, max } = d;
  const { pinned } = d.grouping;
  for (;;) {
    let k = walk.at;
    while (k < n && (reason[k] !== DROP.kept || pinned[k])) k++;
    if (k >= n || lens.read(messages[k]).kind === 'user') return;
    let p = k - 1;
    while (p >= 0 && reason[p] !== DROP.kept) p--;
    const before = p >= 0 ? lens.read(messages[p]).kind : undefined;
    if (before === 'user' || before === 'result') return;
    const note = lens.summaryMessage(omittedNoteText(countDropped(reason, d.hEnd)), 'user');
    const cost = d.count(note);
    const back = walk.userTurnBefore(walk.at, Math.max(d.coveredEnd, d.countedFrom));
    if (back !== undefined && back.tokens <= cost && (max === undefined || d.total + back.tokens <= max || walk.at >= d.protectedStart)) {
      for (let j = back.at; j < walk.at; j++) if (reason[j] === DROP.budget) reason[j] = DROP.kept;
      d.total += back.tokens;
      walk.at = back.at;
      return;
    }
    if (max === undefined || d.total + cost <= max || walk.at >= d.protectedStart) {
      d.leadNote = note;
      d.leadNoteAt = k;
      d.total += cost;
      return;
    }
    walk.dropGroup();
  }
}

/** How many messages from `from` on were dropped or summarized. */
function countDropped(reason: Uint8Array, from: number): number {
  let k = 0;
  for (let i = from; i < reason.length; i++) if (reason[i] !== DROP.kept) k++;
  return k;
}
