/**
 * A lens reads one provider's message shape for the core. The core never converts a message it
 * keeps: everything it needs (role, calls opened, results answered, text) comes through a lens,
 * and what goes out is the caller's own objects.
 */

/** The names of the wire formats a lens exists (or is planned) for. */
export type FormatName =
  | 'openai'
  | 'openai-responses'
  | 'anthropic'
  | 'gemini'
  | 'ai-sdk'
  | 'qwen-agent'
  | 'hermes';

/**
 * What a message is to the grouping pass.
 * - `system`: instructions (system / developer); pinned, never summarized away.
 * - `user`: a human turn (may also carry results, as Anthropic's user messages do).
 * - `assistant`: a model turn (may open calls).
 * - `result`: a message that only carries tool results (OpenAI `tool`, legacy `function`).
 * - `other`: anything the lens does not recognise; a group of one.
 */
export type MessageKind = 'system' | 'user' | 'assistant' | 'result' | 'other';

/** One tool call opened by a message. `id` is absent where the format pairs by position. */
export interface CallRef {
  readonly id?: string;
  readonly name: string;
  /** Arguments as the provider bills them: the JSON text (or its canonical serialization). */
  readonly arguments: string;
}

/** One tool result carried by a message. `id` is absent where the format pairs by position. */
export interface ResultRef {
  readonly id?: string;
  readonly name?: string;
  /**
   * A malformed id as written (a number where the format wants a string), as text. Pairing never
   * reads it; repair may use it to re-attach the result to the call with that id.
   */
  readonly idHint?: string;
  /** The result's text as sent to the model. */
  readonly content: string;
}

/**
 * A format-neutral reading of a message, for summarizers and token counters. Built by a lens;
 * the message itself is never changed.
 */
export interface TranscriptEntry {
  readonly role: 'system' | 'user' | 'assistant' | 'tool' | 'other';
  /** Plain text content (text parts joined), without the calls and results. */
  readonly text: string;
  readonly calls: readonly CallRef[];
  readonly results: readonly ResultRef[];
}

/**
 * Reads messages of one wire format. Every method is pure and must not mutate its argument.
 * Formats whose rules differ set the flags below instead of re-implementing the grouping pass.
 */
export interface MessageLens<M = unknown> {
  readonly format: FormatName;
  /** What the message is to the grouping pass. */
  kind(message: M): MessageKind;
  /** Calls this message opens, in order. Empty when it opens none. */
  calls(message: M): readonly CallRef[];
  /** Results this message carries, in order. Empty when it carries none. */
  results(message: M): readonly ResultRef[];
  /** True when the message carries text a human typed (not only tool results). */
  hasUserText(message: M): boolean;
  /** The message's own id where the format has one (Responses items, AI SDK ids, Anthropic ids). */
  ownId(message: M): string | undefined;
  /** A format-neutral reading for summarizers and counters. */
  transcript(message: M): TranscriptEntry;
  /**
   * Optional fast path for token counters: the same sum a counter makes from `transcript` (each
   * text, call name, arguments and result through `countText`, plus `callOverhead` per call and
   * one per named result), without building the transcript. Must agree with it exactly.
   */
  billedTextTokens?(message: M, countText: (text: string) => number, callOverhead: number): number;
  /** Tokens the provider bills for the message's non-text parts (images), by its published rule; 0 when none. */
  mediaTokens?(message: M): number;
  /**
   * True when this message must travel with the one after it (Responses `reasoning` items are
   * glued to the item they precede): the grouping pass puts both in one group.
   */
  gluedToNext(message: M, next: M): boolean;
  /**
   * True when consecutive assistant messages that each open calls form one parallel turn
   * (Qwen-Agent, Responses items). False where that is invalid (OpenAI Chat).
   */
  readonly splitParallelCalls: boolean;
  /** Builds the message that carries a summary of dropped history, in this format. */
  summaryMessage(text: string, role: 'system' | 'user'): M;
  /**
   * A message, in this format's shape, that answers `call` with `text` (an error result, added by
   * repair for a call whose result is missing). It must pair with `call` under this lens.
   */
  missingResult(call: CallRef, text: string): M;
  /**
   * A copy of `message` whose result at `slot` answers `call` in this format's shape (a `tool`
   * message with the call's id, for a result that had none, a malformed one, or the legacy
   * `function` role). Everything else in the message is kept.
   */
  rekeyResult(message: M, slot: number, call: CallRef): M;
  /**
   * Returns a copy of a result-carrying message whose result content is replaced by
   * `placeholder`, keeping ids and shape so the call/result pair stays valid.
   */
  collapseResults(message: M, placeholder: string): M;
  /**
   * Why `value` is not a message of this format, as a field (relative to the message, e.g.
   * `.role`) and the rule it breaks; undefined when it is one. Used for auto-detection and for
   * input errors that name the field.
   */
  problem(value: unknown): { readonly field: string; readonly rule: string } | undefined;
}
