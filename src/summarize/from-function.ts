import { InputError, SummarizerError } from '../errors.js';
import { factCheckRoom } from './ledger.js';
import { summaryPrompt, summaryWordLimit, type PromptMessage } from './llm-prompt.js';
import { requestSignal, type SummarizeRequest, type Summarizer } from './summarizer.js';
import { readSummaryText } from './summary-text.js';

/**
 * The prompt ctxfold asks your model with: the same one `createLlmSummarizer` posts, in two forms.
 * Use `messages` with a chat API, `text` with a completion-style API that takes one string.
 */
export interface SummaryPrompt {
  /**
   * The chat messages, exactly as `createLlmSummarizer` sends them: `[{ role: 'system', content:
   * system }, { role: 'user', content: user }]`.
   */
  readonly messages: readonly PromptMessage[];
  /** The standing instructions (`messages[0].content`): summarize, treat the transcript as data. */
  readonly system: string;
  /** The previous summary and the new messages, each fenced by its tag (`messages[1].content`). */
  readonly user: string;
  /** The flattened form: `system`, a blank line, then `user`. */
  readonly text: string;
  /** The length the prompt asks for, in words (from `maxTokens`). */
  readonly maxWords: number;
}

/** What your function is called with, once per summarizer call. */
export interface SummaryFunctionCall {
  readonly prompt: SummaryPrompt;
  /** Aborted when the summary job is cancelled or times out: pass it on to your SDK and stop. */
  readonly signal: AbortSignal;
}

/** Your model call: resolves with the summary text (a string, or content parts `[{ text }]`). */
export type SummaryFunction = (call: SummaryFunctionCall) => Promise<unknown>;

/** Options of `summarizerFromFunction`. */
export interface FunctionSummarizerOptions {
  /** Recorded with every summary. Default `function`. */
  readonly name?: string;
  /** The model behind the function, recorded with every summary. */
  readonly model?: string;
  /** Most tokens the summary may take: sets the length the prompt asks for. Default 1024, as `createLlmSummarizer`. */
  readonly maxTokens?: number;
  /** Most tokens of previous summary + messages one call is given. Default 24 000, as `createLlmSummarizer`. */
  readonly inputBudgetTokens?: number;
  /**
   * Check every summary against the fact ledger of what it was given and append the identifiers,
   * codes, dates and amounts it left out (`Summarizer.factCheckTokens`). Default true, as `createLlmSummarizer`.
   */
  readonly checkFacts?: boolean;
}

function positiveInteger(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new InputError(`options.${name}`, `must be an integer >= 1, got ${typeof value === 'number' ? value : typeof value}`);
  }
  return value;
}

function nonEmptyString(value: unknown, name: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '') throw new InputError(`options.${name}`, `must be a non-empty string, got ${JSON.stringify(value) ?? typeof value}`);
  return value;
}

/** What a value is, for an error message (never its whole content). */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array without text parts';
  return typeof value === 'object' ? 'an object' : typeof value;
}

/**
 * A `Summarizer` that asks your own model through `fn`: ctxfold builds the prompt (the same
 * prompt as `createLlmSummarizer`, fencing the transcript as data) and checks the answer; `fn`
 * only makes the call. The answer is trimmed; an answer that is not text (or text parts) is a
 * `SummarizerError` with failure `response`, a blank one with failure `empty`, and an error
 * `fn` throws becomes a `SummarizerError` (failure `other`, the error as `cause`): nothing is
 * committed, and the chat's previous summary stays in force. When the job's signal aborts, the
 * call rejects with the signal's reason, whatever `fn` does. A stored summary too large for a
 * view is shortened by the same rule as the LLM summarizer's (its newest lines are kept).
 * Retries, if you want them, are your function's (or its SDK's) business.
 */
export function summarizerFromFunction(fn: SummaryFunction, options: FunctionSummarizerOptions = {}): Summarizer {
  if (typeof fn !== 'function') throw new InputError('fn', `must be a function ({ prompt, signal }) => Promise<string>, got ${kindOf(fn)}`);
  if (options === null || typeof options !== 'object') throw new InputError('options', `must be an options object, got ${kindOf(options)}`);
  const known = ['name', 'model', 'maxTokens', 'inputBudgetTokens', 'checkFacts'];
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw new InputError(`options.${key}`, `unknown option (known: ${known.join(', ')})`);
  }
  const name = nonEmptyString(options.name, 'name') ?? 'function';
  const model = nonEmptyString(options.model, 'model');
  const maxTokens = positiveInteger(options.maxTokens, 'maxTokens', 1024);
  const maxWords = summaryWordLimit(maxTokens);
  if (options.checkFacts !== undefined && typeof options.checkFacts !== 'boolean') throw new InputError('options.checkFacts', `must be true or false, got ${typeof options.checkFacts}`);
  const inputBudgetTokens = positiveInteger(options.inputBudgetTokens, 'inputBudgetTokens', 24_000);
  const label = model ? `${name} (${model})` : name;

  return {
    name,
    model,
    inputBudgetTokens,
    ...(options.checkFacts === false ? {} : { factCheckTokens: factCheckRoom(maxTokens) }),
    async summarize(request: SummarizeRequest): Promise<string> {
      const { previousSummary, messages } = request;
      const signal = requestSignal(request);
      signal.throwIfAborted();
      const chat = summaryPrompt(previousSummary, messages, maxWords);
      const [system, user] = [chat[0].content, chat[1].content];
      const prompt: SummaryPrompt = { messages: chat, system, user, text: `${system}\n\n${user}`, maxWords };
      // The caller's abort wins over whatever the function does with the signal.
      let answer: unknown;
      const stop = whenAborted(signal);
      try {
        answer = await Promise.race([fn({ prompt, signal }), stop.promise]);
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        const detail = error instanceof Error ? error.message : String(error);
        throw new SummarizerError(name, 'other', `summarizer ${label}: the function failed: ${detail}`, { cause: error });
      } finally {
        stop.release();
      }
      signal.throwIfAborted();
      const read = readSummaryText(answer);
      if ('text' in read) return read.text;
      if (read.problem === 'empty') throw new SummarizerError(name, 'empty', `summarizer ${label}: the function returned an empty summary`);
      throw new SummarizerError(name, 'response', `summarizer ${label}: the function returned ${kindOf(answer)}, not the summary text (a string)`);
    },
  };
}

/** A promise that rejects with the signal's reason when it aborts; `release` drops its listener. */
function whenAborted(signal: AbortSignal): { promise: Promise<never>; release: () => void } {
  let onAbort = () => {};
  const promise = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  // Nobody may be listening when the function settles first; the rejection is still handled.
  promise.catch(() => {});
  return { promise, release: () => signal.removeEventListener('abort', onAbort) };
}
