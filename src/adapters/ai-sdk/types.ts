import type { LanguageModelMiddleware } from 'ai';
import type { Compressor, CompressorOptions } from '../../runtime/compressor.js';

/**
 * Types of the adapter, read from the installed `ai` package (types only, nothing is loaded at run
 * time): with `ai` 6 they are the V3 middleware types, with `ai` 7 the V4 ones, so the middleware a
 * user gets is typed for the `wrapLanguageModel` they call.
 */

/** A language-model middleware of the installed `ai` (`LanguageModelV3Middleware` for ai 6, V4 for ai 7). */
export type AiSdkMiddleware = LanguageModelMiddleware;

/** The call options a middleware receives (`LanguageModelV3CallOptions` / `LanguageModelV4CallOptions`): `prompt` holds the system messages too. */
export type ModelCallOptions = Parameters<NonNullable<AiSdkMiddleware['transformParams']>>[0]['params'];

/** The middleware `ctxfoldMiddleware` returns: a `wrapLanguageModel` middleware that also exposes its compressor. */
export type CtxfoldMiddleware = AiSdkMiddleware & {
  /** The compressor behind the middleware: `drain()`, `close()`, `stats()`, `on(event)`. Shared by every model it wraps. */
  readonly compressor: Compressor;
};

/**
 * Options of `ctxfoldMiddleware`: every `createCompressor` option (`format` is always `ai-sdk`),
 * or an existing `compressor` to share instead, plus how to read a call's chat id.
 */
export interface CtxfoldMiddlewareOptions extends Omit<CompressorOptions, 'chatId' | 'format'> {
  /** The provider prompt is AI SDK messages: only `'ai-sdk'` is accepted. */
  format?: 'ai-sdk';
  /** An existing compressor to use (and share): then no other compressor option may be given. */
  compressor?: Compressor;
  /** The chat a call belongs to. Default: `params.providerOptions.ctxfold.chatId`, else a fingerprint of the conversation opening (with a warning). */
  chatId?: (params: ModelCallOptions) => string | undefined;
  /**
   * The `specificationVersion` the middleware declares: `'v3'` (default) for `ai` 6, `'v4'` for
   * `ai` 7. Neither SDK reads it at run time (ai 7 hands every middleware V4 params), and the
   * middleware reads both prompt shapes, so this only keeps the object true to its SDK.
   */
  specificationVersion?: 'v3' | 'v4';
}
