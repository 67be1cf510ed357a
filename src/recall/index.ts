/**
 * `ctxfold/recall`: for applications that answer `ctxfold_recall` calls themselves (a
 * `createCompressor` user has the same as `compressor.recall`). Pure re-exports.
 */
/** Answers a `ctxfold_recall` call from a store's kept originals, by message number or search, within a token bound (never throws for bad arguments). */
export { resolveRecall, type RecallAnswer, type RecallSource, type ResolveRecallOptions } from './resolve.js';
/** The `ctxfold_recall` tool's definition for OpenAI Chat, OpenAI Responses or Anthropic, to add to a request's tools. */
export { recallToolDefinition, type RecallToolFormat } from './tool-definition.js';
/** Whether a store keeps the originals a summary replaced (the capability recall needs). */
export { hasOriginals, type OriginalRecord, type OriginalsStore } from '../store/originals.js';
