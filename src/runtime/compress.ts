import { headEnd, tailStart } from '../core/boundary.js';
import { countBackward } from '../core/count-backward.js';
import { countHistory } from '../core/count-history.js';
import { boundReport, exactReport, memo, type CompressResult, type ReportInput } from '../core/compress-report.js';
import { buildGroups, type Grouping } from '../core/groups.js';
import { planView, type Plan, type ResolvedSummary } from '../core/plan.js';
import { repairShapes, type RepairAction } from '../core/repair.js';
import { remapCallIds } from '../core/remap-ids.js';
import { requestExtraTokens } from '../core/request-extras.js';
import { resolveSummary } from '../core/summary-match.js';
import { keepNewestLines } from '../core/summary-fit.js';
import type { Profile } from '../core/validate/validate.js';
import { sharedPrefixTokens, viewTrace } from '../core/view-trace.js';
import type { MessageLens } from '../formats/lens.js';
import type { OpenAIChatMessage } from '../formats/openai-chat/types.js';
import { repairOrRefuse } from '../formats/profiles.js';
import { chooseLens } from '../formats/registry.js';
import { createTokenCounter, type TokenCounter } from '../tokens/counter.js';
import { MESSAGE_OVERHEAD_TOKENS, messageTokens } from '../tokens/accounting.js';
import { codeUnitTokenBound, utf8TokenBound } from '../tokens/byte-bound.js';
import { encodingForModel } from '../tokens/tiktoken.js';
import { Fingerprints } from './fingerprints.js';
import type { Recall } from './history-cache.js';
import { resolveCompressOptions, type CompressOptions, type ResolvedCompressOptions } from './options.js';

export type { CompressReport, CompressResult, DroppedMessage } from '../core/compress-report.js';

/**
 * Counters used when a call names none: one per tiktoken encoding for the process (a handful at
 * most), each with a text cache bounded by bytes (least recently used texts go first). They hold
 * counts by text only, never messages or histories.
 */
const defaultCounters = new Map<string, TokenCounter>();

function counterFor(options: ResolvedCompressOptions): TokenCounter {
  if (options.counter) return options.counter;
  const encoding = encodingForModel(options.model);
  let c = defaultCounters.get(encoding);
  if (!c) defaultCounters.set(encoding, (c = createTokenCounter({ encoding })));
  return c;
}

/**
 * Compresses a history into a view that fits the budget and that the provider accepts: head +
 * optional summary + the rest, trimmed only at group boundaries. The same input gives the same
 * view. Kept messages are the caller's own objects, in order (a collapsed tool result is a copy
 * with its content replaced, and is reported). Nothing about the history is remembered between
 * calls unless `historyCache` and `chatId` are given; counts of texts are cached by content in
 * the counter (see `CompressOptions.counter`). Bad input or options throw an `InputError`.
 */
export function compressContext<M = OpenAIChatMessage>(messages: readonly M[], options: CompressOptions = {}): CompressResult<M> {
  const { messages: view, report } = analyzeContext(messages, resolveCompressOptions(options));
  return { messages: view, report };
}

/** `compressContext` plus what it worked on: the (repaired) input, its lens and its token counter. */
export interface ContextAnalysis<M> extends CompressResult<M> {
  /** The history the plan was made on: the input, or its repaired copy. Report indexes refer to it. */
  readonly input: readonly M[];
  readonly lens: MessageLens<M>;
  readonly counter: TokenCounter;
  /** Tokens of each message of `input`. */
  readonly counts: Float64Array;
  /** Id of the message of `input` at a position (computed on demand, remembered). */
  readonly idOf: (index: number) => string;
  /** The groups of `input`. */
  readonly grouping: Grouping;
}

const NOTHING_SHARED: Recall = { shared: 0 };

/** Detect: the lens of the history (named, or seen in it), and the chat's remembered history it continues. */
interface Detected<M> {
  readonly lens: MessageLens<M>;
  /** The chat's previous history this one continues, and how many messages they share. */
  readonly known: Recall['history'];
  readonly shared: number;
  /** Repair may delete results: only on a format that was named or seen, never on the default. */
  readonly mayRepair: boolean;
  /** A message's own shape is broken (the lens's shape rules say so). */
  readonly misshapen: boolean;
}

/** Group and repair: the history the plan is made on (`messages`, or its repaired copy) and its groups. */
interface Repaired<M> {
  readonly input: readonly M[];
  readonly repaired: RepairAction[];
  readonly grouping: Grouping;
}

/** What `analyzeContext` finds before it counts anything: the lens, the (repaired) input, its groups and ids, the summary that applies. */
interface Prepared<M> extends Detected<M>, Repaired<M> {
  readonly messages: readonly M[];
  readonly options: ResolvedCompressOptions;
  readonly counter: TokenCounter;
  readonly cache: ResolvedCompressOptions['historyCache'];
  readonly chatId: string;
  readonly ids: string[];
  readonly idOf: (i: number) => string;
  readonly hEnd: number;
  readonly summary: { readonly resolved?: ResolvedSummary; readonly note?: string };
}

/**
 * Plans a view like `compressContext`, on options already checked, and also returns what it used.
 * The stages, in order: detect (the lens) -> group -> repair -> ids and the summary's coverage ->
 * count (by bytes first, then tokens) -> plan -> report (and remember the view for the chat).
 */
export function analyzeContext<M = OpenAIChatMessage>(messages: readonly M[], options: ResolvedCompressOptions): ContextAnalysis<M> {
  // TODO(unfinished): the goals of bench/small.ts are not all met. Within its window by bytes, a
  // 20-50 message request still costs 2.7-3.8x JSON.parse of its body (cold), most of it in
  // prepare() (format detection and grouping read every message), not in counting; a request
  // over its window still tokenizes what the view holds (12-30x cold, 1.1-4.9x warm); a
  // process's first compressContext call compiles the planner (about 50x a later one).
  const p = prepare(messages, options);
  return planWithinBytes(p) ?? planCounted(p);
}

/** Everything before counting: detect, group, repair, ids, the summary's coverage. */
function prepare<M>(messages: readonly M[], options: ResolvedCompressOptions): Prepared<M> {
  const counter = counterFor(options);
  const cache = options.historyCache;
  const chatId = options.chatId!;
  const detected = detect(messages, options);
  const { input, repaired, grouping } = groupAndRepair(messages, detected, options);
  const fingerprints = cache?.fingerprints ?? new Fingerprints();
  // Ids (a fingerprint each) of the shared prefix carry over from the history this one continues.
  const ids = input === messages ? carriedIds(detected.known, detected.shared) : [];
  const idOf = (i: number): string => (ids[i] ??= fingerprints.idAt(input, detected.lens, i));
  const hEnd = headEnd(grouping, options.plan.keepFirst);
  const summary = options.summary ? resolveSummary(input.length, idOf, grouping, hEnd, options.summary) : {};
  return { ...detected, messages, options, counter, cache, chatId, input, repaired, grouping, ids, idOf, hEnd, summary };
}

/** Detect: the history's lens; a history that continues its chat's previous one keeps that one's format. */
function detect<M>(messages: readonly M[], options: ResolvedCompressOptions): Detected<M> {
  const cache = options.historyCache;
  // A history that continues its chat's previous one reuses what was found for the shared
  // prefix: its counts, its groups, its ids, and the check of its messages' shape.
  const recall = options.recalled ?? (cache && Array.isArray(messages) ? cache.recall(options.chatId!, messages) : NOTHING_SHARED);
  const format = options.format;
  const known = recall.history && (format === 'auto' || format === recall.history.format) ? recall.history : undefined;
  const shared = known ? recall.shared : 0;
  const chosen = known ? chooseLens(messages, known.format, 'messages', shared) : chooseLens(messages, format);
  // Repair deletes results: it runs only on a format that was named or seen, never on the default.
  const mayRepair = options.repair && (chosen.origin !== 'default' || known !== undefined);
  return { lens: chosen.lens as MessageLens<M>, known, shared, mayRepair, misshapen: chosen.misshapen === true };
}

/** Group, then repair what grouping or the lens found broken (and ids a provider's rules want), grouping the repaired copy again. */
function groupAndRepair<M>(messages: readonly M[], d: Detected<M>, options: ResolvedCompressOptions): Repaired<M> {
  const { lens, known, shared, mayRepair } = d;
  let input = messages;
  let repaired: RepairAction[] = [];
  let grouping = buildGroups(input, lens, known ? { grouping: known.grouping, shared } : undefined);
  // Grouping already knows whether anything is broken, and the lens check whether a message's own
  // shape is; only then is the repair pass run. A shape is fixed (or refused) whatever the origin:
  // that deletes nothing.
  if ((!grouping.regular && mayRepair) || (d.misshapen && options.repair)) {
    const r = mayRepair ? repairOrRefuse(messages, lens) : repairShapes(messages, lens);
    if (r.actions.length > 0) {
      input = r.messages;
      repaired = r.actions;
      grouping = buildGroups(input, lens);
    }
  }
  // A provider with rules for ids (unique across the request, a pattern) gets ids that fit them.
  const idPolicy = options.provider?.ids;
  if (idPolicy && mayRepair) {
    const r = remapCallIds(input, lens, idPolicy);
    if (r.actions.length > 0) {
      input = r.messages;
      repaired = [...repaired, ...r.actions];
      grouping = buildGroups(input, lens);
    }
  }
  return { input, repaired, grouping };
}

/**
 * The ids known for the first `shared` messages of a history that continues `known`, as a copy:
 * each plan fills its own array lazily, and a plan still running (a background job between its
 * awaits) must never write ids of its history into the array of a newer one.
 */
function carriedIds(known: Recall['history'], shared: number): string[] {
  if (!known?.ids || shared === 0) return [];
  return known.ids.slice(0, shared);
}

/** With a budget and no clearing of old results (which reads every result), only what a view can hold is counted. */
function countsLazily(options: ResolvedCompressOptions): boolean {
  return options.plan.maxContextTokens !== undefined && options.plan.collapseMinChars === undefined;
}

/**
 * Tokens of every message the plan reads, lazily (a window and no clearing of old results): the
 * counts shared with the remembered history, NaN for the rest (`countBackward` counts what a view
 * can hold); otherwise every message, counted now.
 */
function initialCounts<M>(p: Prepared<M>): Float64Array {
  const { input, messages, known, shared, lens, counter } = p;
  const carried = input === messages && known ? { counts: known.counts, length: known.messages.length, shared } : undefined;
  return countHistory(input, (m) => counter.message(m, lens), carried, countsLazily(p.options));
}

/** Count: every message's tokens the plan reads; lazily, newest first until the budget and the threshold are decided (`countedFrom`). */
function countStage<M>(p: Prepared<M>, counts: Float64Array, extraTokens: number): number | undefined {
  const { options, input, lens, counter, grouping, hEnd, summary } = p;
  if (!countsLazily(options)) return undefined;
  const plan0 = options.plan;
  return countBackward(input, (m) => counter.message(m, lens), counts, grouping, {
    headEnd: hEnd,
    tailStart: tailStart(grouping, plan0.keepLast, hEnd),
    floor: summary.resolved ? Math.max(hEnd, summary.resolved.coveredEnd) : hEnd,
    limit: Math.max(plan0.maxContextTokens!, plan0.compressionThresholdTokens ?? 0),
    overheadTokens: counter.requestOverhead + extraTokens,
  });
}

/** What every report is made from, for a plan of `p`. */
function reportInput<M>(p: Prepared<M>, plan: Plan<M>, extraTokens: number, countedFrom?: number, prefixTokensShared?: number): ReportInput<M> {
  const { options, grouping } = p;
  return {
    format: p.lens.format, plan, grouping, idOf: p.idOf, extraTokens, countedFrom, prefixTokensShared,
    window: { maxContextTokens: options.plan.maxContextTokens, reserveOutputTokens: options.reserveOutputTokens, compressionThresholdTokens: options.plan.compressionThresholdTokens },
    summary: p.summary,
    repaired: p.repaired,
    leftUnrepaired: !grouping.regular && !p.mayRepair && options.repair,
    provider: options.provider as Profile<M> | undefined,
  };
}

/**
 * Remembers the view in the chat's history cache (with `fill`, the byte-bound path already did)
 * and returns the tokens of its prefix shared with the chat's previous view; undefined without a
 * cache or on a repaired copy.
 */
function rememberView<M>(p: Prepared<M>, plan: Plan<M>, counts: Float64Array, countedFrom: number | undefined, fill: boolean): number | undefined {
  const { cache, chatId, known, shared, messages, input, lens, counter, options, grouping, ids, hEnd } = p;
  if (!cache || input !== messages) return undefined;
  const d = plan.decisions;
  const trace = viewTrace(plan.messages, input, d, counts, (m) => counter.message(m, lens));
  const prefixTokensShared = known?.view ? sharedPrefixTokens(known.view, trace, shared) : 0;
  // A snapshot: callers append to their arrays in place, and the counts are for this content.
  const snapshot = known && counts === known.counts ? known.messages : messages.slice();
  // Text the plan did not read: after the head and what a summary's ids were checked on, before
  // the first message counted. The next request compares it loosely (see `TextUnread`).
  const summarizedEnd = options.readsSummarizedIds && d.summarize ? d.summarize.end : 0;
  const unreadFrom = Math.min(input.length, Math.max(hEnd + (options.summary?.coveredIds.length ?? 0), summarizedEnd));
  const textUnread = countedFrom !== undefined && lens.stringContentIsText && countedFrom > unreadFrom ? { from: unreadFrom, to: countedFrom } : undefined;
  if (!fill) cache.remember(chatId, { messages: snapshot, counts, grouping, format: lens.format, ids, view: trace, textUnread });
  return prefixTokensShared;
}

/**
 * The plan on exact counts: count -> plan -> remember -> report. With `fill` (the counts array the
 * byte-bound path left in the chat's cache entry), that array is counted into and the cache is
 * not written again: the view was already remembered when it was served.
 */
function planCounted<M>(p: Prepared<M>, fill?: Float64Array): ContextAnalysis<M> {
  const { options, counter, lens, input, grouping, idOf } = p;
  const counts = fill ?? initialCounts(p);
  const extraTokens = requestExtraTokens(options, counter.text, MESSAGE_OVERHEAD_TOKENS);
  const countedFrom = countStage(p, counts, extraTokens);
  const plan = planView({
    messages: input, lens, grouping, counts, count: (m) => counter.message(m, lens), options: { ...options.plan, requestOverheadTokens: counter.requestOverhead + extraTokens, alternateRoles: options.provider?.alternates }, summary: p.summary.resolved,
    shortenSummary: options.shortenSummary ?? ((text, maxTokens) => keepNewestLines(text, maxTokens, counter.text)),
    countedFrom,
    clearedText: options.clearedText ? (i, chars) => options.clearedText!(idOf(i), chars) : undefined,
  });
  const prefixTokensShared = rememberView(p, plan, counts, countedFrom, fill !== undefined);
  const report = exactReport(reportInput(p, plan, extraTokens, countedFrom, prefixTokensShared));
  return { input, lens, counter, counts, idOf, grouping, messages: plan.messages, report };
}

/**
 * The plan of a history certainly within its window and under its threshold, made without
 * tokenizing it; undefined when the byte bound cannot tell (the exact plan decides then).
 *
 * With a counter whose counts never exceed a text's UTF-8 bytes (`atMostUtf8Bytes`), every
 * message's count from byte lengths (`utf8TokenBound` in place of the tokenizer, images and the
 * per-message, per-call and per-request overheads by their own rules, tools and instructions
 * the same way) is at least its exact count. When the plan on those bounds keeps every message
 * as it is, with no summary to schedule, so does the plan on exact counts: each of its totals is
 * at most the bound's. That view is served; the chat's cache remembers the history uncounted.
 * The report's token figures (`tokensBefore`, `tokensAfter`, `requestExtraTokens`, `split`,
 * `minimumTokens`, `prefixTokensShared`, and the analysis' `counts`) are exact, counted when
 * first read, and every field equals what the exact plan reports.
 */
function planWithinBytes<M>(p: Prepared<M>): ContextAnalysis<M> | undefined {
  const { options, counter, lens, input, grouping } = p;
  const plan0 = options.plan;
  if (!counter.atMostUtf8Bytes || plan0.maxContextTokens === undefined || plan0.collapseMinChars !== undefined || p.summary.resolved) return undefined;
  const limit = Math.min(plan0.maxContextTokens, plan0.compressionThresholdTokens ?? Infinity);
  // The coarse bound reads no text (3 per code unit); the byte bound reads each text once.
  const bounds = boundCounts(input, lens, options, counter, codeUnitTokenBound, limit) ?? boundCounts(input, lens, options, counter, utf8TokenBound, limit);
  if (!bounds) return undefined;
  const boundText = bounds.countText;
  const plan = planView({
    messages: input, lens, grouping, counts: bounds.counts, count: (m) => messageTokens(m, lens, boundText), options: { ...plan0, requestOverheadTokens: counter.requestOverhead + bounds.extraTokens, alternateRoles: options.provider?.alternates },
    shortenSummary: (text, maxTokens) => keepNewestLines(text, maxTokens, boundText),
  });
  const d = plan.decisions;
  const asIs = !d.overBudget && d.summarize === undefined && d.dropped.length === 0 && d.collapsed.length === 0 && d.messagesAfter === input.length
    && d.protectedStart === d.tailStart && plan.messages.every((m, i) => m === input[i]);
  if (!asIs) return undefined;
  // The cache learns the history as the exact plan would leave it, its new messages uncounted.
  const counts = initialCounts(p);
  const { cache, chatId, messages, known, ids } = p;
  if (cache && input === messages) {
    const snapshot = known && counts === known.counts ? known.messages : messages.slice();
    const trace = viewTrace(plan.messages, input, d, counts, (m) => counter.message(m, lens));
    cache.remember(chatId, { messages: snapshot, counts, grouping, format: lens.format, ids, view: trace });
  }
  const exact = memo(() => planCounted(p, counts));
  const report = boundReport(reportInput(p, plan, bounds.extraTokens), () => exact().report);
  return {
    input,
    lens,
    counter,
    get counts() { return exact().counts; },
    idOf: p.idOf,
    grouping,
    messages: plan.messages,
    report,
  };
}

/**
 * Each message's tokens by `countText` (an upper bound of the counter's), with the request's
 * extras by the same rule; undefined as soon as the total passes `limit`.
 */
function boundCounts<M>(input: readonly M[], lens: MessageLens<M>, options: ResolvedCompressOptions, counter: TokenCounter, countText: (text: string) => number, limit: number): { counts: Float64Array; extraTokens: number; countText: (text: string) => number } | undefined {
  const extraTokens = requestExtraTokens(options, countText, MESSAGE_OVERHEAD_TOKENS);
  let total = counter.requestOverhead + extraTokens;
  if (total > limit) return undefined;
  const counts = new Float64Array(input.length);
  for (let i = 0; i < input.length; i++) {
    total += counts[i] = messageTokens(input[i], lens, countText);
    if (total > limit) return undefined;
  }
  return { counts, extraTokens, countText };
}
