import { InputError, SummarizerError } from '../errors.js';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { TranscriptEntry } from '../formats/lens.js';
import type { TextCounter } from '../tokens/counter.js';
import { defaultTextCounter } from './default-counter.js';
import { appendMissingFacts, extendLedger, ledgerStats, parseLedger, withFactsOfText, withoutLedgerBlocks } from './ledger.js';
import { renderEntry } from './render-transcript.js';
import { requestSignal, type Summarizer } from './summarizer.js';
import { truncateMiddle } from './truncate-middle.js';

/** What `summarizeRolling` folds: the summary so far and the new messages, oldest first. */
export interface RollingRequest {
  readonly previousSummary?: string;
  readonly messages: readonly TranscriptEntry[];
  /** Aborts the fold; left out, it never aborts. */
  readonly signal?: AbortSignal;
  /** Token counter for batching. Default: the shared tiktoken counter (`o200k_base`). */
  readonly countTokens?: TextCounter;
  /**
   * Tokens of `messages[index]` as the summarizer will see it, when the caller already knows a
   * safe upper bound (e.g. the message's own billed count plus a few tokens of rendering): saves
   * re-encoding a long history. Default: `entryTokens` of the entry.
   */
  readonly entryTokens?: (entry: TranscriptEntry, index: number) => number;
  /** The room the summary will have in the view, passed on to every call (`SummarizeRequest.maxTokens`). */
  readonly maxTokens?: number;
}

/** The folded summary and how many summarizer calls it took. */
export interface RollingResult {
  readonly summary: string;
  readonly calls: number;
  /**
   * Facts the summary's ledger block reports: distinct facts seen over every fold so far, and
   * those the summary holds. Absent when the summary has no ledger block (a summarizer that
   * neither writes one nor sets `factCheckTokens`).
   */
  readonly factsSeen?: number;
  readonly factsKept?: number;
}

/**
 * A model's summary checked against the fact ledger of its input: the ledger of the previous
 * summary (its ledger block, and the identifiers of its prose) extended with the batch, and the
 * facts the new summary dropped appended as a ledger block in at most `maxTokens`.
 */
export function withCheckedFacts(summary: string, previousSummary: string | undefined, batch: readonly TranscriptEntry[], maxTokens: number, countTokens: TextCounter, checkpoint: () => void = () => {}): string {
  const previous = previousSummary ?? '';
  const carried = withFactsOfText(parseLedger(previous), withoutLedgerBlocks(previous));
  return appendMissingFacts(summary, extendLedger(carried, batch, checkpoint), maxTokens, countTokens);
}

/**
 * Tokens one entry costs in a summarizer's input: the count of its rendering, the same text the
 * model summarizer puts in its prompt (`renderEntry`), plus one for the line that separates entries.
 */
export function entryTokens(entry: TranscriptEntry, countTokens: TextCounter = defaultTextCounter()): number {
  return countTokens(renderEntry(entry)) + 1;
}

/** Characters kept of every long field at the last shortening step: the marker and a few characters each side. */
const MIN_FIELD_CHARS = 32;

/**
 * A copy of `entry` whose long texts (text, call arguments, result contents) are cut in the
 * middle, with a marker, until the entry costs at most `maxTokens`. Names and ids are kept.
 * Throws an `InputError` (`summarizer.inputBudgetTokens`) when even the marker-only entry does not fit (a budget far too small).
 */
export function shortenEntry(entry: TranscriptEntry, maxTokens: number, countTokens: TextCounter = defaultTextCounter()): TranscriptEntry {
  let tokens = entryTokens(entry, countTokens);
  if (tokens <= maxTokens) return entry;
  const fields = [entry.text, ...entry.calls.map((c) => c.arguments), ...entry.results.map((r) => r.content)];
  let limits = fields.map((f) => f.length);
  let shortened = entry;
  for (let step = 0; step < 24 && tokens > maxTokens; step++) {
    const ratio = Math.min(0.9, (maxTokens / tokens) * 0.95);
    const atFloor = limits.every((limit) => limit <= MIN_FIELD_CHARS);
    limits = limits.map((limit) => (atFloor ? 0 : Math.max(MIN_FIELD_CHARS, Math.floor(limit * ratio))));
    shortened = withFields(entry, fields.map((f, i) => truncateMiddle(f, limits[i])));
    tokens = entryTokens(shortened, countTokens);
    if (atFloor) break;
  }
  if (tokens > maxTokens) {
    throw new InputError('summarizer.inputBudgetTokens', `is too small: a single message needs ${tokens} tokens even when shortened, over the ${maxTokens} tokens left of the budget; raise it`);
  }
  return shortened;
}

function withFields(entry: TranscriptEntry, fields: readonly string[]): TranscriptEntry {
  let i = 1;
  return {
    role: entry.role,
    text: fields[0],
    calls: entry.calls.map((c) => ({ ...c, arguments: fields[i++] })),
    results: entry.results.map((r) => ({ ...r, content: fields[i++] })),
  };
}

/** Cuts a summary in the middle to at most `maxTokens` (undefined stays undefined). */
function boundedSummary(summary: string | undefined, maxTokens: number, countTokens: TextCounter): string | undefined {
  if (summary === undefined || countTokens(summary) <= maxTokens) return summary;
  let chars = summary.length;
  let out = summary;
  while (chars > 0 && countTokens(out) > maxTokens) {
    chars = Math.floor(chars * Math.min(0.9, maxTokens / countTokens(out)));
    out = truncateMiddle(summary, chars);
  }
  return out;
}

/**
 * Folds messages into a rolling summary in consecutive batches, oldest first, so that for every
 * call `tokens(previous summary) + sum(entryTokens(batch)) <= summarizer.inputBudgetTokens`; each
 * call's result is the next call's previous summary. An entry that alone exceeds what is left is
 * passed shortened (`shortenEntry`); a previous summary over half the budget is cut in the middle
 * first. Calls grow linearly with the input. Rejects when the signal aborts (checked before and
 * after each call, so a summarizer that ignores it still stops the fold) and when a summarizer
 * returns an empty summary: the result is never empty.
 */
export async function summarizeRolling(summarizer: Summarizer, request: RollingRequest): Promise<RollingResult> {
  const { messages } = request;
  const signal = requestSignal(request);
  const countTokens = request.countTokens ?? defaultTextCounter();
  const budget = summarizer.inputBudgetTokens;
  // The summary carried into the next call may take half the input budget, or the room the caller
  // gives the summary when that is larger (up to three quarters: each batch keeps a quarter).
  const carryLimit = Math.max(Math.floor(budget / 2), Math.min(request.maxTokens ?? 0, Math.floor((budget * 3) / 4)));
  signal.throwIfAborted();
  let summary = request.previousSummary?.trim() ? request.previousSummary : undefined;
  if (messages.length === 0) {
    if (summary === undefined) throw new InputError('messages', 'must hold at least one message when there is no previous summary: summarizeRolling has nothing to summarize');
    return { summary, calls: 0 };
  }

  // What the next call is given as its previous summary: the summary so far, bounded.
  let carried = boundedSummary(summary, carryLimit, countTokens);
  let carriedTokens = carried === undefined ? 0 : countTokens(carried);
  let calls = 0;
  const fold = async (batch: TranscriptEntry[]) => {
    // A turn for the event loop between batches: an in-process summarizer's work is synchronous,
    // and a long fold must not hold other requests up for more than one batch.
    await yieldToLoop();
    signal.throwIfAborted();
    const next = await summarizer.summarize(request.maxTokens === undefined ? { previousSummary: carried, messages: batch, signal } : { previousSummary: carried, messages: batch, signal, maxTokens: request.maxTokens });
    signal.throwIfAborted();
    calls++;
    if (typeof next !== 'string' || next.trim() === '') {
      throw new SummarizerError(summarizer.name, 'empty', `summarizer ${summarizer.name} returned an empty summary (call ${calls}, ${batch.length} messages)`);
    }
    summary = next.trim();
    // A model may drop identifiers: those of the ledger it left out are appended (`factCheckTokens`).
    if (summarizer.factCheckTokens) summary = withCheckedFacts(summary, carried, batch, summarizer.factCheckTokens, countTokens, () => signal.throwIfAborted());
    carried = boundedSummary(summary, carryLimit, countTokens);
    carriedTokens = countTokens(carried!);
  };

  let batch: TranscriptEntry[] = [];
  let batchTokens = 0;
  const tokensOf = request.entryTokens ?? ((entry: TranscriptEntry) => entryTokens(entry, countTokens));
  for (let index = 0; index < messages.length; index++) {
    const entry = messages[index];
    let tokens = tokensOf(entry, index);
    if (batch.length > 0 && carriedTokens + batchTokens + tokens > budget) {
      await fold(batch);
      batch = [];
      batchTokens = 0;
    }
    let next = entry;
    if (carriedTokens + tokens > budget) {
      next = shortenEntry(entry, budget - carriedTokens, countTokens);
      tokens = entryTokens(next, countTokens);
    }
    batch.push(next);
    batchTokens += tokens;
  }
  await fold(batch);
  const stats = ledgerStats(summary!);
  return stats ? { summary: summary!, calls, factsSeen: stats.seen, factsKept: stats.kept } : { summary: summary!, calls };
}
