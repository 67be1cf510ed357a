import { CtxfoldError, InputError, SummarizerError, type CtxfoldErrorCode, type SummarizerFailure } from '../errors.js';
import { abortableSleep, backoffDelayMs, retryAfterMs } from './backoff.js';
import { factCheckRoom } from './ledger.js';
import { summaryPrompt, summaryWordLimit } from './llm-prompt.js';
import { readSummaryText } from './summary-text.js';
import { requestSignal, type SummarizeRequest, type Summarizer } from './summarizer.js';
import { truncateMiddle } from './truncate-middle.js';

/** Options of `createLlmSummarizer`. Nothing is read from the environment here. */
export interface LlmSummarizerOptions {
  /** OpenAI-compatible API root, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`. */
  readonly baseURL: string;
  /** Sent as `Authorization: Bearer <apiKey>` when given. */
  readonly apiKey?: string;
  readonly model: string;
  /** Default 0: the same input should give the same summary as far as the server allows. */
  readonly temperature?: number;
  /** `max_tokens` of the summary. Default 1024. */
  readonly maxTokens?: number;
  /** Limit of one attempt, answer body included. Default 60 000 ms. */
  readonly timeoutMs?: number;
  /**
   * Retry a refused connection (nothing listening) like other network errors. Default true: a
   * server that restarts refuses for a moment. The command line turns it off, so a run against a
   * dead endpoint fails at once instead of waiting out the retries on every record.
   */
  readonly retryRefused?: boolean;
  /** Retries after the first attempt (network errors, timeouts, 408, 429, 5xx). Default 3. */
  readonly retries?: number;
  /** First backoff delay; doubles with each retry, with jitter. Default 500 ms. */
  readonly retryBaseMs?: number;
  /** Most tokens of previous summary + messages one call is given. Default 24 000. */
  readonly inputBudgetTokens?: number;
  /** Fetch implementation. Default: the global `fetch`. */
  readonly fetch?: typeof fetch;
  /** Extra request headers (organisation, project, gateway keys...). */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Waits `ms` before a retry (the backoff delay, or what `retry-after` asked for), and rejects
   * with `signal.reason` as soon as the caller's signal aborts. Default: a real timer
   * (`abortableSleep`). Tests inject one to see the delays without waiting them.
   */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /**
   * Check every summary against the fact ledger of what it was given and append the identifiers,
   * codes, dates and amounts it left out (`Summarizer.factCheckTokens`, done by the rolling
   * driver). Default true.
   */
  readonly checkFacts?: boolean;
}

/** Why an attempt failed: the server's status, the network, the time limit, or an unreadable answer. */
export type LlmFailureKind = 'status' | 'network' | 'timeout' | 'garbage';

/**
 * A failed summary request. `status` is the HTTP status when the server answered; `attempts`
 * how many requests were made; `retryable` whether the last failure was of a retryable kind.
 */
export class LlmSummarizerError extends SummarizerError {
  static override readonly kind: string = 'LlmSummarizerError';
  /** The LLM summarizer's own reading of the failure (`failure` is the shared one). */
  readonly reason: LlmFailureKind;
  readonly attempts: number;
  readonly retryable: boolean;
  constructor(message: string, details: { kind: LlmFailureKind; status?: number; attempts: number; retryable: boolean; cause?: unknown }) {
    super('llm', FAILURE_OF[details.kind], message, { cause: details.cause, status: details.status });
    this.reason = details.kind;
    this.attempts = details.attempts;
    this.retryable = details.retryable;
  }
}

const FAILURE_OF: Record<LlmFailureKind, SummarizerFailure> = { status: 'http', network: 'connection', timeout: 'timeout', garbage: 'response' };

/** One failed attempt, before the retry decision. */
interface AttemptFailure {
  readonly kind: LlmFailureKind;
  readonly message: string;
  readonly retryable: boolean;
  readonly status?: number;
  readonly waitMs?: number;
  readonly cause?: unknown;
}

/** One failed attempt, caught by the retry loop (callers get an `LlmSummarizerError`). */
class AttemptError extends CtxfoldError {
  static override readonly kind: string = 'LlmSummarizerAttemptError';
  static override readonly code: CtxfoldErrorCode = 'CTXFOLD_SUMMARY_ATTEMPT';
  constructor(readonly failure: AttemptFailure) {
    super(failure.message, { cause: failure.cause });
  }
}

function nonNegative(value: number, name: string): number {
  if (!Number.isFinite(value) || value < 0) throw new InputError(`options.${name}`, `must be a finite number >= 0, got ${value}`);
  return value;
}

function nonNegativeInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 0) throw new InputError(`options.${name}`, `must be an integer >= 0, got ${value}`);
  return value;
}

function positiveInteger(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new InputError(`options.${name}`, `must be an integer >= 1, got ${value}`);
  return value;
}

/** The error message a server put in its body (`{error: {message}}`, `{error}`, `{message}`, `{detail}`), else the body's start. */
function bodyErrorMessage(body: string): string {
  try {
    const data = JSON.parse(body) as { error?: unknown; message?: unknown; detail?: unknown };
    const error = data.error as { message?: unknown } | string | undefined;
    const message = typeof error === 'string' ? error : error?.message ?? data.message ?? data.detail;
    if (typeof message === 'string' && message.trim()) return message.trim();
  } catch {
    // Not JSON: show the text itself.
  }
  const text = body.replace(/\s+/g, ' ').trim();
  return text ? truncateMiddle(text, 300) : '(empty body)';
}

/** The summary text of a Chat Completions answer, or the reason it has none. */
function contentOf(body: string): { content: string } | { problem: string } {
  let data: unknown;
  try {
    data = JSON.parse(body);
  } catch {
    return { problem: `the answer is not JSON (starts with ${JSON.stringify(body.slice(0, 60))})` };
  }
  const choice = (data as { choices?: Array<{ message?: { content?: unknown } }> } | null)?.choices?.[0];
  // Some compatible servers answer with content parts; the reading is shared with summarizerFromFunction.
  const read = readSummaryText(choice?.message?.content);
  if ('text' in read) return { content: read.text };
  return { problem: read.problem === 'missing' ? 'the answer has no choices[0].message.content' : 'the answer\'s choices[0].message.content is empty' };
}

/**
 * A summarizer that asks an OpenAI-compatible Chat Completions endpoint for the summary. The
 * prompt fences the transcript as data (never instructions) and asks for a structured working
 * memory merged with the previous summary; tool calls appear with names and arguments, results
 * with their content (long ones cut in the middle).
 *
 * Failures: network errors, per-attempt timeouts, 408, 429 (waiting `retry-after` when given,
 * capped) and 5xx are retried with exponential backoff and jitter; other 4xx are not, and the
 * error names the status and the server's message. An unreadable answer (not JSON, no content,
 * blank content) is retried once at most: a server that answers garbage twice is broken, not
 * busy. The caller's abort stops everything at once, never retried; it rejects with the
 * signal's reason. Never resolves with an empty summary.
 */
export function createLlmSummarizer(options: LlmSummarizerOptions): Summarizer {
  if (typeof options.baseURL !== 'string' || options.baseURL.trim() === '') throw new InputError('options.baseURL', 'must be a non-empty URL such as http://127.0.0.1:8080/v1');
  if (typeof options.model !== 'string' || options.model.trim() === '') throw new InputError('options.model', 'must name the model that writes summaries');
  const url = `${options.baseURL.trim().replace(/\/+$/, '')}/chat/completions`;
  const retryRefused = options.retryRefused ?? true;
  const temperature = nonNegative(options.temperature ?? 0, 'temperature');
  const maxTokens = positiveInteger(options.maxTokens ?? 1024, 'maxTokens');
  const timeoutMs = positiveInteger(options.timeoutMs ?? 60_000, 'timeoutMs');
  const retries = nonNegativeInteger(options.retries ?? 3, 'retries');
  const retryBaseMs = nonNegative(options.retryBaseMs ?? 500, 'retryBaseMs');
  const inputBudgetTokens = positiveInteger(options.inputBudgetTokens ?? 24_000, 'inputBudgetTokens');
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', ...options.headers };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  const maxWords = summaryWordLimit(maxTokens);

  const attempt = async (body: string, signal: AbortSignal): Promise<string> => {
    const attemptSignal = AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]);
    const fail = (error: unknown): never => {
      if (signal.aborted) throw signal.reason;
      if (attemptSignal.aborted) {
        throw new AttemptError({ kind: 'timeout', message: `no complete answer within ${timeoutMs} ms`, retryable: true, cause: error });
      }
      const reason = (error as { cause?: { code?: string; message?: string } })?.cause;
      const detail = reason?.code ?? reason?.message ?? (error as Error)?.message ?? String(error);
      const refused = reason?.code === 'ECONNREFUSED';
      throw new AttemptError({ kind: 'network', message: `request failed (${detail})`, retryable: !refused || retryRefused, cause: error });
    };
    let response: Response;
    let text: string;
    try {
      response = await (options.fetch ?? fetch)(url, { method: 'POST', headers, body, signal: attemptSignal });
      text = await response.text();
    } catch (error) {
      return fail(error);
    }
    if (!response.ok) {
      const status = response.status;
      const retryable = status === 408 || status === 429 || status >= 500;
      throw new AttemptError({
        kind: 'status',
        status,
        retryable,
        waitMs: status === 429 || status === 503 ? retryAfterMs(response.headers.get('retry-after')) : undefined,
        message: `answered ${status}${response.statusText ? ` ${response.statusText}` : ''}: ${bodyErrorMessage(text)}`,
      });
    }
    const read = contentOf(text);
    if ('problem' in read) throw new AttemptError({ kind: 'garbage', status: response.status, retryable: true, message: read.problem });
    return read.content;
  };

  return {
    name: 'llm',
    model: options.model,
    inputBudgetTokens,
    ...(options.checkFacts === false ? {} : { factCheckTokens: factCheckRoom(maxTokens) }),
    async summarize(request: SummarizeRequest): Promise<string> {
      const { previousSummary, messages } = request;
      const signal = requestSignal(request);
      signal.throwIfAborted();
      const body = JSON.stringify({
        model: options.model,
        messages: summaryPrompt(previousSummary, messages, maxWords),
        temperature,
        max_tokens: maxTokens,
        stream: false,
      });
      let garbageRetried = false;
      for (let attempts = 1; ; attempts++) {
        let failure: AttemptFailure;
        try {
          return await attempt(body, signal);
        } catch (error) {
          if (!(error instanceof AttemptError)) throw error;
          failure = error.failure;
        }
        const retryGarbage = failure.kind !== 'garbage' || !garbageRetried;
        if (!failure.retryable || !retryGarbage || attempts > retries) {
          const tail = attempts > 1 ? ` (after ${attempts} attempts)` : '';
          throw new LlmSummarizerError(`LLM summarizer (${options.model}): POST ${url}: ${failure.message}${tail}`, {
            kind: failure.kind, status: failure.status, attempts, retryable: failure.retryable, cause: failure.cause,
          });
        }
        if (failure.kind === 'garbage') garbageRetried = true;
        await (options.sleep ?? abortableSleep)(failure.waitMs ?? backoffDelayMs(attempts - 1, retryBaseMs), signal);
      }
    },
  };
}
