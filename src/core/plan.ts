import type { MessageLens } from './lens.js';
import type { Grouping } from './groups.js';
import type { DroppedRange } from './report.js';
import type { SummaryShortener } from './summary-fit.js';
import { frame } from './plan-draft.js';
import { protectTail } from './plan-tail.js';
import { clearer, collapseOlder, collapseTail, reserveTailClearing } from './plan-clear.js';
import { placeSummary } from './plan-summary.js';
import { dropToFit } from './plan-drop.js';
import { assemble, decisionsOf } from './plan-view.js';

export { foldShare, foldTrigger } from './fold-steps.js';

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

/**
 * `planView`, the kept tail yielding to the limit or not: the stages in order, each in its own
 * file, each passing the plan in the making (`Draft`) on.
 */
function planWith<M>(input: PlanInput<M>, yields: boolean): Plan<M> {
  const d = frame(input, yields); // head, counted part, kept tail, budget (plan-draft.ts)
  protectTail(d); // the kept tail yields to the limit, when it alone is over it (plan-tail.ts)
  const cleared = clearer(d);
  reserveTailClearing(d, cleared); // what the view must clear in the tail anyway is the summary's room (plan-clear.ts)
  placeSummary(d); // the stored summary, shortened to its room or left out (plan-summary.ts)
  d.untrimmed = d.total - d.summaryExtra; // a long summary counts at its compact size
  collapseOlder(d, cleared); // over budget: bulky results older than the tail cleared first
  dropToFit(d); // then the oldest whole groups dropped, in steps (plan-drop.ts)
  collapseTail(d, cleared); // last resort: the tail's bulky results but the newest
  const messages = assemble(d); // the view, with notes at seams (plan-view.ts)
  return { messages, decisions: decisionsOf(d, messages) };
}
