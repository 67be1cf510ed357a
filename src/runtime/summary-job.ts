import { summaryTextCounter } from '../tokens/counter.js';
import { SummarizerError } from '../errors.js';
import { foldShare, foldTrigger } from '../core/plan.js';
import { scanStructure } from '../core/structure.js';
import { withCallNames } from '../core/transcript.js';
import type { TranscriptEntry } from '../formats/lens.js';
import type { CoveredMessage } from '../recall/records.js';
import type { ChatState, StateStore } from '../store/state.js';
import { summarizeRolling } from '../summarize/rolling.js';
import type { Summarizer } from '../summarize/summarizer.js';
import { analyzeContext } from './compress.js';
import { countInSlices } from './count-in-slices.js';
import type { ResolvedCompressOptions } from './options.js';
import { inSlices } from './slices.js';
import { widenFold } from './wide-fold.js';
import { lastUserGroupStart } from '../core/boundary.js';
import { longSummary } from './long-summary.js';

/** Tokens the summarizer's rendering adds per line (role label, call/result arrows, ids). */
const RENDER_OVERHEAD_TOKENS = 16;

/** Covered messages are read again, rather than the summary in force, up to this many times the trigger's tokens. */
const REREAD_TRIGGERS = 4;

/**
 * True when a fold reads the messages the summary in force covers again instead of that summary:
 * a summary made to a smaller room left facts out for good, and the history still holds them. Only
 * for a summarizer that states its facts (`reportsFacts`: local work, no model call to pay for) and
 * while the covered messages are at most `REREAD_TRIGGERS` times the trigger's tokens, so a long
 * chat's job reads what it folds, not the whole chat each time.
 */
function rereadsCovered(summarizer: Summarizer, applied: boolean, headEnd: number, start: number, counts: ArrayLike<number>, trigger: number): boolean {
  if (!applied || summarizer.reportsFacts !== true || start <= headEnd || !Number.isFinite(trigger)) return false;
  let covered = 0;
  for (let i = headEnd; i < start; i++) {
    covered += counts[i];
    if (!(covered <= REREAD_TRIGGERS * trigger)) return false;
  }
  return true;
}

/**
 * Room a background summary may take at most. A view right after a fold is held to the low-water
 * mark (`lowWaterMark` of the trigger, the smaller of threshold and budget): the fold's end leaves
 * room under it for the next summary (`summaryReserve`), and the summary may take what the rest of
 * the view leaves under the mark, never less than half of what a fold frees (`(1 - lowWaterMark)
 * / 2` of the trigger). The next turns then append below the trigger, so one fold does not call
 * the next. A rolling summary keeps the room the summary it replaces took (`inForce`, tokens of
 * its text) as long as the view after the fold still leaves that share under the trigger: where a
 * large result in the kept tail holds the rest of the view above the mark, the summary is not cut
 * back (and with it the ledger's facts) for a mark the fold cannot reach anyway. Never more than
 * `roomTokens`, the room the budget leaves (`maxContextTokens` minus the rest of the view). Where
 * that rest alone stands at the mark or above (a system prompt most of the budget), no fold reaches
 * the mark: the summary takes what the budget leaves less a fold share, so the next turns still
 * append before the view reaches the budget. A rolling summary keeps at least the room it had (up
 * to the mark's rule), even where this view leaves none.
 */
export function backgroundSummaryRoom(roomTokens: number | undefined, trigger: number | undefined, lowWaterMark: number, maxContextTokens?: number, inForce = 0): number | undefined {
  if (trigger === undefined) return roomTokens;
  const share = foldShare(trigger, lowWaterMark);
  if (roomTokens === undefined) return share;
  const mark = Math.floor(lowWaterMark * trigger);
  const rest = maxContextTokens === undefined ? undefined : maxContextTokens - roomTokens;
  if (rest === undefined) return Math.min(roomTokens, share);
  const left = Math.max(share, mark - rest, Math.min(inForce, trigger - share - rest));
  // Where the rest of the view alone stands at the mark or above, no fold brings the view down to
  // it, and a share of a mark it cannot reach starves the summary: it takes what the budget
  // leaves, less a share for the next turns to append before the view reaches the budget.
  const room = rest >= mark ? Math.min(roomTokens, Math.max(left, roomTokens - share)) : Math.min(roomTokens, left);
  // A rolling summary is never cut below the room it had (up to `left`) because this one view has
  // none: the next summaries build on it, so its ledger would be lost for good. A view too small
  // for it shortens it when it is sent.
  return Math.max(room, Math.min(inForce, left));
}

/** Emitted when a job starts folding messages into a chat's summary. */
export interface SummaryStartEvent {
  readonly chatId: string;
  /** Index range [from, to) of the history being folded in. */
  readonly from: number;
  readonly to: number;
  /** Version of the summary the job builds on (0 = none). */
  readonly baseVersion: number;
  /** True when a stored summary no longer matched the history and is being rebuilt from the head. */
  readonly recomputed: boolean;
}

/** Emitted when a new summary was committed. */
export interface SummaryDoneEvent {
  readonly chatId: string;
  readonly version: number;
  /** Every message id the summary now covers, in order, and those this job added. */
  readonly coveredIds: readonly string[];
  readonly newlyCovered: readonly string[];
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  /** Summarizer calls this job made (more than one when the batch exceeded its input budget). */
  readonly calls: number;
  readonly recomputed: boolean;
  /** The room the summary was given (`backgroundSummaryRoom`), when the budget or threshold set one. */
  readonly allowedTokens?: number;
  /** Set when the summary was written longer for the views right after the fold: the size views shorten it to later (`ChatState.compactTokens`). */
  readonly compactTokens?: number;
  /**
   * Facts the summary's ledger reports: distinct identifiers, codes, dates and amounts seen over
   * every fold, and those the summary holds (absent for a summarizer that writes no ledger).
   */
  readonly factsSeen?: number;
  readonly factsKept?: number;
}

/** Emitted when a job's summary lost the compare-and-set to a newer one and was discarded. */
export interface SummaryStaleEvent {
  readonly chatId: string;
  readonly expectedVersion: number;
}

export type { CoveredMessage } from '../recall/records.js';

/** What a summary job needs. */
export interface SummaryJobContext {
  readonly store: StateStore;
  readonly summarizer: Summarizer;
  /** The compressor's planning options (with its counter and history cache). */
  readonly planning: ResolvedCompressOptions;
  readonly onStart?: (e: SummaryStartEvent) => void;
  readonly onDone?: (e: SummaryDoneEvent) => void;
  readonly onStale?: (e: SummaryStaleEvent) => void;
  /**
   * Called right after the last abort check, in the same synchronous step as the commit call: from
   * here the job writes its result (the scheduler's `JobControl.committing`).
   */
  readonly onCommitting?: () => void;
  /**
   * Called (and awaited) right before the commit, with the messages the summary would newly cover,
   * in order: kept first, a process that dies between the two never leaves a committed summary
   * whose originals were never kept (a lost compare-and-set leaves originals of messages no
   * summary covers yet; their ids, and so their records, stay the same).
   */
  readonly onCovered?: (chatId: string, covered: readonly CoveredMessage[]) => void | Promise<void>;
  /** Clock for timestamps (ISO strings). */
  readonly now?: () => string;
}

/**
 * Folds the messages not yet covered into the chat's rolling summary and commits it with
 * compare-and-set on the version. Only groups between the head (or the current summary's end)
 * and the kept tail are summarized; a stored summary that no longer matches the history is
 * rebuilt from the head. On any failure, abort, empty result or lost race nothing is written,
 * so the previous summary stays in force.
 */
export async function runSummaryJob<M>(ctx: SummaryJobContext, chatId: string, messages: readonly M[], signal: AbortSignal): Promise<void> {
  const state = await ctx.store.get(chatId);
  // Counts and fingerprints of a long history are made in slices, so the synchronous plan below
  // is all cache hits and the job never holds the event loop for long.
  const cache = ctx.planning.historyCache!;
  const recalled = await countInSlices(cache, chatId, messages, ctx.planning.counter!, ctx.planning.format);
  await inSlices(messages.length, (i) => cache.fingerprints.of(messages[i]));
  signal.throwIfAborted();
  const analysis = analyzeContext(messages, {
    ...ctx.planning,
    chatId,
    recalled,
    readsSummarizedIds: true,
    summary: state ? { text: state.summary, coveredIds: state.coveredIds, ...(state.compactTokens !== undefined ? { compactTokens: state.compactTokens } : {}) } : undefined,
  });
  const { report, input, lens, counter, counts, idOf, grouping } = analysis;
  const range = report.summarize;
  if (!range || range.end <= range.start) return;
  const { start } = range;
  // Wider ends the fold may take in when its summary has to leave facts out (`widenFold`): the
  // kept tail, then (unless it must stay) up to the last user turn. Only for a summarizer whose
  // own summaries state their facts (`reportsFacts`, the extractive one): each wider attempt is a
  // summarizer call, and a model's calls are paid for on every fold of every chat.
  const lastTurn = report.heldUserTurn?.start ?? lastUserGroupStart(grouping);
  const widths = ctx.summarizer.reportsFacts === true
    ? [report.tailStart, ...(ctx.planning.plan.keepLastYields === false ? [] : [lastTurn])].filter((e, k, all) => e > range.end && all.indexOf(e) === k)
    : [];
  const widest = Math.max(range.end, ...widths);
  // A plan counts only what a view can hold; the summary counts what it summarizes, in slices.
  await inSlices(widest - report.headEnd, (k) => {
    const i = report.headEnd + k;
    if (counts[i] !== counts[i]) counts[i] = counter.message(input[i], lens);
  });
  const applied = report.summary.applied;
  const recomputed = state !== undefined && !applied;
  const baseVersion = state?.version ?? 0;
  ctx.onStart?.({ chatId, from: start, to: range.end, baseVersion, recomputed });
  const plan = ctx.planning.plan;
  const trigger = foldTrigger(plan);
  // Where the summary in force is read back from (`start`), or the covered originals again.
  const from = rereadsCovered(ctx.summarizer, applied, report.headEnd, start, counts, trigger) ? report.headEnd : start;

  // Read group by group in slices: a call turn's results are named after their calls by a scan
  // of that turn alone, so no step holds the event loop for the whole range.
  const entries: TranscriptEntry[] = new Array(widest - from);
  const first = grouping.groupOf[from];
  await inSlices(grouping.groupOf[widest - 1] - first + 1, (k) => {
    const g = grouping.groups[first + k];
    for (let i = g.start; i < g.end; i++) entries[i - from] = lens.read(input[i]);
    if (g.type === 'turn') withCallNames(entries, scanStructure(input, lens, g.start, g.end), from);
  });
  // A summary written long counts at its compact size: that is what the view holds between folds.
  const inForce = applied && state ? Math.min(summaryTextCounter(counter)(state.summary), state.compactTokens ?? Infinity) : 0;
  const allowedTokens = backgroundSummaryRoom(range.roomTokens, Number.isFinite(trigger) ? trigger : undefined, plan.lowWaterMark ?? 1, plan.maxContextTokens, inForce);
  const summarizeTo = (to: number, maxTokens: number | undefined) => summarizeRolling(ctx.summarizer, {
    ...(maxTokens === undefined ? {} : { maxTokens }),
    previousSummary: applied && from === start ? state?.summary : undefined,
    messages: to === entries.length + from ? entries : entries.slice(0, to - from),
    signal,
    countTokens: summaryTextCounter(counter),
    // The billed count bounds the rendering the summarizer sees, plus its labels and ids:
    // a long history is not encoded a second time.
    entryTokens: (entry, k) => counts[from + k] + RENDER_OVERHEAD_TOKENS * (1 + entry.calls.length + entry.results.length),
  });
  // One fold to the low-water mark, then widened as the one-shot is (`widenFold`) when its summary
  // had to leave facts out, but against the room under the mark rather than the budget: widening
  // to the budget kept more facts but, measured on long chats, made four times the summarizer
  // calls and cut the cached share of the prompt from 94% to 37%.
  const first0 = await summarizeTo(range.end, allowedTokens);
  signal.throwIfAborted();
  let calls = first0.calls;
  // A wider attempt that fails leaves the summary made before it in force.
  const attempt = async (to: number, roomTokens: number) => {
    try {
      const r = await summarizeTo(to, roomTokens);
      calls += r.calls;
      return r;
    } catch (error) {
      if (signal.aborted) throw error;
      return undefined;
    }
  };
  // Widened against the room under the low-water mark, not the budget: the view after the fold
  // stays where the fold step puts it, the summary taking the room the turns it folds in took.
  const wide = await widenFold({ reportsFacts: widths.length > 0, first: first0, firstRoom: allowedTokens, range: { ...range, ...(allowedTokens === undefined ? {} : { roomTokens: allowedTokens }) }, widths, grouping, counts, countText: summaryTextCounter(counter), attempt });
  const end = wide.end;
  const givenTokens = wide.roomTokens;
  const long = await longSummary(ctx, { range, end, givenTokens, folded: wide.folded, trigger, grouping, counts, countText: summaryTextCounter(counter), attempt });
  const folded = long?.folded ?? wide.folded;
  const { summary, factsSeen, factsKept } = folded;
  signal.throwIfAborted();
  if (summary.trim() === '') throw new SummarizerError(ctx.summarizer.name, 'empty', `summarizer ${ctx.summarizer.name} returned an empty summary`);

  const head = report.headEnd;
  const coveredIds: string[] = new Array(end - head);
  await inSlices(end - head, (k) => { coveredIds[k] = idOf(head + k); });
  let tokensBefore = 0;
  for (let i = head; i < end; i++) tokensBefore += counts[i];
  const now = (ctx.now ?? (() => new Date().toISOString()))();
  const next: ChatState = {
    chatId,
    version: baseVersion + 1,
    summary,
    coveredIds,
    summarizer: ctx.summarizer.name,
    model: ctx.summarizer.model,
    tokensBefore,
    tokensAfter: summaryTextCounter(counter)(summary),
    ...(long ? { compactTokens: long.compactTokens } : {}),
    createdAt: state?.createdAt ?? now,
    updatedAt: now,
  };
  await ctx.onCovered?.(chatId, entries.slice(start - from, end - from).map((entry, k) => ({ id: coveredIds[start - head + k], index: start + k, entry, message: input[start + k] })));
  // A job released at its time limit must not commit what it finishes later.
  signal.throwIfAborted();
  ctx.onCommitting?.();
  if (!(await ctx.store.commit(next, baseVersion))) {
    ctx.onStale?.({ chatId, expectedVersion: baseVersion });
    return;
  }
  ctx.onDone?.({
    chatId, version: next.version, coveredIds, newlyCovered: coveredIds.slice(start - head), tokensBefore, tokensAfter: next.tokensAfter, calls, recomputed,
    ...(givenTokens === undefined ? {} : { allowedTokens: givenTokens }),
    ...(next.compactTokens === undefined ? {} : { compactTokens: next.compactTokens }),
    ...(factsSeen === undefined ? {} : { factsSeen, factsKept }),
  });
}
