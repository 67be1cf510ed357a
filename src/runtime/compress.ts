import { alignCut, headEnd } from '../core/boundary.js';
import { buildGroups, type Grouping } from '../core/groups.js';
import { planView, type DropReason, type ResolvedSummary } from '../core/plan.js';
import { repairHistory, type RepairAction } from '../core/repair.js';
import { CtxfoldInputError } from '../errors.js';
import { selectLens } from '../formats/registry.js';
import type { FormatName, MessageLens } from '../formats/lens.js';
import type { OpenAIChatMessage } from '../formats/openai-chat/lens.js';
import { idAt } from './fingerprints.js';
import { resolvePlanningOptions, type PlanningOptions, type SummaryInput } from './options.js';
import { createTokenCounter, type RememberedHistory, type TokenCounter } from '../tokens/counter.js';

/** Options of `compressContext`: planning options plus format, tokenizer and an existing summary. */
export interface CompressOptions extends PlanningOptions {
  /** Wire format of `messages`; `auto` (default) detects it. */
  format?: FormatName | 'auto';
  /** Model name: picks the tiktoken encoding. */
  model?: string;
  /** A counter to reuse across calls (keeps its cache warm); made from `model` when absent. */
  counter?: TokenCounter;
  /** A summary made earlier; applied when the history still starts with the messages it covers. */
  summary?: SummaryInput | null;
  /** Fix a broken incoming history before planning (default true); what changed is reported. */
  repair?: boolean;
}

/** One message left out of the view. */
export interface DroppedMessage {
  readonly index: number;
  readonly id: string;
  readonly reason: DropReason;
}

/** Everything `compressContext` decided, as plain JSON-ready data. Indexes refer to the input. */
export interface CompressReport {
  readonly format: FormatName;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  readonly maxContextTokens?: number;
  readonly compressionThresholdTokens?: number;
  readonly messagesBefore: number;
  readonly messagesAfter: number;
  /** Group count, tool-call turns among them, and the largest group's size (computed on first read). */
  readonly groups: { readonly count: number; readonly turns: number; readonly largest: number };
  readonly headEnd: number;
  readonly tailStart: number;
  readonly protectedStart: number;
  readonly summary: { readonly applied: boolean; readonly coveredMessages: number; readonly note?: string };
  /** Counts of messages left out, by reason (cheap; `dropped` lists them with ids). */
  readonly droppedCounts: { readonly summarized: number; readonly budget: number };
  /** Every message left out, with its id and why. Computed on first read (ids cost a hash each). */
  readonly dropped: readonly DroppedMessage[];
  readonly collapsed: readonly { readonly index: number; readonly id: string; readonly tokensBefore: number; readonly tokensAfter: number }[];
  readonly repaired: readonly RepairAction[];
  readonly overBudget: boolean;
  /** When over the threshold: the messages a summarizer should fold in next, by index and id. */
  readonly summarize?: { readonly start: number; readonly end: number; readonly ids: readonly string[] };
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
 * The ids known for the first `shared` messages of a history that continues `known`. The array is
 * taken over when the counter will replace `known` by the new history (it is no longer than it),
 * copied otherwise; positions from `shared` on are cleared, since those messages differ.
 */
function carriedIds(known: RememberedHistory | undefined, shared: number, n: number): string[] {
  if (!known?.ids || shared === 0) return [];
  const ids = known.messages.length <= n ? known.ids : known.ids.slice(0, shared);
  if (ids.length > shared) ids.length = shared;
  return ids;
}

let defaultCounter: TokenCounter | undefined;
const countersByModel = new Map<string, TokenCounter>();

function counterFor(options: CompressOptions): TokenCounter {
  if (options.counter) return options.counter;
  if (!options.model) return (defaultCounter ??= createTokenCounter());
  let c = countersByModel.get(options.model);
  if (!c) countersByModel.set(options.model, (c = createTokenCounter({ model: options.model })));
  return c;
}

/**
 * Where a summary's coverage ends: it applies only when the messages right after the head are
 * exactly the ones it covers, in order (ids carry content fingerprints, so an edited or
 * regenerated message makes it stale), and the end is a group start.
 */
function resolveSummary<M>(
  messages: readonly M[], idOf: (i: number) => string, grouping: ReturnType<typeof buildGroups>, start: number, summary: SummaryInput,
): { resolved?: ResolvedSummary; note?: string } {
  if (typeof summary.text !== 'string') throw new CtxfoldInputError('options.summary.text', 'must be a string');
  if (!Array.isArray(summary.coveredIds)) throw new CtxfoldInputError('options.summary.coveredIds', 'must be an array of message ids');
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
  return { resolved: { text: summary.text, coveredEnd: aligned }, note: aligned < end ? `summary coverage snapped back from ${end} to group start ${aligned}` : undefined };
}

/**
 * Compresses a history into a view that fits the budget and that the provider accepts: head +
 * optional summary + the rest, trimmed only at group boundaries. Pure apart from the token-count
 * cache: the same input gives the same view. Kept messages are the caller's own objects, in order
 * (a collapsed tool result is a copy with its content replaced, and is reported).
 */
export function compressContext<M = OpenAIChatMessage>(messages: readonly M[], options: CompressOptions = {}): CompressResult<M> {
  const { messages: view, report } = analyzeContext(messages, options);
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
}

/** Plans a view like `compressContext` and also returns the input, lens and counter it used. */
export function analyzeContext<M = OpenAIChatMessage>(messages: readonly M[], options: CompressOptions = {}): ContextAnalysis<M> {
  const resolved = resolvePlanningOptions(options);
  const counter = counterFor(options);
  // A history that continues one planned before (a chat server's next request) reuses what was
  // found for the shared prefix: its counts, its groups, and the check of its messages' shape.
  const recall = counter.recall(messages);
  const format = options.format ?? 'auto';
  const known = recall.shared > 0 && recall.history?.format !== undefined && (format === 'auto' || format === recall.history.format) ? recall.history : undefined;
  const lens = (known ? selectLens(messages, known.format as FormatName, 'messages', recall.shared) : selectLens(messages, format)) as MessageLens<M>;
  let input = messages;
  let repaired: RepairAction[] = [];
  let grouping = buildGroups(input, lens, known?.grouping ? { grouping: known.grouping as Grouping, shared: recall.shared } : undefined);
  // Grouping already knows whether anything is broken; only then is the repair pass run.
  if (!grouping.regular && options.repair !== false && lens.format === 'openai') {
    const r = repairHistory(messages as readonly OpenAIChatMessage[]);
    if (r.actions.length > 0) {
      input = r.messages as unknown as M[];
      repaired = r.actions;
      grouping = buildGroups(input, lens);
    }
  }
  // Ids (a fingerprint each) of the shared prefix carry over from the history this one continues.
  const ids = input === messages ? carriedIds(known, recall.shared, messages.length) : [];
  const idOf = (i: number): string => (ids[i] ??= idAt(input, lens, i));
  let summaryNote: string | undefined;
  let resolvedSummary: ResolvedSummary | undefined;
  if (options.summary) {
    const r = resolveSummary(input, idOf, grouping, headEnd(grouping, resolved.keepFirst), options.summary);
    resolvedSummary = r.resolved;
    summaryNote = r.note;
  }
  const counts = counter.messages(input, lens, input === messages ? recall : undefined);
  if (input === messages) {
    const entry = counter.remembered(input);
    if (entry) {
      entry.grouping = grouping;
      entry.format = lens.format;
      entry.ids = ids;
    }
  }
  const plan = planView(input, lens, grouping, counts, (m) => counter.message(m, lens), { ...resolved, requestOverheadTokens: counter.requestOverhead }, resolvedSummary);
  const d = plan.decisions;
  const droppedCounts = { summarized: 0, budget: 0 };
  for (const r of d.dropped) droppedCounts[r.reason] += r.end - r.start;
  const listDropped = memo(() => {
    const out: DroppedMessage[] = [];
    for (const r of d.dropped) for (let i = r.start; i < r.end; i++) out.push({ index: i, id: idOf(i), reason: r.reason });
    return out;
  });
  const s = d.summarize;
  const summarize = s ? lazyObject({ start: s.start, end: s.end }, 'ids', () => Array.from({ length: s.end - s.start }, (_, k) => idOf(s.start + k))) : undefined;
  const groupStats = memo(() => {
    let turns = 0;
    let largest = 0;
    for (const g of grouping.groups) {
      if (g.type === 'turn') turns++;
      largest = Math.max(largest, g.end - g.start);
    }
    return { count: grouping.groups.length, turns, largest };
  });
  const notes = [...d.notes];
  if (repaired.length > 0) notes.push(`input repaired (${repaired.length} change(s)); indexes refer to the repaired history`);
  return {
    input,
    lens,
    counter,
    counts,
    messages: plan.messages,
    report: {
      format: lens.format,
      tokensBefore: d.tokensBefore,
      tokensAfter: d.tokensAfter,
      maxContextTokens: resolved.maxContextTokens,
      compressionThresholdTokens: resolved.compressionThresholdTokens,
      messagesBefore: d.messagesBefore,
      messagesAfter: d.messagesAfter,
      get groups() {
        return groupStats();
      },
      headEnd: d.headEnd,
      tailStart: d.tailStart,
      protectedStart: d.protectedStart,
      summary: {
        applied: d.summaryApplied,
        coveredMessages: d.coveredEnd - d.headEnd,
        note: summaryNote ?? (resolvedSummary && !d.summaryApplied ? 'summary not applied: everything it covers is in the protected last turn' : undefined),
      },
      droppedCounts,
      get dropped() {
        return listDropped();
      },
      collapsed: d.collapsed.map((c) => ({ ...c, id: idOf(c.index) })),
      repaired,
      overBudget: d.overBudget,
      summarize,
      notes,
    },
  };
}
