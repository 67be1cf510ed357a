import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { TranscriptEntry } from '../formats/lens.js';
import type { TextCounter } from '../tokens/counter.js';
import { InputError } from '../errors.js';
import { callText } from './call-text.js';
import { defaultTextCounter } from './default-counter.js';
import {
  factlessBlock, emptyLedger, ledgerBuilder, parseLedger, renderLedgerBesideSteps, renderLedgerSteps, withCarriedFacts, withoutLedgerBlocks, type Ledger,
} from './ledger.js';
import { conclusionOf, outcomesOf, requestOf } from './sentences.js';
import { requestSignal, type SummarizeRequest, type Summarizer } from './summarizer.js';
import { errorOf } from './tool-errors.js';
import {
  addItem, emptyMemory, itemCount, parseWorkingMemory, renderWorkingMemory, trimWorkingMemory, type WorkingMemory,
} from './working-memory.js';

/** Options of `createExtractiveSummarizer`. */
export interface ExtractiveSummarizerOptions {
  /**
   * Most tokens a summary may have; the least recent facts and the oldest items of each section go
   * first. Default: the room the caller says the summary will have (`SummarizeRequest.maxTokens`),
   * else 800. At least 32.
   */
  readonly maxSummaryTokens?: number;
  /**
   * Most tokens one call is given by the rolling driver (previous summary + messages). Default
   * 64 000: no model reads them, so a large batch costs only time (read in slices, yielding to the
   * event loop), and a summary carried from call to call keeps more of its facts.
   */
  readonly inputBudgetTokens?: number;
  /** Token counter for the summary budget. Default: the shared tiktoken counter (`o200k_base`). */
  readonly countTokens?: TextCounter;
  /**
   * Share of a summary's room the fact ledger gets first, after the title and the goal
   * (`LEDGER_SHARE`, 0.95 by default); it takes more when the rest of the working memory needs less.
   * Between 0 and 1.
   */
  readonly ledgerShare?: number;
}

/**
 * How a summary's room is split. The title and the goal come first (they are never dropped).
 * Of what is left, the fact ledger gets its share first: `LEDGER_SHARE`, or more when the rest of
 * the working memory (requests, tool calls, errors, conclusions) needs less than the remainder.
 * The working memory then gets whatever the ledger did not take. The ledger states each fact in
 * a few tokens where the working memory's items restate whole requests and answers, so where the
 * room is short the facts go first: a model can ask again for words, not for a lost id.
 */
export const LEDGER_SHARE = 0.95;

/** Messages read between two turns of the event loop. */
const SLICE_MESSAGES = 8;

/** Smallest accepted `maxSummaryTokens`: the title and one short item must fit. */
export const MIN_SUMMARY_TOKENS = 32;

function positiveInteger(value: number, name: string, min = 1): number {
  if (!Number.isInteger(value) || value < min) throw new InputError(`options.${name}`, `must be an integer >= ${min}, got ${value}`);
  return value;
}

/**
 * Folds entries, oldest first, into the working memory: what each user asked, each tool call
 * with its arguments, errors tool results reported, and what the assistant concluded (the facts
 * of results and messages go to the fact ledger, `extendLedger`). System messages are skipped (they are pinned, never folded).
 * A result's tool name is the one its entry carries (`transcriptOf` names results after the calls
 * they answer); this fold does no pairing of its own.
 */
export function foldEntries(memory: WorkingMemory, entries: readonly TranscriptEntry[], checkpoint: () => void): void {
  for (const entry of entries) {
    checkpoint();
    if (entry.role === 'system') continue;
    const text = entry.text.trim();
    // The first request seen with nothing before it is the conversation's goal, kept to the end.
    const opensChat = memory.Goal.size === 0 && memory['Earlier notes'].size === 0 && memory['User requests'].size === 0;
    if (entry.role === 'user' && text) addItem(memory, opensChat ? 'Goal' : 'User requests', requestOf(text));
    if (entry.role === 'assistant' && text) addItem(memory, 'Conclusions', entry.calls.length > 0 ? outcomesOf(text) : conclusionOf(text));
    for (const call of entry.calls) addItem(memory, 'Tool calls', callText(call));
    for (const result of entry.results) {
      const name = result.name;
      const error = errorOf(result.content);
      if (error) addItem(memory, 'Errors', name ? `${name}: ${error}` : error);
    }
  }
}

/** The working memory of a summary without its Facts section (the ledger is read separately). */
function memoryOf(summary: string): WorkingMemory {
  const memory = parseWorkingMemory(summary);
  memory.Facts.clear();
  return memory;
}

/**
 * The fact ledger of a summary: its ledger block, and the facts its other sections carry, which
 * the block left out for that reason (`renderLedgerBesideSteps`, `withCarriedFacts`).
 */
export function ledgerOf(summary: string): Ledger {
  return withCarriedFacts(parseLedger(summary), withoutLedgerBlocks(summary));
}

/**
 * Writes the summary in at most `maxTokens`: the title and the goal first, then the fact ledger
 * in its share of the room (`LEDGER_SHARE`, or more when the rest needs less), then the rest of
 * the working memory in what is left, each trimmed by its own rule (the ledger keeps its most
 * recent and most referenced facts, each section its newest items).
 */
export function writeSummary(memory: WorkingMemory, ledger: Ledger, maxTokens: number, countText: TextCounter, ledgerShare = LEDGER_SHARE, checkpoint: () => void = () => {}): string {
  const steps = summarySteps(memory, ledger, maxTokens, countText, ledgerShare, checkpoint);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * `writeSummary` with a turn for the event loop between its attempts at splitting the room (each
 * renders and counts the whole block): the same text, without one long synchronous stretch.
 */
async function writeSummaryYielding(memory: WorkingMemory, ledger: Ledger, maxTokens: number, countText: TextCounter, ledgerShare: number, checkpoint: () => void): Promise<string> {
  const steps = summarySteps(memory, ledger, maxTokens, countText, ledgerShare, checkpoint);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    await yieldToLoop();
    checkpoint();
  }
}

/** The work of `writeSummary`, pausing (`yield`) after each attempt; returns the text. */
function* summarySteps(memory: WorkingMemory, ledger: Ledger, maxTokens: number, countText: TextCounter, ledgerShare: number, checkpoint: () => void): Generator<void, string, void> {
  // Lines, ledger lines and blocks are counted again and again while the room is split: count
  // each text once (the map lives for one summary).
  const counted = new Map<string, number>();
  const count: TextCounter = (text) => {
    let n = counted.get(text);
    if (n === undefined) {
      n = countText(text);
      counted.set(text, n);
    }
    return n;
  };
  const rest: WorkingMemory = { ...memory, Facts: new Map() };
  const goalOnly: WorkingMemory = { ...emptyMemory(), Goal: memory.Goal };
  const floor = count(renderWorkingMemory(goalOnly));
  const available = Math.max(0, maxTokens - floor);
  const restNeeds = count(renderWorkingMemory(rest)) - floor;
  let ledgerRoom = Math.min(available, Math.max(Math.floor(available * ledgerShare), available - restNeeds - 1));
  yield;
  for (let attempt = 0; attempt < 6 && ledgerRoom > 0; attempt++) {
    // The ledger's share decides what the rest of the working memory may hold; the block is then
    // written beside that text, leaving out the facts it already carries, in all the room left.
    const share = yield* renderLedgerSteps(ledger, ledgerRoom, count);
    const shareTokens = share ? count(share) + 1 : 0;
    yield;
    let best = yield* besideLedger(rest, ledger, maxTokens - shareTokens, maxTokens, count, checkpoint);
    // The block leaves out what the rest states, so it may take less than its share: the rest
    // then gets that room back (and the block is written beside what it now states).
    for (let widen = 0; best && widen < 2; widen++) {
      const left = maxTokens - count(best.text);
      if (left < 4 || best.trimmed === itemCount(rest)) break;
      yield;
      const wider = yield* besideLedger(rest, ledger, maxTokens - best.blockTokens, maxTokens, count, checkpoint);
      if (!wider || count(wider.text) <= count(best.text)) break;
      best = wider;
    }
    if (best) return best.text;
    if (!share) break;
    ledgerRoom = Math.min(ledgerRoom, shareTokens) - 1;
    yield;
  }
  // No fact fits: the working memory alone, with the ledger's meta line when it fits too, so the
  // summary says how many facts it left out (callers widen a fold on that).
  if (ledger.facts.length > 0) {
    const block = factlessBlock(ledger);
    const text = renderWorkingMemory(trimWorkingMemory(rest, maxTokens - count(block) - 1, count, checkpoint), block);
    if (count(text) <= maxTokens) return text;
  }
  return renderWorkingMemory(trimWorkingMemory(rest, maxTokens, count, checkpoint));
}

/**
 * The rest of the working memory trimmed to `restRoom`, and the ledger block written beside it in
 * all that is left of `maxTokens`; undefined when no block fits beside it.
 */
function* besideLedger(rest: WorkingMemory, ledger: Ledger, restRoom: number, maxTokens: number, count: TextCounter, checkpoint: () => void): Generator<void, { text: string; blockTokens: number; trimmed: number } | undefined, void> {
  const trimmed = trimWorkingMemory(rest, restRoom, count, checkpoint);
  const beside = renderWorkingMemory(trimmed);
  let room = maxTokens - count(beside) - 1;
  for (let fit = 0; fit < 4 && room > 0; fit++) {
    // A turn for the event loop before each block: writing one is the longest stretch of the work.
    yield;
    const block = yield* renderLedgerBesideSteps(ledger, beside, room, count);
    if (!block) return undefined;
    const text = renderWorkingMemory(trimmed, block);
    const over = count(text) - maxTokens;
    if (over <= 0) return { text, blockTokens: count(block) + 1, trimmed: itemCount(trimmed) };
    room -= Math.max(over, 1);
  }
  return undefined;
}

/**
 * A summarizer that needs no model: it keeps, as a structured plain-text working memory, the
 * conversation's goal (its first request), the user's later requests, every tool call as
 * `name(args)`, tool errors and the assistant's conclusions, and a fact ledger of the
 * identifiers, codes, paths, URLs, emails, dates and amounts found in results and messages
 * (`ledger.ts`). Rolling: the previous summary is parsed back, new items are appended (a repeated
 * item moves to the newest end) and new facts enter the ledger (a fact seen again is one fact,
 * more recent and more referenced); then the summary is fitted to `maxSummaryTokens`, the ledger
 * getting its share of the room first (`writeSummary`). With no new messages, a previous summary
 * that fits its room comes back unchanged. Deterministic (same input, same text), no I/O; rejects with the signal's reason once it is aborted. Never returns an empty summary.
 */
export function createExtractiveSummarizer(options: ExtractiveSummarizerOptions = {}): Summarizer {
  const maxSummaryTokens = positiveInteger(options.maxSummaryTokens ?? 800, 'maxSummaryTokens', MIN_SUMMARY_TOKENS);
  const inputBudgetTokens = positiveInteger(options.inputBudgetTokens ?? 64_000, 'inputBudgetTokens');
  const ledgerShare = options.ledgerShare ?? LEDGER_SHARE;
  if (!(ledgerShare >= 0 && ledgerShare <= 1)) throw new InputError('options.ledgerShare', `must be a number between 0 and 1, got ${ledgerShare}`);
  return {
    name: 'extractive',
    reportsFacts: true,
    inputBudgetTokens,
    async summarize(request: SummarizeRequest): Promise<string> {
      const { previousSummary, messages, maxTokens } = request;
      const signal = requestSignal(request);
      const checkpoint = () => signal.throwIfAborted();
      checkpoint();
      const count = options.countTokens ?? defaultTextCounter();
      const previous = previousSummary?.trim() ? previousSummary : undefined;
      const room = options.maxSummaryTokens === undefined && maxTokens !== undefined && Number.isFinite(maxTokens) ? Math.max(MIN_SUMMARY_TOKENS, Math.floor(maxTokens)) : maxSummaryTokens;
      // Nothing new: the summary stays as it is (byte for byte) when it fits its room.
      if (previous && messages.length === 0 && count(previous) <= room) return previous;
      const memory = previous ? memoryOf(previous) : emptyMemory();
      const ledger = ledgerBuilder(previous ? ledgerOf(previous) : emptyLedger());
      // In slices, with a turn for the event loop between them: a batch of long tool results takes
      // a while to read, and a background summary must not hold up the requests being served.
      for (let at = 0; at < messages.length; at += SLICE_MESSAGES) {
        const slice = messages.slice(at, at + SLICE_MESSAGES);
        foldEntries(memory, slice, checkpoint);
        ledger.add(slice, checkpoint);
        if (at + SLICE_MESSAGES < messages.length) await yieldToLoop();
        checkpoint();
      }
      const facts = ledger.ledger();
      if (itemCount(memory) === 0 && facts.facts.length === 0) {
        addItem(memory, 'Earlier notes', `${messages.length} earlier message(s) held no request, tool call or fact to keep.`);
      }
      const summary = await writeSummaryYielding(memory, facts, room, count, ledgerShare, checkpoint);
      checkpoint();
      return summary;
    },
    shorten(summary: string, maxTokens: number): string {
      // The same rule as the summary's own limit: the ledger keeps its most recent and most
      // referenced facts in its share, each other section its newest items.
      const count = options.countTokens ?? defaultTextCounter();
      if (maxTokens < MIN_SUMMARY_TOKENS) return '';
      return writeSummary(memoryOf(summary), ledgerOf(summary), maxTokens, count, ledgerShare);
    },
  };
}
