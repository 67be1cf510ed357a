import type { ChatCompletionCreateParams } from 'openai/resources/chat/completions';
import type { ResponseCreateParams } from 'openai/resources/responses/responses';
import { InputError } from '../../errors.js';
import { describe } from '../../formats/describe.js';
import { createCompressor, type Compressor, type CompressorOptions } from '../../runtime/compressor.js';
import { checkCompressorOptions } from '../../runtime/options.js';
import { contextWindowOf } from '../../runtime/context-windows.js';
import type { ChatIdOf } from './chat-id.js';

/** A request body the wrapper folds: Chat Completions or Responses. */
export type OpenAIRequestBody = ChatCompletionCreateParams | ResponseCreateParams;

/**
 * Options of `withCtxfold`: every `createCompressor` option (its `chatId` excepted: here it reads
 * a request body), or `compressor` to share one compressor between clients; plus `chatId`.
 */
export interface OpenAIAdapterOptions extends Omit<CompressorOptions, 'chatId'> {
  /**
   * A compressor to use (and share) instead of creating one: its store, summaries, calibration
   * and events then span every client wrapped with it. Its options are its own: pass no other
   * compressor option next to it. Create it with `format` left out ('auto'): the wrapper reads
   * Chat Completions and Responses bodies with the same compressor.
   */
  compressor?: Compressor;
  /**
   * The chat a request belongs to, from its body. Default: `metadata.chat_id`, else `user`, else
   * a fingerprint of the history's opening (two users who open alike share it until the model has
   * answered them differently: pass a chat id). Return undefined to fall back to the default.
   */
  chatId?: (body: OpenAIRequestBody) => string | undefined;
}

/** The compressor a wrapper uses and how it reads chat ids, from checked options. */
export interface ResolvedAdapterOptions {
  readonly compressor: Compressor;
  readonly chatId?: ChatIdOf;
}

/**
 * Checks `withCtxfold` options and returns the compressor to use: the one given, or a new one
 * made from the options (`createCompressor` checks each of them and names the one that is wrong).
 * `maxContextTokens` defaults to the published window of `model` when the model is known; without
 * either there is no budget to keep, and the error says which option to pass.
 */
export function resolveAdapterOptions(options: unknown): ResolvedAdapterOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InputError('options', `must be an options object ({ maxContextTokens } or { compressor }), got ${describe(options)}`);
  }
  const { compressor, chatId, ...rest } = options as OpenAIAdapterOptions & Record<string, unknown>;
  if (chatId !== undefined && typeof chatId !== 'function') {
    throw new InputError('options.chatId', `must be a function (body) => string | undefined, got ${describe(chatId)}`);
  }
  if (compressor !== undefined) {
    const c = compressor as unknown as Record<string, unknown>;
    if (typeof c !== 'object' || c === null || typeof c.compress !== 'function' || typeof c.afterResponse !== 'function' || typeof c.on !== 'function') {
      throw new InputError('options.compressor', `must be a Compressor from createCompressor() (an object with compress(), afterResponse(), on()), got ${describe(compressor)}`);
    }
    const extra = Object.keys(rest)[0];
    if (extra !== undefined) {
      throw new InputError(`options.${extra}`, 'is a compressor option, but options.compressor is given: set it on that compressor (createCompressor({ ... })) instead');
    }
    return { compressor, chatId };
  }
  // Every name and value first (a misspelt option is named as such), then what the wrapper needs.
  checkCompressorOptions(rest);
  if (rest.format !== undefined && rest.format !== 'auto') {
    throw new InputError('options.format', `is chosen per call by the wrapper (openai for chat.completions, openai-responses for responses): leave it out, got ${describe(rest.format)}`);
  }
  let maxContextTokens = rest.maxContextTokens;
  if (maxContextTokens === undefined) {
    maxContextTokens = typeof rest.model === 'string' ? contextWindowOf(rest.model) : undefined;
    if (maxContextTokens === undefined) {
      const known = typeof rest.model === 'string' ? `; the window of model ${JSON.stringify(rest.model)} is not known` : ' (or options.model, for a model whose window is known)';
      throw new InputError('options.maxContextTokens', `is required: the context window of the model you call, in tokens${known}`);
    }
  }
  return { compressor: createCompressor({ ...rest, maxContextTokens }), chatId };
}
