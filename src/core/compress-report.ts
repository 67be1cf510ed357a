import type { Grouping } from './groups.js';
import type { FormatName } from './lens.js';
import type { Plan, ResolvedSummary } from './plan.js';
import type { RepairAction } from './repair.js';
import { droppedCounts, type DropReason } from './report.js';
import { estimateUncounted } from './count-history.js';
import { checkProfile, type Profile } from './validate/validate.js';
import type { Violation } from './validate/rules.js';

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

/** `make()`, worked out on the first call and remembered. */
export function memo<T>(make: () => T): () => T {
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
export function lazyObject<T extends object, K extends string, V>(base: T, key: K, make: () => V): T & Record<K, V> {
  const get = memo(make);
  return Object.defineProperty(base, key, { enumerable: true, get }) as T & Record<K, V>;
}

/** The report's group figures: count, tool-call turns among them, the largest group's size. */
export function groupStats(grouping: Grouping): CompressReport['groups'] {
  let turns = 0;
  let largest = 0;
  for (const g of grouping.groups) {
    if (g.type === 'turn') turns++;
    largest = Math.max(largest, g.end - g.start);
  }
  return { count: grouping.groups.length, turns, largest };
}

const NOTHING_DROPPED: readonly DroppedMessage[] = Object.freeze([]);

/** What a report is made from: the plan, the history it was made on, and what was found before planning. */
export interface ReportInput<M> {
  readonly format: FormatName;
  readonly plan: Plan<M>;
  readonly grouping: Grouping;
  /** Id of the message at a position of the planned history. */
  readonly idOf: (index: number) => string;
  /** The planning budget (the window less the reply's reserve), the reserve, and the threshold. */
  readonly window: { readonly maxContextTokens?: number; readonly reserveOutputTokens: number; readonly compressionThresholdTokens?: number };
  /** Tokens of the request's tools, response format and outside instructions. */
  readonly extraTokens: number;
  /** Where counting started (`countBackward`); undefined when every message was counted. */
  readonly countedFrom?: number;
  /** The stored summary as matched against the history (`resolveSummary`). */
  readonly summary: { readonly resolved?: ResolvedSummary; readonly note?: string };
  readonly repaired: readonly RepairAction[];
  /** True when the history is irregular and was left so because nothing showed its format. */
  readonly leftUnrepaired: boolean;
  /** The provider profile the view is checked against. */
  readonly provider?: Profile<M>;
  readonly prefixTokensShared?: number;
}

/** The plan's notes, then what repair did (or why it did nothing) to the history. */
function notesOf<M>(r: ReportInput<M>): string[] {
  const notes = [...r.plan.decisions.notes];
  if (r.repaired.length > 0) notes.push(`input repaired (${r.repaired.length} change(s)); indexes refer to the repaired history`);
  if (r.leftUnrepaired) notes.push(`the tool calls are not all answered, but nothing in the messages shows their format (they were read as ${r.format}, the default), so nothing was repaired: pass format to repair them`);
  return notes;
}

/** The summary's part of the report: why a summary that matched is not in the view comes first (no room, or nothing left to replace). */
function summaryOf<M>(r: ReportInput<M>): CompressReport['summary'] {
  const d = r.plan.decisions;
  const { resolved, note } = r.summary;
  return {
    applied: d.summaryApplied,
    coveredMessages: d.coveredEnd - d.headEnd,
    tokens: d.summaryTokens,
    allowedTokens: d.summaryAllowedTokens,
    shortened: d.summaryShortened,
    note: (resolved && !d.summaryApplied
      ? (d.notes.find((n) => n.startsWith('summary left out')) ?? note ?? 'summary not applied: everything it covers is in the kept tail, which is sent as it is')
      : note),
  };
}

/** The range the plan asks a summarizer to fold, its ids read only when asked for. */
function summarizeOf<M>(r: ReportInput<M>): CompressReport['summarize'] {
  const s = r.plan.decisions.summarize;
  if (!s) return undefined;
  return lazyObject({ start: s.start, end: s.end, ...(s.roomTokens === undefined ? {} : { roomTokens: s.roomTokens }), ...(s.belowStep ? { belowStep: s.belowStep } : {}) }, 'ids', () => Array.from({ length: s.end - s.start }, (_, k) => r.idOf(s.start + k)));
}

/** The report of a plan made on exact counts; ids, the dropped list and group figures are worked out when first read. */
export function exactReport<M>(r: ReportInput<M>): CompressReport {
  const { plan, grouping, idOf, window, extraTokens } = r;
  const d = plan.decisions;
  const listDropped = memo(() => {
    const out: DroppedMessage[] = [];
    for (const x of d.dropped) for (let i = x.start; i < x.end; i++) out.push({ index: i, id: idOf(i), reason: x.reason });
    return out;
  });
  const groups = memo(() => groupStats(grouping));
  return {
    format: r.format,
    tokensBefore: d.tokensBeforeExact ? d.tokensBefore : d.tokensBefore + estimateUncounted(d, r.countedFrom ?? 0, grouping),
    tokensBeforeExact: d.tokensBeforeExact,
    tokensAfter: d.tokensAfter,
    maxContextTokens: window.maxContextTokens !== undefined ? window.maxContextTokens + window.reserveOutputTokens : undefined,
    reservedOutputTokens: window.reserveOutputTokens,
    requestExtraTokens: extraTokens,
    compressionThresholdTokens: window.compressionThresholdTokens,
    messagesBefore: d.messagesBefore,
    messagesAfter: d.messagesAfter,
    get groups() {
      return groups();
    },
    headEnd: d.headEnd,
    tailStart: d.tailStart,
    protectedStart: d.protectedStart,
    ...(d.heldUserTurn ? { heldUserTurn: d.heldUserTurn } : {}),
    summary: summaryOf(r),
    split: { head: d.split.head, summary: d.split.summary, middle: d.split.middle, tail: d.split.tail, notes: d.split.notes, tools: extraTokens, overhead: d.split.overhead - extraTokens },
    droppedCounts: droppedCounts(d.dropped),
    get dropped() {
      return listDropped();
    },
    collapsed: d.collapsed.map((c) => ({ ...c, id: idOf(c.index) })),
    repaired: r.repaired,
    violations: r.provider ? checkProfile(plan.messages, r.provider) : undefined,
    overBudget: d.overBudget,
    minimumTokens: Number.isFinite(d.minimumTokens) ? d.minimumTokens : undefined,
    prefixTokensShared: r.prefixTokensShared,
    summarize: summarizeOf(r),
    notes: notesOf(r),
  };
}

/**
 * The report of a view served as it is because its byte bound is within its window: every token
 * figure is read from `exact` (the report on exact counts, made when first asked for); the rest is
 * the plan's. Same fields in the same order as `exactReport` (a property test compares the two).
 */
export function boundReport<M>(r: ReportInput<M>, exact: () => CompressReport): CompressReport {
  const d = r.plan.decisions;
  const groups = memo(() => groupStats(r.grouping));
  return {
    format: r.format,
    get tokensBefore() { return exact().tokensBefore; },
    tokensBeforeExact: true,
    get tokensAfter() { return exact().tokensAfter; },
    maxContextTokens: r.window.maxContextTokens! + r.window.reserveOutputTokens,
    reservedOutputTokens: r.window.reserveOutputTokens,
    get requestExtraTokens() { return exact().requestExtraTokens; },
    compressionThresholdTokens: r.window.compressionThresholdTokens,
    messagesBefore: d.messagesBefore,
    messagesAfter: d.messagesAfter,
    get groups() { return groups(); },
    headEnd: d.headEnd,
    tailStart: d.tailStart,
    protectedStart: d.protectedStart,
    summary: { applied: false, coveredMessages: 0, tokens: undefined, allowedTokens: undefined, shortened: false, note: r.summary.note },
    get split() { return exact().split; },
    droppedCounts: droppedCounts(d.dropped),
    get dropped() { return NOTHING_DROPPED; },
    collapsed: [],
    repaired: r.repaired,
    violations: r.provider ? checkProfile(r.plan.messages, r.provider) : undefined,
    overBudget: false,
    get minimumTokens() { return exact().minimumTokens; },
    get prefixTokensShared() { return exact().prefixTokensShared; },
    summarize: undefined,
    notes: notesOf(r),
  };
}
