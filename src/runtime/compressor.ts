import { EventEmitter } from 'node:events';
import { InputError, StoreError, SummaryJobsError } from '../errors.js';
import { MemoryStore } from '../store/memory-store.js';
import type { ChatState, StateStore } from '../store/state.js';
import { createExtractiveSummarizer } from '../summarize/extractive.js';
import { createTokenCounter } from '../tokens/counter.js';
import { encodingForModel } from '../tokens/tiktoken.js';
import { warmUpPlanner } from './warm-up.js';
import { defaultChatId, explicitChatId } from './chat-id.js';
import { analyzeContext, type CompressResult, type ContextAnalysis } from './compress.js';
import { transcriptOf } from '../core/transcript.js';
import { recallablePlaceholder } from '../core/summary-frame.js';
import { RECALL_TOOL_NAME } from '../recall/tool-definition.js';
import { billedInputTokens, Calibration } from './calibration.js';
import { countInSlices } from './count-in-slices.js';
import { createHistoryCache } from './history-cache.js';
import { checkCompressorOptions, planOptionsOf, type ResolvedCompressOptions } from './options.js';
import { profileFor } from '../formats/profiles.js';
import { describe } from '../formats/describe.js';
import type { Profile } from '../core/validate/validate.js';
import { ChatScheduler, type ChatJob, type JobControl, type TriggerOutcome } from './scheduler.js';
import { JobCounts } from './job-counts.js';
import { hasLeases } from '../store/lease.js';
import { leasedJob, type SummarySkippedEvent } from './lease-job.js';
import type { SummaryDoneEvent, SummaryStaleEvent, SummaryStartEvent } from './summary-job.js';
import { runSummaryJob, type CoveredMessage } from './summary-job.js';
import { isBodyHistory, type BodyHistory } from './body-history.js';
import { FOLD_CONTEXT, runOffloadedJob, type LendsFoldContext } from './job-offload.js';
import { keepNewestLines } from '../core/summary-fit.js';
import { hasOriginals } from '../store/originals.js';
import { resolveRecallOption } from '../recall/options.js';
import { originalRecords } from '../recall/records.js';
import { recallToolToCount, toolsWithRecall } from '../recall/request-tool.js';
import { resolveRecall } from '../recall/resolve.js';
import { keepingRecallNote, recallNoteSuffix } from '../recall/summary-note.js';
import { answerRecallRounds } from './recall-rounds.js';
import { responseReader } from '../recall/wrap-reader.js';
import { isFields, roundRequest, shownReply, type Fields, type RecallView } from '../recall/dialect.js';
import { CHAT_RECALL } from '../recall/chat-dialect.js';
import { usageOf, withEarlierUsage } from '../recall/usage-sum.js';

export type { ChatJobState, CompressorOptions, CompressorRecall, WrapOptions, RequestExtras, ResponseFacts, ChatRequest, CompressorEvents, CompressorStats, CompressorJobStats, Compressor } from './compressor-types.js';
import type { CompressorOptions, CompressorRecall, WrapOptions, RequestExtras, ResponseFacts, ChatRequest, CompressorEvents, CompressorStats, CompressorJobStats, Compressor } from './compressor-types.js';

/** What a summary job folds: the messages, or the body bytes that carry them (folded by `options.offload`). */
type JobInput = unknown[] | BodyHistory;

/** Chats whose kept cleared results a compressor remembers (the most recent ones). */
const KEPT_CLEARED_CHATS = 1000;

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
  // The first request costs what a later one does: the planner is compiled and, on the
  // compressor's own tiktoken counter, the shared encoder loaded now rather than on that request.
  warmUpPlanner(planning, o.counter === undefined ? encodingForModel(o.model) : undefined);
  // Where the plan counts lazily, the sliced count stops past what a view could hold (twice the
  // larger of window and threshold, room for the request's calibration); the plan counts any rest.
  const sliceCountLimit = plan.maxContextTokens !== undefined && plan.collapseMinChars === undefined
    ? 2 * Math.max(plan.maxContextTokens, threshold ?? 0) : Infinity;
  const store = o.store ?? new MemoryStore();
  const recall = resolveRecallOption(o.recall, plan.maxContextTokens);
  if (recall && !hasOriginals(store)) {
    throw new InputError('options.recall', 'needs a store that keeps originals (putOriginals, getOriginals, searchOriginals: MemoryStore, SqliteStore, RedisStore); this store has none');
  }
  const summarizer = o.summarizer === undefined ? createExtractiveSummarizer() : o.summarizer;
  // A stored summary too large for a view's room is shortened by its summarizer's own rule.
  if (summarizer?.shorten) planning.shortenSummary = (text, maxTokens) => summarizer.shorten!(text, maxTokens);
  const events = new EventEmitter();
  events.setMaxListeners(0);
  const failures: unknown[] = [];
  const calibration = new Calibration();
  const counters = { storeFailures: 0, summariesStarted: 0, summariesDone: 0, summariesFailed: 0, summariesStale: 0, summariesSkipped: 0 };
  events.on('summary:start', () => counters.summariesStarted++);
  events.on('summary:done', () => counters.summariesDone++);
  events.on('summary:failed', () => counters.summariesFailed++);
  events.on('summary:stale', () => counters.summariesStale++);
  events.on('summary:skipped', () => counters.summariesSkipped++);
  const emit = <E extends keyof CompressorEvents>(event: E, payload: CompressorEvents[E]) => {
    events.emit(event, payload);
  };

  // Job counts for stats().jobs (counts only).
  const jobCounts = new JobCounts();

  const jobHooks = (control: JobControl) => ({
    onStart: (e: SummaryStartEvent) => emit('summary:start', e),
    onDone: (e: SummaryDoneEvent) => emit('summary:done', e),
    onStale: (e: SummaryStaleEvent) => emit('summary:stale', e),
    onCommitting: () => control.committing(),
  });
  // A history held as its body's bytes is folded by the offload (a worker thread), committed here.
  const fold = (jobStore: StateStore, chatId: string, messages: JobInput, signal: AbortSignal, control: JobControl) => (isBodyHistory(messages)
    ? runOffloadedJob(o.offload!, jobStore, jobHooks(control), chatId, messages, signal)
    : runSummaryJob({
      store: jobStore,
      summarizer: summarizer!,
      planning,
      ...jobHooks(control),
      onCovered: recall ? async (chatId, covered) => { await saveOriginals(chatId, covered); } : undefined,
    }, chatId, messages, signal));
  // A store that grants leases (RedisStore): each job runs only under its chat's lease, so
  // processes sharing the store never fold one chat at once; a chat leased elsewhere is skipped.
  const onSkipped = (e: SummarySkippedEvent) => emit('summary:skipped', e);
  const job: ChatJob<JobInput> = hasLeases(store)
    ? (chatId, messages, signal, control) => leasedJob(store, (s: StateStore, id: string, m: JobInput, sig: AbortSignal) => fold(s, id, m, sig, control), { onSkipped })(chatId, messages, signal, control)
    : (chatId, messages, signal, control) => fold(store, chatId, messages, signal, control);

  const scheduler = new ChatScheduler<JobInput>(
    (chatId, messages, signal, control) => (jobCounts.started(chatId), job(chatId, messages, signal, control).finally(() => jobCounts.finished(chatId))),
    { concurrency: o.concurrency, jobTimeoutMs: o.jobTimeoutMs, maxQueuedJobs: o.maxQueuedJobs },
    {
      onError: (chatId, error) => {
        if (failMode === 'raise') failures.push(error);
        emit('summary:failed', { chatId, error });
      },
      onBackoff: (chatId, failures) => emit('summary:skipped', { chatId, reason: 'failing', failures }),
      onBacklogFull: (chatId, queued) => {
        jobCounts.refused();
        emit('summary:skipped', { chatId, reason: 'backlog-full', queued });
      },
      onAbandoned: (chatId, stage) => emit('summary:abandoned', { chatId, stage }),
      onUnsettled: (chatId) => emit('warning', { code: 'close-commit-unsettled', chatId, message: 'close() stopped waiting while this chat\'s summary was being written: whether it landed is up to the store' }),
      countsAsFailing: (error) => !(error instanceof StoreError),
    },
  );

  /** Keeps the originals a committed summary replaced; a failure is a warning, never a failed summary. */
  async function saveOriginals(chatId: string, covered: readonly CoveredMessage[]): Promise<boolean> {
    try {
      if (hasOriginals(store)) await store.putOriginals(chatId, originalRecords(covered));
      return true;
    } catch (error) {
      emit('warning', { code: 'recall-save-failed', chatId, error, message: `putOriginals failed: ${error instanceof Error ? error.message : String(error)}` });
      return false;
    }
  }

  // Ids of cleared results already kept, per chat (the most recent chats only), so a chat whose
  // views clear the same results request after request writes each to the store once.
  const keptCleared = new Map<string, Set<string>>();

  /** Keeps the originals of the tool results a view cleared (so recall can read them again); a failure is a warning. */
  async function saveCleared<M>(chatId: string, analysis: ContextAnalysis<M>): Promise<void> {
    const kept = keptCleared.get(chatId) ?? new Set<string>();
    keptCleared.delete(chatId);
    keptCleared.set(chatId, kept);
    if (keptCleared.size > KEPT_CLEARED_CHATS) keptCleared.delete(keptCleared.keys().next().value!);
    const fresh = analysis.report.collapsed.filter((c) => !kept.has(c.id));
    if (fresh.length === 0) return;
    const saved = await saveOriginals(chatId, fresh.map((c) => ({
      id: c.id,
      index: c.index,
      entry: transcriptOf(analysis.input, analysis.lens, analysis.grouping.groups[analysis.grouping.groupOf[c.index]].start, c.index + 1).at(-1)!,
      message: analysis.input[c.index],
    })));
    if (saved) for (const c of fresh) kept.add(c.id);
  }

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

  async function compress<M>(chatId: string, given: M[], request?: RequestExtras): Promise<CompressResult<M> & { readonly tools?: unknown[] }> {
    if (typeof chatId !== 'string' || chatId === '') {
      // Named, never echoed whole: the usual slip is the messages passed first.
      const hint = Array.isArray(chatId) ? ' (compress(chatId, messages): the chat id comes first)' : '';
      throw new InputError('chatId', `must be a non-empty string, got ${describe(chatId)}${hint}`);
    }
    if (!Array.isArray(given)) throw new InputError('messages', `must be an array of messages, got ${given === null ? 'null' : typeof given}`);
    // The request is planned on the history as it is now, even if the caller's array changes
    // while the store answers; the view is still made of the caller's own message objects.
    const messages = given.slice();
    // A long history is counted in slices first, so its cold count never blocks other requests.
    const recalled = await countInSlices(historyCache, chatId, messages, counter, request?.format ?? format, sliceCountLimit);
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
    // Recall on: the tool's definition is counted with the request's tools, and the summary
    // carries a note naming what can be recalled (kept whole when the summary is shortened). Tools
    // given as anything but a list (the AI SDK's `generateText` takes a record) cannot take one more:
    // no tool, and no note telling the model of it.
    const toolsListed = request?.tools === undefined || Array.isArray(request.tools);
    const recallTool = recall && request?.recall !== false && toolsListed ? recallToolToCount(request?.format ?? format) : undefined;
    const planned = forRequest(recallTool ? { ...request, tools: [...(Array.isArray(request?.tools) ? request.tools : []), recallTool] } : request);
    const analysis = analyzeContext(messages, {
      ...planned,
      ...(recallTool ? {
        shortenSummary: keepingRecallNote(planned.shortenSummary ?? ((text, max) => keepNewestLines(text, max, counter.text)), counter.text),
        clearedText: (id: string, chars: number) => recallablePlaceholder(chars, RECALL_TOOL_NAME, id),
      } : {}),
      chatId,
      recalled,
      summary: state ? storedSummary(state, recallTool ? recallNoteSuffix(state.coveredIds.length) : '') : undefined,
    });
    // A cleared result's placeholder names the recall tool: its original is kept before the view goes out.
    if (recallTool && analysis.report.collapsed.length > 0) await saveCleared(chatId, analysis);
    const tools = recallTool ? toolsWithRecall(request?.tools, analysis.report.format) : undefined;
    const result = { messages: analysis.messages, report: analysis.report, ...(tools ? { tools } : {}) };
    const { report } = result;
    if (recallTool) (report.notes as string[]).push(tools ? 'recall: the ctxfold_recall tool was added to the request\'s tools (result.tools)' : `recall: no recall tool definition for format ${report.format}; none added`);
    if (storeFailed) (report.notes as string[]).push('the store did not answer: served the best valid view without the stored summary');
    if (!report.summary.applied && report.droppedCounts.budget > 0) {
      (report.notes as string[]).push('no usable summary yet: served the best valid view without one (older groups dropped whole)');
    }
    if (report.summarize && !summaryUseful(report)) {
      (report.notes as string[]).push('no background summary: the head, system messages and kept tail alone fill the window, so no view could hold one (with recall on, one is made to keep the originals)');
    }
    if (report.repaired.length > 0) emit('repair', { chatId, actions: report.repaired });
    emit('compressed', { chatId, report });
    return result;
  }

  /** The stored summary as a view applies it, with the recall note's `suffix`; a compact size counts the note too. */
  function storedSummary(state: ChatState, suffix: string): { text: string; coveredIds: readonly string[]; compactTokens?: number } {
    const text = state.summary + suffix;
    if (state.compactTokens === undefined) return { text, coveredIds: state.coveredIds };
    return { text, coveredIds: state.coveredIds, compactTokens: state.compactTokens + (suffix === '' ? 0 : counter.text(suffix)) };
  }

  /**
   * A background summary is worth its summarizer call when a view could hold it, or when recall is
   * on (the job keeps the originals it covers, which recall answers with, sent or not). While the
   * head, system messages and kept tail alone fill the window, a summary would be made on every
   * request and left out of every view, until the kept tail moves on.
   */
  function summaryUseful(report: CompressResult<unknown>['report']): boolean {
    if (recall) return true;
    const { maxContextTokens: window, minimumTokens } = report;
    return window === undefined || minimumTokens === undefined || window - report.reservedOutputTokens - minimumTokens > 0;
  }

  /**
   * Where the floor alone stands above the low-water mark, no fold brings the view down to it, and
   * folding whatever just left the kept tail would make a summary per request, each of one turn:
   * a background summary waits until a fold step's worth is foldable (`report.summarize.belowStep`).
   * Not with recall on: what the view drops meanwhile is recallable only once a summary covers it.
   */
  function foldsEnough(report: CompressResult<unknown>['report']): boolean {
    return Boolean(recall) || report.summarize?.belowStep !== true;
  }

  /** A background summary is to be made: the history asks for one, and it is of use (`summaryUseful`, `foldsEnough`). */
  function summaryWanted(report: CompressResult<unknown>['report']): boolean {
    return report.summarize !== undefined && summaryUseful(report) && foldsEnough(report);
  }

  function schedule(chatId: string, messages: readonly unknown[] | BodyHistory): TriggerOutcome | 'not-needed' {
    if (!summarizer || threshold === undefined) return 'not-needed';
    if (isBodyHistory(messages) && o.offload === undefined) throw new InputError('messages', 'a history held as body bytes needs options.offload (a worker that reads it); pass the messages instead');
    // The job works on the history as it is now: the caller may edit or replace its messages
    // while the job runs, and the ids it commits must be those of what it summarized.
    return jobCounts.triggered(chatId, () => scheduler.trigger(chatId, isBodyHistory(messages) ? messages : messages.slice()));
  }

  function afterResponse(chatId: string, messages: readonly unknown[] | BodyHistory, report: CompressResult<unknown>['report'], response?: ResponseFacts): void {
    const billed = response?.billedInputTokens;
    if (typeof billed === 'number' && Number.isFinite(billed) && billed > 0) {
      const model = typeof response?.model === 'string' && response.model !== '' ? response.model : o.model ?? 'default';
      const sample = calibration.record(chatId, model, report.tokensAfter, billed);
      if (sample) emit('calibration', sample);
    }
    // After the response: summarize in the background when a summary is wanted.
    if (summaryWanted(report)) schedule(chatId, messages);
  }

  const recallApi: CompressorRecall | undefined = recall ? {
    maxTokens: recall.maxTokens,
    rounds: recall.rounds,
    answer: (chatId: string, args: unknown, bound?: { readonly maxTokens?: number }) => (hasOriginals(store)
      ? resolveRecall(store, chatId, args, { maxTokens: Math.max(1, Math.min(recall.maxTokens, bound?.maxTokens ?? recall.maxTokens)), countTokens: counter.text })
      : Promise.reject(new InputError('options.recall', 'the store keeps no originals'))),
  } : undefined;

  const made: Compressor<Req> & LendsFoldContext = {
    wrap<R extends Req, Res>(handler: (request: R) => Promise<Res>, wrapOptions?: WrapOptions<Res>) {
      // Checked once, when wrapping; ignored with recall off (no recall call can come).
      const reader = recallApi && wrapOptions?.readResponse !== undefined ? responseReader<Res>(wrapOptions.readResponse, format) : undefined;
      return async (request: R): Promise<Res> => {
        if (!request || !Array.isArray(request.messages)) throw new InputError('request.messages', 'must be an array of messages');
        const chatId = chatIdOf(request);
        const { messages, report, tools } = await compress(chatId, request.messages, request as RequestExtras);
        // (Only the rounds, which need a reader, make a final call: its `tool_choice` is the reader's dialect's none.)
        const call = (view: RecallView) => handler(roundRequest(reader?.dialect ?? CHAT_RECALL, request, view, 'messages'));
        let response: Res = await call({ messages, tools });
        let last = report;
        // The usage of the calls before the last one, added up (a response in the dialect's own shape shows it).
        let earlier: Fields | undefined;
        if (reader) {
          // Recall calls are answered here and the handler called again: the application gets the last response.
          const out = await answerRecallRounds<Res>(response, report, {
            compressor: { compress, recall: recallApi }, dialect: reader.dialect, chatId, history: request.messages, extras: request as RequestExtras, read: reader.read, ask: call,
            usage: (reply) => {
              const read = reader.read(reply);
              return isFields(read) ? usageOf(read) : undefined;
            },
          });
          earlier = out.earlierUsage;
          // A response in the dialect's own shape is also shown without the recall tool it echoes (Responses `tools`).
          response = reader.asIs ? shownReply(reader.dialect, out.reply, out.pending) : out.reply;
          last = out.report;
        }
        afterResponse(chatId, request.messages, last, { billedInputTokens: billedInputTokens(response), model: modelOf(request as RequestExtras) });
        // Each call is billed: a response in the API's own shape shows every call's usage added up.
        return reader?.asIs && isFields(response) ? (withEarlierUsage(response, earlier) as Res) : response;
      };
    },
    compress,
    afterResponse,
    ...(recallApi ? { recall: recallApi } : {}),
    schedule(chatId, messages) {
      const { report } = analyzeContext(messages, { ...planning, chatId });
      return summaryWanted(report) ? schedule(chatId, messages) : 'not-needed';
    },
    async drain() {
      await scheduler.drain();
      if (failures.length > 0) {
        const errors = failures.splice(0);
        throw new SummaryJobsError(errors);
      }
    },
    async close(graceMs?: number) {
      await scheduler.close(graceMs);
      // A closed scheduler starts nothing more: what was still waiting never will.
      jobCounts.clear();
      await store.close();
    },
    // A worker folding for an offload plans and summarizes exactly as this compressor does.
    [FOLD_CONTEXT]: () => (summarizer ? { summarizer, planning } : undefined),
    stats: () => ({ ...counters, calibration: calibration.stats(), jobs: jobCounts.stats({ queued: scheduler.queued, queuedPeak: scheduler.queuedPeak, maxQueuedJobs: scheduler.maxQueuedJobs }) }),
    jobState: (chatId) => jobCounts.stateOf(chatId),
    on(event, listener) {
      events.on(event, listener as (payload: unknown) => void);
      return () => events.off(event, listener as (payload: unknown) => void);
    },
  };
  return made;
}
