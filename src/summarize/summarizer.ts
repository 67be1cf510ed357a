import type { TranscriptEntry } from '../formats/lens.js';

/** What a summarizer is given: the summary so far and only the messages it does not cover yet. */
export interface SummarizeRequest {
  /** The rolling summary made so far for this chat; undefined on the first run. */
  readonly previousSummary?: string;
  /** The messages to fold in, oldest first, read through the chat's lens (format-neutral). */
  readonly messages: readonly TranscriptEntry[];
  /**
   * Aborted when the job is cancelled or times out; a summarizer stops work and rejects. ctxfold
   * always passes one; a caller of `summarize()` may leave it out, which means never aborted
   * (read it with `requestSignal`).
   */
  readonly signal?: AbortSignal;
  /**
   * The room, in tokens, the summary will have in the view it is made for, when the caller knows
   * it. A summarizer whose size the user did not fix may write up to this instead of its default
   * (the extractive one does, when `maxSummaryTokens` is not set).
   */
  readonly maxTokens?: number;
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
  /**
   * Optional: when set, the rolling driver (`summarizeRolling`) checks every summary this
   * summarizer returns against the fact ledger of what it was given (the previous summary and the
   * new messages, `ledger.ts`) and appends, in at most this many tokens, the identifiers, codes,
   * dates and amounts the summary left out, most recent and most referenced first. Model-written
   * summarizers set it; the extractive one writes its own ledger and leaves it unset.
   */
  readonly factCheckTokens?: number;
  /**
   * Optional: true when every summary it writes ends its facts with the ledger's count line (how
   * many facts it kept of how many it saw), as the extractive one does. A fold is widened, its
   * summary given more room, only on what that line says (or `factCheckTokens`'s appended block).
   * Such a summarizer's work is local, so a background fold may also give it the covered messages
   * again (no `previousSummary`) while they are few, and write a longer summary for the views
   * right after the fold (`ChatState.compactTokens`).
   */
  readonly reportsFacts?: boolean;
}

/** The request's signal, or one that never aborts when the caller gave none. */
export function requestSignal(request: { readonly signal?: AbortSignal }): AbortSignal {
  return request.signal ?? new AbortController().signal;
}

/** True when a summarizer's summaries say how many facts they left out (`reportsFacts`, or checked with `factCheckTokens`). */
export function reportsFacts(summarizer: Summarizer): boolean {
  return summarizer.reportsFacts === true || summarizer.factCheckTokens !== undefined;
}
