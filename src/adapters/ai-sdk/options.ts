import { InputError } from '../../errors.js';
import { describe } from '../../formats/describe.js';
import type { Compressor, CompressorOptions } from '../../runtime/compressor.js';
import { checkCompressorOptions } from '../../runtime/options.js';
import type { CtxfoldMiddlewareOptions, ModelCallOptions } from './types.js';

/** The options of `ctxfoldMiddleware`, checked: the compressor's own options apart from the adapter's. */
export interface CheckedMiddlewareOptions {
  /** What `createCompressor` gets (format fixed to `ai-sdk`); undefined when a compressor is shared. */
  readonly compressorOptions?: CompressorOptions;
  readonly shared?: Compressor;
  readonly chatId?: (params: ModelCallOptions) => string | undefined;
  readonly specificationVersion: 'v3' | 'v4';
}

const COMPRESSOR_METHODS = ['compress', 'afterResponse', 'drain', 'close', 'stats', 'on'] as const;

/**
 * Checks the options once, when the middleware is made: every wrong or unknown option is an
 * `InputError` naming `options.<name>` and the rule. Nothing is created here.
 */
export function checkMiddlewareOptions(options: unknown): CheckedMiddlewareOptions {
  if (options === undefined) options = {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InputError('options', `must be an options object, got ${describe(options)}`);
  }
  const { compressor, chatId, specificationVersion, format, ...rest } = options as CtxfoldMiddlewareOptions & Record<string, unknown>;
  if (compressor !== undefined && !(typeof compressor === 'object' && compressor !== null && COMPRESSOR_METHODS.every((m) => typeof (compressor as unknown as Record<string, unknown>)[m] === 'function'))) {
    throw new InputError('options.compressor', `must be a Compressor from createCompressor() (an object with ${COMPRESSOR_METHODS.map((m) => `${m}()`).join(', ')}), got ${describe(compressor)}`);
  }
  if (chatId !== undefined && typeof chatId !== 'function') {
    throw new InputError('options.chatId', `must be a function (params) => string | undefined, got ${describe(chatId)}`);
  }
  if (specificationVersion !== undefined && specificationVersion !== 'v3' && specificationVersion !== 'v4') {
    throw new InputError('options.specificationVersion', `must be "v3" (ai 6) or "v4" (ai 7), got ${describe(specificationVersion)}`);
  }
  if (format !== undefined && format !== 'ai-sdk') {
    throw new InputError('options.format', `must be "ai-sdk" or left out: a language-model middleware always sees AI SDK prompt messages, got ${describe(format)}`);
  }
  const version = specificationVersion ?? 'v3';
  if (compressor !== undefined) {
    const extra = Object.keys(rest).find((k) => rest[k] !== undefined) ?? (format !== undefined ? 'format' : undefined);
    if (extra !== undefined) {
      throw new InputError(`options.${extra}`, 'cannot be combined with options.compressor: set it when you create that compressor');
    }
    return { shared: compressor, chatId, specificationVersion: version };
  }
  const compressorOptions = checkCompressorOptions<CompressorOptions>({ ...rest, format: 'ai-sdk' });
  return { compressorOptions, chatId, specificationVersion: version };
}
