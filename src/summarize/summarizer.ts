import type { TranscriptEntry } from '../formats/lens.js';

/** What a summarizer is given: the summary so far and only the messages it does not cover yet. */
export interface SummarizeRequest {
  /** The rolling summary made so far for this chat; undefined on the first run. */
  readonly previousSummary?: string;
  /** The messages to fold in, oldest first, read through the chat's lens (format-neutral). */
  readonly messages: readonly TranscriptEntry[];
  /** Aborted when the job is cancelled or times out; a summarizer stops work and rejects. */
  readonly signal: AbortSignal;
}

/**
 * Turns the previous summary plus new messages into a new summary. Must not return an empty
 * string for a successful run (an empty result is treated as a failure and never committed).
 */
export interface Summarizer {
  /** Short name recorded with every summary (`extractive`, `llm`). */
  readonly name: string;
  /** Model the summary came from, where there is one. */
  readonly model?: string;
  /**
   * Most tokens one call may be given (previous summary + messages). Batches over it are split
   * by the rolling driver and summarized in several steps, oldest first.
   */
  readonly inputBudgetTokens: number;
  summarize(request: SummarizeRequest): Promise<string>;
  /**
   * Optional: shortens one of this summarizer's summaries to at most `maxTokens`, keeping what it
   * holds most worth keeping (its newest facts, for the extractive one), deterministically. Used
   * when a stored summary does not fit the room a view has; without it, the newest lines are kept.
   */
  shorten?(summary: string, maxTokens: number): string;
}
