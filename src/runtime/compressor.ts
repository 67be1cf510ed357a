import { EventEmitter } from 'node:events';
import { InputError } from '../errors.js';
import { MemoryStore } from '../store/memory-store.js';
import type { ChatState, StateStore } from '../store/state.js';
import { createExtractiveSummarizer } from '../summarize/extractive.js';
import type { Summarizer } from '../summarize/summarizer.js';
import { createTokenCounter } from '../tokens/counter.js';
import { defaultChatId, explicitChatId, type ChatIdCarrier } from './chat-id.js';
import { analyzeContext, type CompressResult } from './compress.js';
import { billedInputTokens, Calibration, type CalibrationSample, type CalibrationStats } from './calibration.js';
import { countInSlices } from './count-in-slices.js';
import { createHistoryCache, type HistoryCache } from './history-cache.js';
import { checkCompressorOptions, planOptionsOf, type CompressOptions, type ResolvedCompressOptions } from './options.js';
import type { FormatName } from '../formats/lens.js';
import { profileFor } from '../formats/profiles.js';
import type { Profile } from '../core/validate/validate.js';
import { ChatScheduler, type TriggerOutcome } from './scheduler.js';
import { runSummaryJob, type SummaryDoneEvent, type SummaryStaleEvent, type SummaryStartEvent } from './summary-job.js';

/** Options of `createCompressor`: planning options plus where state lives and who summarizes. */
export interface CompressorOptions<Req = ChatRequest> extends Omit<CompressOptions, 'summary' | 'historyCache' | 'chatId' | 'tools' | 'responseFormat' | 'instructions'> {
  /** Where summaries are kept. Default: a `MemoryStore` (use `SqliteStore` to survive restarts). */
  store?: StateStore;
  /** Who writes summaries. Default: the extractive summarizer (no network); `null` disables summaries. */
  summarizer?: Summarizer | null;
  /** Summary jobs running at once across chats. Default 2. */
  concurrency?: number;
  /** A summary job is aborted after this long. Default 120 000 ms. */
  jobTimeoutMs?: number;
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
  'summary:start': SummaryStartEvent;
  'summary:done': SummaryDoneEvent;
  'summary:failed': { readonly chatId: string; readonly error: unknown };
  'summary:stale': SummaryStaleEvent;
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
  /** Responses whose usage was read, and per model the mean ratio of ctxfold's estimate to the billed input tokens. */
  readonly calibration: CalibrationStats;
}

/** What `createCompressor` returns. */
export interface Compressor<Req extends ChatRequest = ChatRequest> {
  /** Wraps a chat handler: it receives the compressed view; its response is returned untouched. */
  wrap<R extends Req, Res>(handler: (request: R) => Promise<Res>): (request: R) => Promise<Res>;
  /**
   * The view for this chat now, using its stored summary when it still matches. Never waits for a
   * summarizer. `request` (optional) brings the reply's `max_tokens` and the tools to account for.
   */
  compress<M>(chatId: string, messages: M[], request?: RequestExtras): Promise<CompressResult<M>>;
  /**
   * What an adapter calls once the model answered a view from `compress`: records the provider's
   * billed input tokens against the view's count (calibration) and, when the plan asked for one,
   * schedules the chat's background summary of `messages` (the full history, not the view). Never
   * waits for a summarizer; `wrap` does exactly this after its handler returns.
   */
  afterResponse(chatId: string, messages: readonly unknown[], report: CompressResult<unknown>['report'], response?: ResponseFacts): void;
  /** Asks for a background summary of this history when it is over the threshold. Never waits for it. */
  schedule(chatId: string, messages: unknown[]): TriggerOutcome | 'not-needed';
  /** Waits until no summary job runs or is queued. Rejects in `raise` mode when jobs failed since the last drain. */
  drain(): Promise<void>;
  /** Stops scheduling, waits for running jobs (aborting them after `graceMs` when given), closes the store. */
  close(graceMs?: number): Promise<void>;
  /** Counts since creation: store failures seen by requests, and summary jobs by outcome. */
  stats(): CompressorStats;
  /** Subscribes to an event; returns the function that unsubscribes. */
  on<E extends keyof CompressorEvents>(event: E, listener: (payload: CompressorEvents[E]) => void): () => void;
}

/**
 * Creates the stateful compressor: per chat it serves head + stored summary + aligned tail, and
 * after each response schedules a background summary when the history is over
 * `compressionThresholdTokens` (default: 75% of `maxContextTokens`). The request path reads the
 * store once and never waits for a summarizer; a failed, slow or stale summary leaves the previous
 * one in force and the history intact.
 */
export function createCompressor<Req extends ChatRequest = ChatRequest>(options: CompressorOptions<Req> = {}): Compressor<Req> {
  const o = checkCompressorOptions<CompressorOptions<Req>>(options);
  const plan = planOptionsOf({ ...o, reserveOutputTokens: undefined }); // the reply's reserve is taken per request
  const failMode = o.summaryFailMode ?? 'silent';
  const threshold = plan.compressionThresholdTokens
    ?? (plan.maxContextTokens !== undefined ? Math.floor(plan.maxContextTokens * 0.75) : undefined);
  const historyCache = o.historyCache ?? createHistoryCache();
  const counter = o.counter ?? createTokenCounter({ model: o.model });
  const provider = o.provider === undefined ? undefined : profileFor(o.provider, 'options.provider') as Profile<unknown>;
  if (provider && o.format !== undefined && o.format !== 'auto' && o.format !== provider.lens.format) {
    throw new InputError('options.provider', `${JSON.stringify(o.provider)} reads ${provider.lens.format} messages, but options.format is ${JSON.stringify(o.format)}`);
  }
  const format = o.format ?? provider?.lens.format ?? 'auto';
  /** The options every plan of this compressor uses; a request adds its chat id and stored summary. */
  const planning: { -readonly [K in keyof ResolvedCompressOptions]: ResolvedCompressOptions[K] } = {
    plan: { ...plan, compressionThresholdTokens: threshold },
    reserveOutputTokens: 0,
    format,
    provider,
    model: o.model,
    counter,
    repair: o.repair ?? true,
    historyCache,
  };
  const store = o.store ?? new MemoryStore();
  const summarizer = o.summarizer === undefined ? createExtractiveSummarizer() : o.summarizer;
  // A stored summary too large for a view's room is shortened by its summarizer's own rule.
  if (summarizer?.shorten) planning.shortenSummary = (text, maxTokens) => summarizer.shorten!(text, maxTokens);
  const events = new EventEmitter();
  events.setMaxListeners(0);
  const failures: unknown[] = [];
  const calibration = new Calibration();
  const counters = { storeFailures: 0, summariesStarted: 0, summariesDone: 0, summariesFailed: 0, summariesStale: 0 };
  events.on('summary:start', () => counters.summariesStarted++);
  events.on('summary:done', () => counters.summariesDone++);
  events.on('summary:failed', () => counters.summariesFailed++);
  events.on('summary:stale', () => counters.summariesStale++);
  const emit = <E extends keyof CompressorEvents>(event: E, payload: CompressorEvents[E]) => {
    events.emit(event, payload);
  };

  const scheduler = new ChatScheduler<unknown[]>(
    (chatId, messages, signal) => runSummaryJob({
      store,
      summarizer: summarizer!,
      planning,
      onStart: (e) => emit('summary:start', e),
      onDone: (e) => emit('summary:done', e),
      onStale: (e) => emit('summary:stale', e),
    }, chatId, messages, signal),
    { concurrency: o.concurrency, jobTimeoutMs: o.jobTimeoutMs },
    {
      onError: (chatId, error) => {
        if (failMode === 'raise') failures.push(error);
        emit('summary:failed', { chatId, error });
      },
    },
  );

  /** The model a request names, for calibration ("default" when it names none). */
  const modelOf = (request: RequestExtras | undefined): string => (typeof request?.model === 'string' && request.model !== '' ? request.model : o.model ?? 'default');

  let warnedNoChatId = false;
  const chatIdOf = (request: Req): string => {
    const named = o.chatId?.(request) ?? explicitChatId(request);
    if (named !== undefined) return named;
    if (!warnedNoChatId) {
      warnedNoChatId = true;
      // Once per compressor: a fingerprint of the opening can be shared by two users who open alike.
      process.emitWarning('a request came without a chat id; ctxfold keys its summary by a fingerprint of the conversation opening. Pass request.chatId (or metadata.chat_id, or options.chatId(request)) so two users never share a summary.', { code: 'CTXFOLD_NO_CHAT_ID' });
      emit('warning', { code: 'no-chat-id', message: 'request without a chat id: keyed by a fingerprint of its opening' });
    }
    return defaultChatId(request);
  };

  /**
   * The plan options for one request: the reply's reserve (the option, else the request's
   * `max_completion_tokens` / `max_tokens` / `max_output_tokens`) comes off the window, and the
   * request's tools and response format are counted.
   */
  function forRequest(request: RequestExtras | undefined): ResolvedCompressOptions {
    const asked = request?.max_completion_tokens ?? request?.max_tokens ?? request?.max_output_tokens;
    const reserve = o.reserveOutputTokens ?? (typeof asked === 'number' && Number.isSafeInteger(asked) && asked > 0 ? asked : 0);
    const window = plan.maxContextTokens;
    if (window !== undefined && reserve >= window) {
      throw new InputError(o.reserveOutputTokens !== undefined ? 'options.reserveOutputTokens' : 'request.max_tokens', `must be less than maxContextTokens (${window}), got ${reserve}: nothing would be left for the messages`);
    }
    const tools = Array.isArray(request?.tools) ? request.tools : undefined;
    const correction = o.calibrate ? calibration.correction(modelOf(request)) : 1;
    const instructions = request?.system ?? request?.instructions;
    const format = request?.format ?? planning.format;
    if (reserve === 0 && tools === undefined && request?.response_format === undefined && correction === 1 && instructions === undefined && format === planning.format) return planning;
    return {
      ...planning,
      format,
      plan: { ...planning.plan, maxContextTokens: window !== undefined ? Math.max(1, Math.floor((window - reserve) * correction)) : undefined },
      reserveOutputTokens: reserve,
      tools,
      responseFormat: request?.response_format,
      instructions,
    };
  }

  async function compress<M>(chatId: string, given: M[], request?: RequestExtras): Promise<CompressResult<M>> {
    if (typeof chatId !== 'string' || chatId === '') throw new InputError('chatId', `must be a non-empty string, got ${JSON.stringify(chatId)}`);
    if (!Array.isArray(given)) throw new InputError('messages', `must be an array of messages, got ${given === null ? 'null' : typeof given}`);
    // The request is planned on the history as it is now, even if the caller's array changes
    // while the store answers; the view is still made of the caller's own message objects.
    const messages = given.slice();
    // A long history is counted in slices first, so its cold count never blocks other requests.
    const recalled = await countInSlices(historyCache, chatId, messages, counter, request?.format ?? format);
    let state: ChatState | undefined;
    let storeFailed = false;
    try {
      state = await store.get(chatId);
    } catch (error) {
      // The store is down or locked: serve the best valid view without a summary; the next
      // request asks the store again, so summaries come back as soon as it answers.
      storeFailed = true;
      counters.storeFailures++;
      emit('warning', { code: 'store-unavailable', chatId, error, message: `store.get failed: ${error instanceof Error ? error.message : String(error)}` });
    }
    const analysis = analyzeContext(messages, {
      ...forRequest(request),
      chatId,
      recalled,
      summary: state ? { text: state.summary, coveredIds: state.coveredIds } : undefined,
    });
    const result = { messages: analysis.messages, report: analysis.report };
    const { report } = result;
    if (storeFailed) (report.notes as string[]).push('the store did not answer: served the best valid view without the stored summary');
    if (!report.summary.applied && report.droppedCounts.budget > 0) {
      (report.notes as string[]).push('no usable summary yet: served the best valid view without one (older groups dropped whole)');
    }
    emit('compressed', { chatId, report });
    return result;
  }

  function schedule(chatId: string, messages: readonly unknown[]): TriggerOutcome | 'not-needed' {
    if (!summarizer || threshold === undefined) return 'not-needed';
    // The job works on the history as it is now: the caller may edit or replace its messages
    // while the job runs, and the ids it commits must be those of what it summarized.
    return scheduler.trigger(chatId, messages.slice());
  }

  function afterResponse(chatId: string, messages: readonly unknown[], report: CompressResult<unknown>['report'], response?: ResponseFacts): void {
    const billed = response?.billedInputTokens;
    if (typeof billed === 'number' && Number.isFinite(billed) && billed > 0) {
      const model = typeof response?.model === 'string' && response.model !== '' ? response.model : o.model ?? 'default';
      const sample = calibration.record(chatId, model, report.tokensAfter, billed);
      if (sample) emit('calibration', sample);
    }
    // After the response: summarize in the background only when the history asks for it.
    if (report.summarize) schedule(chatId, messages);
  }

  return {
    wrap<R extends Req, Res>(handler: (request: R) => Promise<Res>) {
      return async (request: R): Promise<Res> => {
        if (!request || !Array.isArray(request.messages)) throw new InputError('request.messages', 'must be an array of messages');
        const chatId = chatIdOf(request);
        const { messages, report } = await compress(chatId, request.messages, request as RequestExtras);
        const response = await handler({ ...request, messages });
        afterResponse(chatId, request.messages, report, { billedInputTokens: billedInputTokens(response), model: modelOf(request as RequestExtras) });
        return response;
      };
    },
    compress,
    afterResponse,
    schedule(chatId, messages) {
      const { report } = analyzeContext(messages, { ...planning, chatId });
      return report.summarize ? schedule(chatId, messages) : 'not-needed';
    },
    async drain() {
      await scheduler.drain();
      if (failures.length > 0) {
        const errors = failures.splice(0);
        throw new AggregateError(errors, `${errors.length} summary job(s) failed: ${errors.map((e) => (e instanceof Error ? e.message : String(e))).join('; ')}`);
      }
    },
    async close(graceMs?: number) {
      await scheduler.close(graceMs);
      await store.close();
    },
    stats: () => ({ ...counters, calibration: calibration.stats() }),
    on(event, listener) {
      events.on(event, listener as (payload: unknown) => void);
      return () => events.off(event, listener as (payload: unknown) => void);
    },
  };
}
