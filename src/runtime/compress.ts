import { alignCut, headEnd, tailStart } from '../core/boundary.js';
import { countBackward } from './count-backward.js';
import { buildGroups, type Grouping } from '../core/groups.js';
import { planView, type PlanDecisions, type ResolvedSummary } from '../core/plan.js';
import { repairShapes, type RepairAction } from '../core/repair.js';
import { repairOrRefuse } from '../formats/profiles.js';
import { remapCallIds } from '../core/remap-ids.js';
import { checkProfile, type Profile } from '../core/validate/validate.js';
import type { Violation } from '../core/validate/rules.js';
import { droppedCounts, type DropReason } from '../core/report.js';
import { keepNewestLines } from '../core/summary-fit.js';
import { MAX_NESTING, nestedDeeperThan } from '../core/nesting.js';
import { InputError } from '../errors.js';
import type { FormatName, MessageLens } from '../formats/lens.js';
import type { OpenAIChatMessage } from '../formats/openai-chat/types.js';
import { chooseLens } from '../formats/registry.js';
import { createTokenCounter, type TokenCounter } from '../tokens/counter.js';
import { MESSAGE_OVERHEAD_TOKENS, messageTokens } from '../tokens/accounting.js';
import { codeUnitTokenBound, utf8TokenBound } from '../tokens/byte-bound.js';
import { encodingForModel } from '../tokens/tiktoken.js';
import { Fingerprints } from './fingerprints.js';
import type { Recall, ViewTrace } from './history-cache.js';
import { resolveCompressOptions, type CompressOptions, type ResolvedCompressOptions, type SummaryInput } from './options.js';

/** One message left out of the view. */
export interface DroppedMessage {
  readonly index: number;
  readonly id: string;
  readonly reason: DropReason;
}

/**
 * Everything `compressContext` decided, as plain JSON-ready data. Indexes refer to the input.
 * A history served as it is because its byte bound is within its window (no tokenizer used)
 * counts its token figures (`tokensBefore`, `tokensAfter`, `requestExtraTokens`, `split`,
 * `minimumTokens`, `prefixTokensShared`) when they are first read: the same numbers, exact.
 */
export interface CompressReport {
  readonly format: FormatName;
  /**
   * Tokens of the whole history. Exact when `tokensBeforeExact`; otherwise the messages no view
   * could hold were not tokenized, and this is their count so far plus a cheap estimate of the rest.
   */
  readonly tokensBefore: number;
  /** False when messages older than what the view can hold were estimated, not counted. */
  readonly tokensBeforeExact: boolean;
  /** Tokens of the view, counted exactly. */
  readonly tokensAfter: number;
  /** The window; the view (`tokensAfter`) stays within it less `reservedOutputTokens`. */
  readonly maxContextTokens?: number;
  /** Tokens kept free for the reply. */
  readonly reservedOutputTokens: number;
  /** Tokens of the request's tool definitions and response format, included in the token figures. */
  readonly requestExtraTokens: number;
  readonly compressionThresholdTokens?: number;
  readonly messagesBefore: number;
  readonly messagesAfter: number;
  /** Group count, tool-call turns among them, and the largest group's size (computed on first read). */
  readonly groups: { readonly count: number; readonly turns: number; readonly largest: number };
  readonly headEnd: number;
  readonly tailStart: number;
  /**
   * Every message from here on is in the view (tool results may be cleared). Past `tailStart` when
   * the kept tail yielded to the limit; then the last user turn may lie before it (`heldUserTurn`).
   */
  readonly protectedStart: number;
  /** Set only when the kept tail yielded past the last user turn: that turn (`start` to `end`, exclusive), kept before `protectedStart`. */
  readonly heldUserTurn?: { readonly start: number; readonly end: number };
  /**
   * The summary: whether it was applied, how many messages it stands for, the tokens its message
   * took and the most it was allowed (the room the budget leaves), and whether it was shortened.
   */
  readonly summary: {
    readonly applied: boolean;
    readonly coveredMessages: number;
    readonly tokens?: number;
    readonly allowedTokens?: number;
    readonly shortened: boolean;
    readonly note?: string;
  };
  /**
   * How the view's tokens split, adding up to `tokensAfter`: the head (`keepFirst`, system
   * messages), the summary, the turns sent word for word between them and the kept tail
   * (`middle`), the kept tail (`tail`, from `protectedStart` on), notes the plan put in, the
   * request's tool definitions and response format (`tools`), and its fixed overhead. The reply's
   * reserve (`reservedOutputTokens`) comes on top, within `maxContextTokens`.
   */
  readonly split: { readonly head: number; readonly summary: number; readonly middle: number; readonly tail: number; readonly notes: number; readonly tools: number; readonly overhead: number };
  /** Counts of messages left out, by reason (cheap; `dropped` lists them with ids). */
  readonly droppedCounts: { readonly summarized: number; readonly budget: number };
  /** Every message left out, with its id and why. Computed on first read (ids cost a hash each). */
  readonly dropped: readonly DroppedMessage[];
  readonly collapsed: readonly { readonly index: number; readonly id: string; readonly tokensBefore: number; readonly tokensAfter: number }[];
  readonly repaired: readonly RepairAction[];
  /** With `provider`: every rule of its profile the view breaks (empty when it accepts the view). */
  readonly violations?: readonly Violation[];
  readonly overBudget: boolean;
  /**
   * Tokens of the smallest view this request can be sent with: the head, system messages, the
   * kept tail, and the request's overhead and extras (no summary, no older message). What the
   * window leaves above it (`maxContextTokens - reservedOutputTokens - minimumTokens`) is the room
   * anything added to the tail has. Undefined when not every one of them was counted.
   */
  readonly minimumTokens?: number;
  /**
   * With a chat memory (`historyCache` + `chatId`): tokens of the leading messages of this view
   * that are identical to the chat's previous view (what a provider's prompt cache can reuse;
   * instructions and tools outside the list are not included). 0 for a chat's first view.
   */
  readonly prefixTokensShared?: number;
  /**
   * When over the threshold: the messages a summarizer should fold in next, by index and id, and
   * with a budget the room a summary of them has in the view that keeps the rest (`roomTokens`).
   */
  readonly summarize?: {
    readonly start: number; readonly end: number; readonly roomTokens?: number; readonly ids: readonly string[];
    /** True when the fold would be less than a step while the floor stands above the low-water mark: `createCompressor` waits for more (without recall). */
    readonly belowStep?: true;
  };
  readonly notes: readonly string[];
}

/** The view to send and the report of how it was made. */
export interface CompressResult<M> {
  readonly messages: M[];
  readonly report: CompressReport;
}

function memo<T>(make: () => T): () => T {
  let value: T | undefined;
  let made = false;
  return () => {
    if (!made) {
      value = make();
      made = true;
    }
    return value as T;
  };
}

/** Adds an enumerable, memoized getter (so JSON output includes it) that is computed only when read. */
function lazyObject<T extends object, K extends string, V>(base: T, key: K, make: () => V): T & Record<K, V> {
  const get = memo(make);
  return Object.defineProperty(base, key, { enumerable: true, get }) as T & Record<K, V>;
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

/** The `text` strings of a block structure (Anthropic system blocks, Gemini `{ parts: [{ text }] }`), in order. */
function textLeaves(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) textLeaves(v, out);
  else if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.text === 'string') out.push(o.text);
    else for (const v of Object.values(o)) if (typeof v === 'object') textLeaves(v, out);
  }
  return out;
}

/** Tokens added per tool definition beyond its JSON text (its framing in the prompt); an estimate that errs high. */
const TOOL_OVERHEAD_TOKENS = 8;

/**
 * Tokens the request's tool definitions and response format add to the prompt. Providers do not
 * publish the exact rendering; counting each definition's JSON text plus a few tokens errs high,
 * which is the safe side for a budget.
 */
function requestExtraTokens(options: ResolvedCompressOptions, countText: (text: string) => number): number {
  let n = 0;
  const json = (value: unknown, path: string) => {
    if (nestedDeeperThan(value)) throw new InputError(path, `is nested more than ${MAX_NESTING} levels deep; ctxfold does not read values this deep`);
    return JSON.stringify(value) ?? '';
  };
  options.tools?.forEach((tool, i) => { n += countText(json(tool, `options.tools[${i}]`)) + TOOL_OVERHEAD_TOKENS; });
  if (options.responseFormat !== undefined) n += countText(json(options.responseFormat, 'options.responseFormat'));
  // Instructions outside the list are billed as a system message of their text (a string, or the text leaves of blocks).
  const instructions = options.instructions;
  if (typeof instructions === 'string') n += countText(instructions) + MESSAGE_OVERHEAD_TOKENS + 1;
  else if (instructions !== undefined && instructions !== null) {
    json(instructions, 'options.instructions');
    n += countText(textLeaves(instructions).join('\n')) + MESSAGE_OVERHEAD_TOKENS + 1;
  }
  return n;
}

/**
 * Tokens of every message: those shared with the remembered history by position are taken from
 * it (one comparison each was already paid), the rest are counted. The very history seen before
 * reuses its counts array as it is.
 */
function countHistory<M>(messages: readonly M[], lens: MessageLens<M>, counter: TokenCounter, recall: Recall, lazy: boolean): Float64Array {
  const n = messages.length;
  const { history: known, shared } = recall;
  let counts: Float64Array;
  if (known && shared === n && known.messages.length === n) counts = known.counts;
  else {
    counts = new Float64Array(n);
    if (known && shared > 0) counts.set(known.counts.subarray(0, shared));
    counts.fill(NaN, shared);
  }
  // Lazily, new messages stay uncounted (NaN) and `countBackward` counts only what a view can
  // hold; otherwise every message not counted yet is counted now (the array is the cache's own).
  if (!lazy) for (let i = 0; i < n; i++) if (counts[i] !== counts[i]) counts[i] = counter.message(messages[i], lens);
  return counts;
}

/**
 * A cheap estimate of the tokens of the messages the plan did not count (after the head, before
 * `countedFrom`, pinned aside): as many as the counted messages cost on average. Constant time:
 * the messages themselves are not read again.
 */
function estimateUncounted(d: PlanDecisions, countedFrom: number, grouping: Grouping): number {
  let uncounted = 0;
  for (let i = d.headEnd; i < countedFrom; i++) if (!grouping.pinned[i]) uncounted++;
  const counted = d.messagesBefore - uncounted;
  return counted > 0 ? Math.round((d.tokensBefore / counted) * uncounted) : 0;
}

/**
 * Where a summary's coverage ends: it applies only when the messages right after the head are
 * exactly the ones it covers, in order (ids carry content fingerprints, so an edited or
 * regenerated message makes it stale), and the end is a group start.
 */
function resolveSummary<M>(
  messages: readonly M[], idOf: (i: number) => string, grouping: Grouping, start: number, summary: SummaryInput,
): { resolved?: ResolvedSummary; note?: string } {
  const ids = summary.coveredIds;
  if (ids.length === 0 || summary.text.trim() === '') return { note: 'summary not applied: it is empty or covers no message' };
  if (start + ids.length > messages.length) return { note: 'summary not applied: it covers more messages than the history has after the head' };
  for (let k = 0; k < ids.length; k++) {
    if (idOf(start + k) !== ids[k]) {
      return { note: `summary not applied: messages[${start + k}] is not the message it covers (edited, regenerated or a different head)` };
    }
  }
  const end = start + ids.length;
  const aligned = alignCut(grouping, end);
  if (aligned <= start) return { note: 'summary not applied: its coverage ends inside the first group after the head' };
  return { resolved: { text: summary.text, coveredEnd: aligned, ...(summary.compactTokens !== undefined ? { compactTokens: summary.compactTokens } : {}) }, note: aligned < end ? `summary coverage snapped back from ${end} to group start ${aligned}` : undefined };
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

/**
 * What a view is made of, message by message: a kept message by its index in the history, a
 * message the plan made (summary, note, collapsed result) by its JSON text; and its tokens.
 */
function viewTrace<M>(view: readonly M[], input: readonly M[], d: PlanDecisions, counts: ArrayLike<number>, count: (m: M) => number): ViewTrace {
  const keys: (number | string)[] = [];
  const tokens: number[] = [];
  const collapsed = new Set(d.collapsed.map((c) => c.index));
  let range = 0;
  let k = 0;
  const nextKept = () => {
    for (;;) {
      while (range < d.dropped.length && d.dropped[range].end <= k) range++;
      if (range < d.dropped.length && d.dropped[range].start <= k) k = d.dropped[range].end;
      else return k;
    }
  };
  for (const m of view) {
    const at = nextKept();
    if (at < input.length && m === input[at]) {
      keys.push(at);
      tokens.push(counts[at]);
      k = at + 1;
    } else {
      keys.push(JSON.stringify(m));
      tokens.push(count(m));
      if (at < input.length && collapsed.has(at)) k = at + 1;
    }
  }
  return { keys, tokens };
}

/** Tokens of the leading entries two view traces share; a kept message counts only inside the history prefix known to be unchanged. */
function sharedPrefixTokens(previous: ViewTrace, current: ViewTrace, unchanged: number): number {
  let n = 0;
  const limit = Math.min(previous.keys.length, current.keys.length);
  for (let e = 0; e < limit; e++) {
    const key = current.keys[e];
    if (key !== previous.keys[e] || (typeof key === 'number' && key >= unchanged)) break;
    n += current.tokens[e];
  }
  return n;
}

/** The report's group figures: count, tool-call turns among them, the largest group's size. */
function groupStatsOf(grouping: Grouping): CompressReport['groups'] {
  let turns = 0;
  let largest = 0;
  for (const g of grouping.groups) {
    if (g.type === 'turn') turns++;
    largest = Math.max(largest, g.end - g.start);
  }
  return { count: grouping.groups.length, turns, largest };
}

const NOTHING_DROPPED: readonly DroppedMessage[] = Object.freeze([]);

/** What `analyzeContext` finds before it counts anything: the lens, the (repaired) input, its groups and ids, the summary that applies. */
interface Prepared<M> {
  readonly messages: readonly M[];
  readonly options: ResolvedCompressOptions;
  readonly counter: TokenCounter;
  readonly cache: ResolvedCompressOptions['historyCache'];
  readonly chatId: string;
  /** The chat's previous history this one continues, and how many messages they share. */
  readonly known: Recall['history'];
  readonly shared: number;
  readonly lens: MessageLens<M>;
  readonly mayRepair: boolean;
  /** The history the plan is made on: `messages`, or its repaired copy. */
  readonly input: readonly M[];
  readonly repaired: RepairAction[];
  readonly grouping: Grouping;
  readonly ids: string[];
  readonly idOf: (i: number) => string;
  readonly hEnd: number;
  readonly summaryNote?: string;
  readonly resolvedSummary?: ResolvedSummary;
}

/** Plans a view like `compressContext`, on options already checked, and also returns what it used. */
export function analyzeContext<M = OpenAIChatMessage>(messages: readonly M[], options: ResolvedCompressOptions): ContextAnalysis<M> {
  // TODO(unfinished): the goals of bench/small.ts are not all met. Within its window by bytes, a
  // 20-50 message request still costs 2.7-3.8x JSON.parse of its body (cold), most of it in
  // prepare() (format detection and grouping read every message), not in counting; a request
  // over its window still tokenizes what the view holds (12-30x cold, 1.1-4.9x warm); a
  // process's first compressContext call compiles the planner (about 50x a later one).
  const p = prepare(messages, options);
  return planWithinBytes(p) ?? planCounted(p);
}

/** Everything before counting: lens, repair, groups, ids, the summary's coverage. */
function prepare<M>(messages: readonly M[], options: ResolvedCompressOptions): Prepared<M> {
  const counter = counterFor(options);
  const cache = options.historyCache;
  const chatId = options.chatId!;
  // A history that continues its chat's previous one reuses what was found for the shared
  // prefix: its counts, its groups, its ids, and the check of its messages' shape.
  const recall = options.recalled ?? (cache && Array.isArray(messages) ? cache.recall(chatId, messages) : NOTHING_SHARED);
  const format = options.format;
  const known = recall.history && (format === 'auto' || format === recall.history.format) ? recall.history : undefined;
  const shared = known ? recall.shared : 0;
  const chosen = known ? chooseLens(messages, known.format, 'messages', shared) : chooseLens(messages, format);
  const lens = chosen.lens as MessageLens<M>;
  // Repair deletes results: it runs only on a format that was named or seen, never on the default.
  const mayRepair = options.repair && (chosen.origin !== 'default' || known !== undefined);
  let input = messages;
  let repaired: RepairAction[] = [];
  let grouping = buildGroups(input, lens, known ? { grouping: known.grouping, shared } : undefined);
  // Grouping already knows whether anything is broken, and the lens check whether a message's own
  // shape is; only then is the repair pass run. A shape is fixed (or refused) whatever the origin:
  // that deletes nothing.
  if ((!grouping.regular && mayRepair) || (chosen.misshapen && options.repair)) {
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
  const fingerprints = cache?.fingerprints ?? new Fingerprints();
  // Ids (a fingerprint each) of the shared prefix carry over from the history this one continues.
  const ids = input === messages ? carriedIds(known, shared) : [];
  const idOf = (i: number): string => (ids[i] ??= fingerprints.idAt(input, lens, i));
  const plan0 = options.plan;
  const hEnd = headEnd(grouping, plan0.keepFirst);
  let summaryNote: string | undefined;
  let resolvedSummary: ResolvedSummary | undefined;
  if (options.summary) {
    const r = resolveSummary(input, idOf, grouping, hEnd, options.summary);
    resolvedSummary = r.resolved;
    summaryNote = r.note;
  }
  return { messages, options, counter, cache, chatId, known, shared, lens, mayRepair, input, repaired, grouping, ids, idOf, hEnd, summaryNote, resolvedSummary };
}

/**
 * Tokens of every message the plan reads, lazily (a window and no clearing of old results): the
 * counts shared with the remembered history, NaN for the rest (`countBackward` counts what a view
 * can hold); otherwise every message, counted now.
 */
function initialCounts<M>(p: Prepared<M>): Float64Array {
  const { input, messages, known, shared, lens, counter, options } = p;
  const lazy = options.plan.maxContextTokens !== undefined && options.plan.collapseMinChars === undefined;
  return countHistory(input, lens, counter, input === messages && known ? { history: known, shared } : NOTHING_SHARED, lazy);
}

/**
 * The plan on exact counts. With `fill` (the counts array the byte-bound path left in the chat's
 * cache entry), that array is counted into and the cache is not written again: the view was
 * already remembered when it was served.
 */
function planCounted<M>(p: Prepared<M>, fill?: Float64Array): ContextAnalysis<M> {
  const { messages, options, counter, cache, chatId, known, shared, lens, mayRepair, input, repaired, grouping, ids, idOf, hEnd, summaryNote, resolvedSummary } = p;
  const plan0 = options.plan;
  // With a budget (and no clearing of old results, which reads every result), only what a view
  // can hold is counted: newest first, until the budget and the threshold are decided.
  const lazy = plan0.maxContextTokens !== undefined && plan0.collapseMinChars === undefined;
  const counts = fill ?? initialCounts(p);
  const extraTokens = requestExtraTokens(options, counter.text);
  let countedFrom: number | undefined;
  if (lazy) {
    countedFrom = countBackward(input, lens, counter, counts, grouping, {
      headEnd: hEnd,
      tailStart: tailStart(grouping, plan0.keepLast, hEnd),
      floor: resolvedSummary ? Math.max(hEnd, resolvedSummary.coveredEnd) : hEnd,
      limit: Math.max(plan0.maxContextTokens!, plan0.compressionThresholdTokens ?? 0),
      overheadTokens: counter.requestOverhead + extraTokens,
    });
  }
  const remembered = cache && input === messages ? known : undefined;
  const plan = planView({
    messages: input, lens, grouping, counts, count: (m) => counter.message(m, lens), options: { ...options.plan, requestOverheadTokens: counter.requestOverhead + extraTokens, alternateRoles: options.provider?.alternates }, summary: resolvedSummary,
    shortenSummary: options.shortenSummary ?? ((text, maxTokens) => keepNewestLines(text, maxTokens, counter.text)),
    countedFrom,
    clearedText: options.clearedText ? (i, chars) => options.clearedText!(idOf(i), chars) : undefined,
  });
  const d = plan.decisions;
  let prefixTokensShared: number | undefined;
  if (cache && input === messages) {
    const trace = viewTrace(plan.messages, input, d, counts, (m) => counter.message(m, lens));
    prefixTokensShared = remembered?.view ? sharedPrefixTokens(remembered.view, trace, shared) : 0;
    // A snapshot: callers append to their arrays in place, and the counts are for this content.
    const snapshot = known && counts === known.counts ? known.messages : messages.slice();
    // Text the plan did not read: after the head and what a summary's ids were checked on, before
    // the first message counted. The next request compares it loosely (see `TextUnread`).
    const summarizedEnd = options.readsSummarizedIds && d.summarize ? d.summarize.end : 0;
    const unreadFrom = Math.min(input.length, Math.max(hEnd + (options.summary?.coveredIds.length ?? 0), summarizedEnd));
    const textUnread = countedFrom !== undefined && lens.stringContentIsText && countedFrom > unreadFrom ? { from: unreadFrom, to: countedFrom } : undefined;
    if (!fill) cache.remember(chatId, { messages: snapshot, counts, grouping, format: lens.format, ids, view: trace, textUnread });
  }
  const listDropped = memo(() => {
    const out: DroppedMessage[] = [];
    for (const r of d.dropped) for (let i = r.start; i < r.end; i++) out.push({ index: i, id: idOf(i), reason: r.reason });
    return out;
  });
  const s = d.summarize;
  const summarize = s ? lazyObject({ start: s.start, end: s.end, ...(s.roomTokens === undefined ? {} : { roomTokens: s.roomTokens }), ...(s.belowStep ? { belowStep: s.belowStep } : {}) }, 'ids', () => Array.from({ length: s.end - s.start }, (_, k) => idOf(s.start + k))) : undefined;
  const groupStats = memo(() => groupStatsOf(grouping));
  const notes = [...d.notes];
  if (repaired.length > 0) notes.push(`input repaired (${repaired.length} change(s)); indexes refer to the repaired history`);
  if (!grouping.regular && !mayRepair && options.repair) notes.push(`the tool calls are not all answered, but nothing in the messages shows their format (they were read as ${lens.format}, the default), so nothing was repaired: pass format to repair them`);
  return {
    input,
    lens,
    counter,
    counts,
    idOf,
    grouping,
    messages: plan.messages,
    report: {
      format: lens.format,
      tokensBefore: d.tokensBeforeExact ? d.tokensBefore : d.tokensBefore + estimateUncounted(d, countedFrom ?? 0, grouping),
      tokensBeforeExact: d.tokensBeforeExact,
      tokensAfter: d.tokensAfter,
      maxContextTokens: options.plan.maxContextTokens !== undefined ? options.plan.maxContextTokens + options.reserveOutputTokens : undefined,
      reservedOutputTokens: options.reserveOutputTokens,
      requestExtraTokens: extraTokens,
      compressionThresholdTokens: options.plan.compressionThresholdTokens,
      messagesBefore: d.messagesBefore,
      messagesAfter: d.messagesAfter,
      get groups() {
        return groupStats();
      },
      headEnd: d.headEnd,
      tailStart: d.tailStart,
      protectedStart: d.protectedStart,
      ...(d.heldUserTurn ? { heldUserTurn: d.heldUserTurn } : {}),
      summary: {
        applied: d.summaryApplied,
        coveredMessages: d.coveredEnd - d.headEnd,
        tokens: d.summaryTokens,
        allowedTokens: d.summaryAllowedTokens,
        shortened: d.summaryShortened,
        // Why a summary that matched is not in the view comes first: no room, or nothing left to replace.
        note: (resolvedSummary && !d.summaryApplied
          ? (d.notes.find((n) => n.startsWith('summary left out')) ?? summaryNote ?? 'summary not applied: everything it covers is in the kept tail, which is sent as it is')
          : summaryNote),
      },
      split: { head: d.split.head, summary: d.split.summary, middle: d.split.middle, tail: d.split.tail, notes: d.split.notes, tools: extraTokens, overhead: d.split.overhead - extraTokens },
      droppedCounts: droppedCounts(d.dropped),
      get dropped() {
        return listDropped();
      },
      collapsed: d.collapsed.map((c) => ({ ...c, id: idOf(c.index) })),
      repaired,
      violations: options.provider ? checkProfile(plan.messages, options.provider as Profile<M>) : undefined,
      overBudget: d.overBudget,
      minimumTokens: Number.isFinite(d.minimumTokens) ? d.minimumTokens : undefined,
      prefixTokensShared,
      summarize,
      notes,
    },
  };
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
  const { options, counter, lens, input, grouping, resolvedSummary } = p;
  const plan0 = options.plan;
  if (!counter.atMostUtf8Bytes || plan0.maxContextTokens === undefined || plan0.collapseMinChars !== undefined || resolvedSummary) return undefined;
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
  const groupStats = memo(() => groupStatsOf(grouping));
  const tokens = () => exact().report;
  const notes = [...d.notes];
  if (p.repaired.length > 0) notes.push(`input repaired (${p.repaired.length} change(s)); indexes refer to the repaired history`);
  if (!grouping.regular && !p.mayRepair && options.repair) notes.push(`the tool calls are not all answered, but nothing in the messages shows their format (they were read as ${lens.format}, the default), so nothing was repaired: pass format to repair them`);
  // Same fields in the same order as the exact plan's report (a property test compares the two).
  const report: CompressReport = {
    format: lens.format,
    get tokensBefore() { return tokens().tokensBefore; },
    tokensBeforeExact: true,
    get tokensAfter() { return tokens().tokensAfter; },
    maxContextTokens: plan0.maxContextTokens + options.reserveOutputTokens,
    reservedOutputTokens: options.reserveOutputTokens,
    get requestExtraTokens() { return tokens().requestExtraTokens; },
    compressionThresholdTokens: plan0.compressionThresholdTokens,
    messagesBefore: d.messagesBefore,
    messagesAfter: d.messagesAfter,
    get groups() { return groupStats(); },
    headEnd: d.headEnd,
    tailStart: d.tailStart,
    protectedStart: d.protectedStart,
    summary: { applied: false, coveredMessages: 0, tokens: undefined, allowedTokens: undefined, shortened: false, note: p.summaryNote },
    get split() { return tokens().split; },
    droppedCounts: droppedCounts(d.dropped),
    get dropped() { return NOTHING_DROPPED; },
    collapsed: [],
    repaired: p.repaired,
    violations: options.provider ? checkProfile(plan.messages, options.provider as Profile<M>) : undefined,
    overBudget: false,
    get minimumTokens() { return tokens().minimumTokens; },
    get prefixTokensShared() { return tokens().prefixTokensShared; },
    summarize: undefined,
    notes,
  };
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
  const extraTokens = requestExtraTokens(options, countText);
  let total = counter.requestOverhead + extraTokens;
  if (total > limit) return undefined;
  const counts = new Float64Array(input.length);
  for (let i = 0; i < input.length; i++) {
    total += counts[i] = messageTokens(input[i], lens, countText);
    if (total > limit) return undefined;
  }
  return { counts, extraTokens, countText };
}
