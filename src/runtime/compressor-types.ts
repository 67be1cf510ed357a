/**
 * The types of `createCompressor`: its options, the request and response facts an adapter passes,
 * its events and stats, and the `Compressor` it returns. Types only (compressor.ts re-exports them).
 */
import type { RepairAction } from '../core/repair.js';
import type { StateStore } from '../store/state.js';
import type { Summarizer } from '../summarize/summarizer.js';
import type { ChatIdCarrier } from './chat-id.js';
import type { CompressResult } from './compress.js';
import type { CalibrationSample, CalibrationStats } from './calibration.js';
import type { HistoryCache } from './history-cache.js';
import type { CompressOptions } from './options.js';
import type { FormatName } from '../formats/lens.js';
import type { TriggerOutcome } from './scheduler.js';
import type { SummarySkippedEvent } from './lease-job.js';
import type { SummaryDoneEvent, SummaryStaleEvent, SummaryStartEvent } from './summary-job.js';
import type { RecallOptions } from '../recall/options.js';
import type { BodyHistory } from './body-history.js';
import type { JobOffload } from './job-offload.js';
import type { RecallAnswer } from '../recall/resolve.js';
import type { ReadResponse } from '../recall/wrap-reader.js';

/** Options of `createCompressor`: planning options plus where state lives and who summarizes. */
export interface CompressorOptions<Req = ChatRequest> extends Omit<CompressOptions, 'summary' | 'historyCache' | 'chatId' | 'tools' | 'responseFormat' | 'instructions'> {
  /** Where summaries are kept. Default: a `MemoryStore` (use `SqliteStore` to survive restarts). */
  store?: StateStore;
  /** Who writes summaries. Default: the extractive summarizer (no network); `null` disables summaries. */
  summarizer?: Summarizer | null;
  /** Summary jobs running at once across chats. Default 2. */
  concurrency?: number;
  /**
   * Where summary jobs on a history given as body bytes (`BodyHistory`, to `afterResponse`) fold:
   * a worker thread (the proxy's fold threads). Jobs on messages fold here as always.
   */
  offload?: JobOffload;
  /** A summary job is aborted after this long. Default 120 000 ms. */
  jobTimeoutMs?: number;
  /**
   * Summary jobs waiting for a concurrency slot, at most (jobs running and a busy chat's
   * follow-up are not counted). Default 16 per slot (`16 * concurrency`: 32), about what a 30 s
   * shutdown grace drains at 2,000-message chats; 0 queues none. When the
   * queue is full a new trigger is refused: the request is served as always (its view cut to the
   * budget), no job is queued, and `summary:skipped` (`reason: 'backlog-full'`) says so; the
   * chat's next request triggers again. See docs/shutdown.md.
   */
  maxQueuedJobs?: number;
  /**
   * `silent` (default): a failed summary is reported through `summary:failed` only. `raise`: also
   * makes the next `drain()` reject with the failures. Requests are served either way.
   */
  summaryFailMode?: 'silent' | 'raise';
  /** Reads the chat id of a request. Default: `chatId`, `metadata.chat_id`, else a fingerprint of its opening. */
  chatId?: (request: Req) => string | undefined;
  /** Where recent histories are remembered per chat (bounded). Default: a new `createHistoryCache()`. */
  historyCache?: HistoryCache;
  /**
   * Scale the budget by what providers billed: once three responses for a model reported fewer
   * input tokens estimated than billed, `maxContextTokens` for that model is multiplied by the mean
   * ratio (never raised). Default false: usage is still read and reported (`stats().calibration`).
   */
  calibrate?: boolean;
  /**
   * Recall (off by default): the store keeps the original messages each summary replaces (it must
   * keep originals: `MemoryStore`, `SqliteStore`), the summary tells the model their numbers, and
   * `compress` adds the `ctxfold_recall` tool to the request's tools (`result.tools`, counted in
   * the budget). `compressor.recall.answer(chatId, args)` answers a call; the OpenAI adapter
   * answers them itself. `{ maxTokens }` bounds one answer (default 2000, at most 1/8 of the
   * window), `{ rounds }` the calls an adapter answers per request (default 3). See docs/recall.md.
   */
  recall?: boolean | RecallOptions;
}

/** Recall as a compressor with `recall` on offers it: its settings and the resolver on its store. */
export interface CompressorRecall {
  /** Tokens one answer takes at most. */
  readonly maxTokens: number;
  /** Recall calls an adapter answers per application request before it returns the response. */
  readonly rounds: number;
  /**
   * Answers one `ctxfold_recall` call of a chat (`resolveRecall` on this compressor's store and
   * counter) in at most `maxTokens` (and never more than `bound.maxTokens`, at least 1); never
   * throws for bad arguments.
   */
  answer(chatId: string, args: unknown, bound?: { readonly maxTokens?: number }): Promise<RecallAnswer>;
}

/** Options of `wrap`. */
export interface WrapOptions<Res> {
  /**
   * With `recall` on: how to read the handler's response (`'openai'`, `'openai-responses'`,
   * `'anthropic'`, or `{ format, read }`), so that `wrap` answers `ctxfold_recall` calls itself and calls the handler
   * again (at most `recall.rounds` times): the application gets the last response. A response that
   * mixes recall calls with the application's is returned without the recall calls when read as is
   * (a format name), as it came with `{ format, read }`. Without it (or with recall off), `wrap`
   * returns the first response and the application answers with `compressor.recall.answer`.
   */
  readonly readResponse?: ReadResponse<Res>;
}

/** Fields of a request that change what fits: the reply's reserve, tool definitions, a response schema. */
export interface RequestExtras {
  readonly model?: unknown;
  /** Wire format of this request's messages, when the caller knows it (an adapter per endpoint); default: the compressor's `format`. */
  readonly format?: FormatName;
  /** Instructions outside the list (Anthropic `system`, Responses `instructions`): counted into the request. */
  readonly system?: unknown;
  readonly instructions?: unknown;
  readonly max_tokens?: unknown;
  readonly max_completion_tokens?: unknown;
  readonly max_output_tokens?: unknown;
  readonly tools?: unknown;
  readonly response_format?: unknown;
  /** `false`: no recall tool or note for this request (an adapter that cannot answer recall calls on this path); default: the compressor's `recall`. */
  readonly recall?: boolean;
}

/** What an adapter read from the model's response (all optional). */
export interface ResponseFacts {
  /** The input tokens the provider billed for the view (`usage.prompt_tokens`, `usage.inputTokens`, ...). */
  readonly billedInputTokens?: number;
  /** The model that answered, for per-model calibration. */
  readonly model?: string;
}

/** The request shape `wrap` understands: anything with `messages` (other fields pass through). */
export interface ChatRequest<M = unknown> extends ChatIdCarrier {
  readonly messages: M[];
}

/** Events and their payloads. */
export interface CompressorEvents {
  compressed: { readonly chatId: string; readonly report: CompressResult<unknown>['report'] };
  /**
   * A request's history was repaired before it was planned (an orphan result removed, a missing
   * one added, a call id renamed, ...): what was done, indexes in the history as it came. Emitted
   * before `compressed`, only when something was repaired; the same list is `report.repaired`.
   */
  repair: { readonly chatId: string; readonly actions: readonly RepairAction[] };
  'summary:start': SummaryStartEvent;
  'summary:done': SummaryDoneEvent;
  'summary:failed': { readonly chatId: string; readonly error: unknown };
  'summary:stale': SummaryStaleEvent;
  /**
   * `close()` gave up a job: `running`, still running when the grace ran out, so it was aborted and
   * nothing of it is ever committed; `waiting`, queued or a chat's follow-up, never started. The
   * chat keeps the summary it had (its history is intact); the next process summarizes it again.
   */
  'summary:abandoned': { readonly chatId: string; readonly stage: 'running' | 'waiting' };
  /**
   * A job was not run: another process holds the chat's lease (`leased-elsewhere`, stores with
   * leases such as `RedisStore`), the chat's last jobs failed (`failing`), or `maxQueuedJobs` jobs
   * were already queued (`backlog-full`, with `queued`). The chat keeps its summary; its next trigger asks again.
   */
  'summary:skipped': SummarySkippedEvent;
  /** A response carried the provider's input token count: ctxfold's estimate against it. */
  calibration: CalibrationSample;
  /** Something the operator should know: a request without a chat id (once), a store that failed. */
  warning: { readonly code: string; readonly message: string; readonly chatId?: string; readonly error?: unknown };
}

/** What a compressor has counted since it was created. */
export interface CompressorStats {
  /** Requests served without their stored summary because the store failed. */
  readonly storeFailures: number;
  readonly summariesStarted: number;
  readonly summariesDone: number;
  readonly summariesFailed: number;
  readonly summariesStale: number;
  /** Jobs not run (`summary:skipped`): the chat's lease held elsewhere, its jobs failing, or the queue full. */
  readonly summariesSkipped: number;
  /** Responses whose usage was read, and per model the mean ratio of ctxfold's estimate to the billed input tokens. */
  readonly calibration: CalibrationStats;
  /** Summary jobs right now, for a queue-depth gauge (absent on a stand-in that has no scheduler yet). */
  readonly jobs?: CompressorJobStats;
}

/**
 * Summary jobs of one compressor at this moment, and how triggers were taken since creation.
 * `waiting + running` is never more than two per chat (one running, one follow-up).
 */
export interface CompressorJobStats {
  /** Jobs asked for and not started yet: waiting for a concurrency slot, or a chat's follow-up waiting for its running job. */
  readonly waiting: number;
  /** Jobs whose work is running (a job past its time limit counts until its work settles). */
  readonly running: number;
  /** Triggers that found their chat's job busy and were folded into its follow-up (the chat's lock was held). */
  readonly coalesced: number;
  /** Jobs waiting for a concurrency slot now (a busy chat's follow-up not counted until its turn): never more than `maxQueuedJobs`. */
  readonly queued: number;
  /** The most jobs that waited for a slot at once since creation. */
  readonly queuedPeak: number;
  /** The bound on `queued` (the option, or its default). */
  readonly maxQueuedJobs: number;
  /** Jobs refused since creation because `maxQueuedJobs` were already queued (`summary:skipped`, `reason: 'backlog-full'`). */
  readonly backlogFull: number;
}

/** Where one chat's summary job stands: its work running, a job waiting (for a slot, or as the follow-up of a running one), or none. */
export type ChatJobState = 'running' | 'queued' | 'idle';

/** What `createCompressor` returns. */
export interface Compressor<Req extends ChatRequest = ChatRequest> {
  /**
   * Wraps a chat handler: it receives the compressed view (and `tools`, with the recall tool when
   * recall is on); its response is returned untouched, unless `options.readResponse` lets `wrap`
   * answer recall calls itself (see `WrapOptions`).
   */
  wrap<R extends Req, Res>(handler: (request: R) => Promise<Res>, options?: WrapOptions<Res>): (request: R) => Promise<Res>;
  /**
   * The view for this chat now, using its stored summary when it still matches. Never waits for a
   * summarizer. `request` (optional) brings the reply's `max_tokens` and the tools to account for.
   */
  compress<M>(chatId: string, messages: M[], request?: RequestExtras): Promise<CompressResult<M> & { readonly tools?: unknown[] }>;
  /** Present when `recall` is on: its settings and the resolver (see `CompressorOptions.recall`). */
  readonly recall?: CompressorRecall;
  /**
   * What an adapter calls once the model answered a view from `compress`: records the provider's
   * billed input tokens against the view's count (calibration) and, when the plan asked for one,
   * schedules the chat's background summary of `messages` (the full history, not the view; or the
   * request body carrying it, `BodyHistory`, with `offload` set). Never
   * waits for a summarizer; `wrap` does exactly this after its handler returns. No summary is
   * scheduled while the head, system messages and kept tail alone fill the window (no view could
   * hold it), unless `recall` is on (the job keeps the originals it covers).
   */
  afterResponse(chatId: string, messages: readonly unknown[] | BodyHistory, report: CompressResult<unknown>['report'], response?: ResponseFacts): void;
  /**
   * Asks for a background summary of this history when it is over the threshold and a summary is
   * of use (as `afterResponse`). Never waits for it. `'backoff'`: passed over, the chat's last jobs
   * failed in a row (`summary:skipped` with `reason: 'failing'`). `'backlog-full'`: not queued,
   * `maxQueuedJobs` jobs already wait (`summary:skipped` with `reason: 'backlog-full'`).
   */
  schedule(chatId: string, messages: unknown[]): TriggerOutcome | 'not-needed';
  /** Waits until no summary job runs or is queued. Rejects in `raise` mode when jobs failed since the last drain, with a `SummaryJobsError` (code `CTXFOLD_SUMMARY_JOBS`) holding them. */
  drain(): Promise<void>;
  /**
   * Stops scheduling and lets running summary jobs finish for `graceMs` (default 5 s,
   * `DEFAULT_CLOSE_GRACE_MS`; 0 gives up running jobs at once), then closes the store. A job
   * still running when the grace ends is abandoned: aborted through its signal, reported with
   * `summary:abandoned`, and never committed, even if its summarizer ignores the signal and
   * answers later; queued jobs and follow-ups never start (`summary:abandoned`, stage `waiting`).
   * A job that was already writing its summary then is waited for at most `CLOSE_COMMIT_WAIT_MS`
   * (1 s) more (a `warning` with code `close-commit-unsettled` if it is still writing). So,
   * whatever the summarizer does, close settles within `graceMs + CLOSE_COMMIT_WAIT_MS` plus the
   * store's own `close()`. Rejects with an `InputError` for a `graceMs` that is not a number >= 0;
   * one over 2147483647 ms (about 24.8 days, Infinity too) is that long. See docs/shutdown.md.
   */
  close(graceMs?: number): Promise<void>;
  /** Counts since creation: store failures seen by requests, and summary jobs by outcome. */
  stats(): CompressorStats;
  /** Where this compressor's summary job for `chatId` stands now (`idle` for a chat it never scheduled). */
  jobState(chatId: string): ChatJobState;
  /** Subscribes to an event; returns the function that unsubscribes. */
  on<E extends keyof CompressorEvents>(event: E, listener: (payload: CompressorEvents[E]) => void): () => void;
}

