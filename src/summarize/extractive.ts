import type { TranscriptEntry } from '../formats/lens.js';
import type { TextCounter } from '../tokens/counter.js';
import { InputError } from '../errors.js';
import { callText } from './call-text.js';
import { defaultTextCounter } from './default-counter.js';
import { factsFromContent, type Fact } from './facts.js';
import { conclusionOf, outcomesOf, requestOf } from './sentences.js';
import type { SummarizeRequest, Summarizer } from './summarizer.js';
import { errorOf } from './tool-errors.js';
import {
  addItem, emptyMemory, itemCount, parseWorkingMemory, renderWorkingMemory, trimWorkingMemory, type WorkingMemory,
} from './working-memory.js';

/** Options of `createExtractiveSummarizer`. */
export interface ExtractiveSummarizerOptions {
  /** Most tokens a summary may have; the oldest items of each section go first. Default 800, at least 32. */
  readonly maxSummaryTokens?: number;
  /** Most tokens one call is given by the rolling driver (previous summary + messages). Default 16 000. */
  readonly inputBudgetTokens?: number;
  /** Token counter for the summary budget. Default: the shared tiktoken counter (`o200k_base`). */
  readonly countTokens?: TextCounter;
}

/** Facts taken from one message at most: a result listing fifty flights gives its first ones. */
export const FACTS_PER_MESSAGE = 24;

/** Smallest accepted `maxSummaryTokens`: the title and one short item must fit. */
export const MIN_SUMMARY_TOKENS = 32;

function positiveInteger(value: number, name: string, min = 1): number {
  if (!Number.isInteger(value) || value < min) throw new InputError(`options.${name}`, `must be an integer >= ${min}, got ${value}`);
  return value;
}

function factLine(fact: Fact): string {
  return fact.label ? `${fact.label}: ${fact.value}` : fact.value;
}

/**
 * Folds entries, oldest first, into the working memory: what each user asked, each tool call
 * with its arguments, errors tool results reported, identifiers found in results and messages,
 * and what the assistant concluded. System messages are skipped (they are pinned, never folded).
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
    if (text) for (const fact of factsFromContent(text, FACTS_PER_MESSAGE)) addItem(memory, 'Facts', factLine(fact));
    if (entry.role === 'assistant' && text) addItem(memory, 'Conclusions', entry.calls.length > 0 ? outcomesOf(text) : conclusionOf(text));
    for (const call of entry.calls) addItem(memory, 'Tool calls', callText(call));
    for (const result of entry.results) {
      const name = result.name;
      const error = errorOf(result.content);
      if (error) addItem(memory, 'Errors', name ? `${name}: ${error}` : error);
      for (const fact of factsFromContent(result.content, FACTS_PER_MESSAGE)) addItem(memory, 'Facts', factLine(fact));
    }
  }
}

/**
 * A summarizer that needs no model: it keeps, as a structured plain-text working memory, the
 * conversation's goal (its first request), the user's later requests, every tool call as `name(args)`, identifiers, amounts, dates and names found
 * in results and answers, tool errors and the assistant's conclusions. Rolling: the previous
 * summary is parsed back and new items are appended (a repeated item moves to the newest end),
 * then the oldest items are dropped until the summary fits `maxSummaryTokens`. Deterministic
 * (same input, same text), no I/O; rejects with the signal's reason once it is aborted. Never
 * returns an empty summary.
 */
export function createExtractiveSummarizer(options: ExtractiveSummarizerOptions = {}): Summarizer {
  const maxSummaryTokens = positiveInteger(options.maxSummaryTokens ?? 800, 'maxSummaryTokens', MIN_SUMMARY_TOKENS);
  const inputBudgetTokens = positiveInteger(options.inputBudgetTokens ?? 16_000, 'inputBudgetTokens');
  return {
    name: 'extractive',
    inputBudgetTokens,
    async summarize({ previousSummary, messages, signal }: SummarizeRequest): Promise<string> {
      const checkpoint = () => signal.throwIfAborted();
      checkpoint();
      const count = options.countTokens ?? defaultTextCounter();
      const memory = previousSummary?.trim() ? parseWorkingMemory(previousSummary) : emptyMemory();
      foldEntries(memory, messages, checkpoint);
      if (itemCount(memory) === 0) {
        addItem(memory, 'Earlier notes', `${messages.length} earlier message(s) held no request, tool call or fact to keep.`);
      }
      const summary = renderWorkingMemory(trimWorkingMemory(memory, maxSummaryTokens, count, checkpoint));
      checkpoint();
      return summary;
    },
    shorten(summary: string, maxTokens: number): string {
      // The same rule as the summary's own limit: the oldest items of each section go first.
      const count = options.countTokens ?? defaultTextCounter();
      if (maxTokens < MIN_SUMMARY_TOKENS) return '';
      return renderWorkingMemory(trimWorkingMemory(parseWorkingMemory(summary), maxTokens, count));
    },
  };
}
