import type { MessageLens } from '../formats/lens.js';
import { headEnd, tailStart } from './boundary.js';
import type { Grouping } from './groups.js';
import { DROP, droppedRanges, type DroppedRange } from './report.js';
import { collapsedPlaceholder, summaryMessageText } from './summary-frame.js';

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
  readonly maxContextTokens?: number;
  readonly compressionThresholdTokens?: number;
  /** Collapse tool results of at least this many characters when over budget; off when absent. */
  readonly collapseMinChars?: number;
  /** Role of the summary message. */
  readonly summaryRole: 'system' | 'user';
  /** Tokens added once per request (reply priming). */
  readonly requestOverheadTokens: number;
}

/** A summary resolved against the history: its text and where the messages it covers end. */
export interface ResolvedSummary {
  readonly text: string;
  /** Messages in [head end, coveredEnd) are replaced by the summary; must be a group start. */
  readonly coveredEnd: number;
}

/** What the planner did and why; plain data, safe to serialize. */
export interface PlanDecisions {
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  readonly messagesBefore: number;
  readonly messagesAfter: number;
  readonly groups: number;
  readonly headEnd: number;
  readonly tailStart: number;
  /** Start of what is never dropped at the end: the kept tail (`keepLast`), which holds the last user text. */
  readonly protectedStart: number;
  readonly summaryApplied: boolean;
  /** End of the messages the summary replaces (= headEnd when none is applied). */
  readonly coveredEnd: number;
  readonly dropped: readonly DroppedRange[];
  readonly collapsed: readonly CollapsedResult[];
  /** True when even the smallest valid view is over `maxContextTokens`. */
  readonly overBudget: boolean;
  /**
   * Groups not yet summarized, between head/summary and tail, when the view with the current
   * summary (before any trimming) is at or above the threshold.
   */
  readonly summarize?: { readonly start: number; readonly end: number };
  readonly notes: readonly string[];
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
}

/**
 * Plans the view of a history: head + optional summary + the rest, then, while over
 * `maxContextTokens`, collapses bulky old tool results and drops the oldest groups whole. The
 * kept tail (`keepLast`, always with the group holding the last user text), the head and system
 * messages are never dropped, and no group is ever split, so the view is valid whenever the input is. Linear in
 * the number of messages.
 */
export function planView<M>(input: PlanInput<M>): Plan<M> {
  const { messages, lens, grouping, counts, count, options, summary } = input;
  const n = messages.length;
  const { groups } = grouping;
  const notes: string[] = [];
  const tokens = counts;
  let before = options.requestOverheadTokens;
  for (let i = 0; i < n; i++) before += tokens[i];
  const hEnd = headEnd(grouping, options.keepFirst);
  const tStart = tailStart(grouping, options.keepLast, hEnd);
  // The kept tail (the last `keepLast` messages in whole groups, and always the group holding the
  // last user text) is sent whatever the budget: `keepLast` means what it says.
  const protectedStart = tStart;

  const reason = new Uint8Array(n); // DROP code per message; 0 = kept
  let total = before;

  let summaryMessage: M | undefined;
  let coveredEnd = hEnd;
  const clipped = summary ? Math.min(Math.max(summary.coveredEnd, hEnd), protectedStart) : hEnd;
  if (summary && clipped < summary.coveredEnd) notes.push('summary covers part of the protected last turn; those messages are sent too');
  if (summary && summary.text.trim() !== '' && clipped > hEnd) {
    coveredEnd = clipped;
    summaryMessage = lens.summaryMessage(summaryMessageText(summary.text, coveredEnd - hEnd), options.summaryRole);
    total += count(summaryMessage);
    for (let g = grouping.groupOf[hEnd] ?? groups.length; g < groups.length && groups[g].start < coveredEnd; g++) {
      const grp = groups[g];
      if (grp.system) continue; // instructions stay in force even when the turns around them are summarized
      for (let i = grp.start; i < grp.end; i++) {
        reason[i] = DROP.summarized;
        total -= tokens[i];
      }
    }
  }

  // What the view costs with the current summary and nothing trimmed: the threshold is checked
  // against this, so a chat is summarized again only once the unsummarized part has grown back.
  const untrimmed = total;
  const max = options.maxContextTokens;
  const replaced = new Map<number, M>();
  const collapsed: CollapsedResult[] = [];
  if (max !== undefined && total > max && options.collapseMinChars !== undefined) {
    // Clear bulky results older than the tail first: the pair stays, so the view stays valid.
    for (let i = coveredEnd; i < tStart && total > max; i++) {
      if (reason[i] !== DROP.kept || lens.kind(messages[i]) !== 'result') continue;
      const results = lens.results(messages[i]);
      let chars = 0;
      for (const r of results) chars += r.content.length;
      if (chars < options.collapseMinChars) continue;
      const cleared = lens.collapseResults(messages[i], collapsedPlaceholder(chars));
      const after = count(cleared);
      if (after >= tokens[i]) continue;
      replaced.set(i, cleared);
      collapsed.push({ index: i, tokensBefore: tokens[i], tokensAfter: after });
      total += after - tokens[i];
    }
  }
  if (max !== undefined && total > max) {
    // Drop the oldest whole groups until the view fits; the current turn is never dropped. This
    // walks the typed arrays only (group of each message, pinned system groups): a long history
    // drops tens of thousands of groups here. A collapsed result counts at its new size.
    const collapsedTokens = new Map(collapsed.map((c) => [c.index, c.tokensAfter]));
    const { groupOf, pinned } = grouping;
    let i = coveredEnd;
    while (i < protectedStart && total > max) {
      const g = groupOf[i];
      let j = i;
      if (pinned[i]) {
        while (j < n && groupOf[j] === g) j++;
      } else {
        for (; j < n && groupOf[j] === g; j++) {
          reason[j] = DROP.budget;
          total -= collapsedTokens.size > 0 ? (collapsedTokens.get(j) ?? tokens[j]) : tokens[j];
        }
      }
      i = j;
    }
  }
  const overBudget = max !== undefined && total > max;
  if (overBudget) notes.push(`the smallest valid view is ${total} tokens, over the limit of ${max}: head, system messages and the last user turn are never dropped or split`);

  const out: M[] = [];
  let summaryPlaced = false;
  for (let i = 0; i < n; i++) {
    if (reason[i] !== DROP.kept) {
      if (summaryMessage && !summaryPlaced && reason[i] === DROP.summarized) {
        out.push(summaryMessage);
        summaryPlaced = true;
      }
      continue;
    }
    if (summaryMessage && !summaryPlaced && i >= hEnd) {
      out.push(summaryMessage);
      summaryPlaced = true;
    }
    out.push(replaced.size > 0 ? (replaced.get(i) ?? messages[i]) : messages[i]);
  }
  if (summaryMessage && !summaryPlaced) out.push(summaryMessage);
  const collapsedFinal = collapsed.filter((c) => reason[c.index] === DROP.kept);

  let summarize: PlanDecisions['summarize'];
  const threshold = options.compressionThresholdTokens;
  if (threshold !== undefined && untrimmed >= threshold && coveredEnd < tStart) {
    summarize = { start: coveredEnd, end: tStart };
  }
  return {
    messages: out,
    decisions: {
      tokensBefore: before,
      tokensAfter: total,
      messagesBefore: n,
      messagesAfter: out.length,
      groups: groups.length,
      headEnd: hEnd,
      tailStart: tStart,
      protectedStart,
      summaryApplied: summaryMessage !== undefined,
      coveredEnd,
      dropped: droppedRanges(reason),
      collapsed: collapsedFinal,
      overBudget,
      summarize,
      notes,
    },
  };
}
