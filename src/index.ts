/**
 * ctxfold: keep long LLM conversations inside the context window without breaking tool calling.
 *
 * This entry is the public API a user writes against. The building blocks for writing your own
 * planner (groups, boundary, plan, structure scan, profiles, lenses) are in `ctxfold/core`; the
 * SQLite store, on Node's built-in `node:sqlite`, is in `ctxfold/sqlite`.
 */

/** Plans a view of a history that fits the budget and that the provider accepts (pure, synchronous). */
export { compressContext } from './runtime/compress.js';
/** `compressContext`, summarizing the dropped middle right away (for one-shot and command-line use). */
export { compressWithSummary } from './runtime/one-shot.js';
/** The stateful compressor: `wrap(handler)`, per-chat summaries in the background, events. */
export { createCompressor } from './runtime/compressor.js';
/** Checks a history against a provider's tool-call rules; violations are worded like its 400 errors. */
export { validateMessages } from './formats/profiles.js';
/** Fixes a broken incoming history (missing, orphan and duplicate results) and says what it did. */
export { repairHistory } from './formats/profiles.js';
/** Chat states in this process's memory (the default store). */
export { MemoryStore } from './store/memory-store.js';
/** The offline summarizer: a structured working memory of requests, calls, facts, errors and conclusions. */
export { createExtractiveSummarizer } from './summarize/extractive.js';
/** A summarizer on any OpenAI-compatible `/chat/completions` endpoint. */
export { createLlmSummarizer } from './summarize/llm.js';
/** A summarizer on your own model call (`generateText`, an `openai` client, ...): the same prompt and checks as the LLM summarizer. */
export { summarizerFromFunction } from './summarize/from-function.js';
/** A token counter (tiktoken by default) whose text cache is bounded by bytes. */
export { createTokenCounter } from './tokens/counter.js';
/** Per-chat memory of recent histories, so a chat's next request costs only its new messages. */
export { createHistoryCache } from './runtime/history-cache.js';
/** Options for ctxfold from the valves of Open WebUI's async-context-compression filter. */
export { fromOpenWebUIValves } from './runtime/open-webui.js';
/** Errors: the base class (every error carries a stable `code`; `CtxfoldError.codes` lists them), and bad input, store and summarizer failures. */
export { CtxfoldError, InputError, StoreError, SummarizerError } from './errors.js';

export type { CompressOptions, SummaryInput, ToolOutputTrim } from './runtime/options.js';
export type { CompressReport, CompressResult, DroppedMessage } from './runtime/compress.js';
export type { DropReason } from './core/report.js';
export type { CompressWithSummaryOptions } from './runtime/one-shot.js';
export type { ChatJobState, ChatRequest, Compressor, CompressorEvents, CompressorOptions, CompressorRecall, CompressorStats, RequestExtras, ResponseFacts, WrapOptions } from './runtime/compressor.js';
export type { SummaryDoneEvent, SummaryStaleEvent, SummaryStartEvent } from './runtime/summary-job.js';
export type { SummarySkippedEvent } from './runtime/lease-job.js';
export type { HistoryCache, HistoryCacheOptions, Recall, RememberedHistory } from './runtime/history-cache.js';
export type { Fingerprints } from './runtime/fingerprints.js';
export type { ChatIdCarrier } from './runtime/chat-id.js';
export type { OpenWebUIValves } from './runtime/open-webui.js';
export type { ProfileName } from './formats/profiles.js';
export type { FormatName, TranscriptEntry } from './formats/lens.js';
export type { OpenAIChatMessage, OpenAIToolCall } from './formats/openai-chat/types.js';
export type { Violation } from './core/validate/rules.js';
export type { RepairAction } from './core/repair.js';
export type { ChatState, StateStore } from './store/state.js';
export type { ChatLister } from './store/chat-list.js';
export type { MemoryStoreOptions } from './store/memory-store.js';
export type { OriginalRecord, OriginalsStore } from './store/originals.js';
export type { OriginalsBounds } from './store/memory-originals.js';
export type { RecallAnswer, RecallSource, ResolveRecallOptions } from './recall/resolve.js';
export type { RecallOptions } from './recall/options.js';
export type { RecallToolFormat } from './recall/tool-definition.js';
export type { SummarizeRequest, Summarizer } from './summarize/summarizer.js';
export type { ExtractiveSummarizerOptions } from './summarize/extractive.js';
export type { LlmSummarizerOptions } from './summarize/llm.js';
export type { FunctionSummarizerOptions, SummaryFunction, SummaryFunctionCall, SummaryPrompt } from './summarize/from-function.js';
export type { TextCounter, TokenCounter, TokenCounterOptions } from './tokens/counter.js';
export type { CtxfoldErrorCode, SummarizerFailure, SummaryJobsError } from './errors.js';
