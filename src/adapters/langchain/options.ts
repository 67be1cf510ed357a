import { InputError } from '../../errors.js';
import { describe } from '../../formats/describe.js';
import type { Compressor, CompressorOptions } from '../../runtime/compressor.js';
import { checkCompressorOptions } from '../../runtime/options.js';
import type { ChatIdFunction, CtxfoldMiddlewareOptions } from './types.js';

/** The options of `ctxfoldMiddleware`, checked: the compressor's own options apart from the adapter's. */
export interface CheckedOptions {
  /** What `createCompressor` gets (format fixed to `openai`); undefined when a compressor is shared. */
  readonly compressorOptions?: CompressorOptions;
  readonly shared?: Compressor;
  readonly chatId?: ChatIdFunction;
}

const COMPRESSOR_METHODS = ['compress', 'afterResponse', 'drain', 'close', 'stats', 'on'] as const;

/**
 * Checks the options once, when the middleware is made: a wrong or unknown option is an
 * `InputError` naming `options.<name>` and the rule (the compressor's own options are checked by
 * `createCompressor`'s schema). Nothing is created here.
 */
export function checkOptions(options: unknown): CheckedOptions {
  if (options === undefined) options = {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InputError('options', `must be an options object, got ${describe(options)}`);
  }
  const { compressor, chatId, format, ...rest } = options as CtxfoldMiddlewareOptions & Record<string, unknown>;
  if (compressor !== undefined && !(typeof compressor === 'object' && compressor !== null && COMPRESSOR_METHODS.every((m) => typeof (compressor as unknown as Record<string, unknown>)[m] === 'function'))) {
    throw new InputError('options.compressor', `must be a Compressor from createCompressor() (an object with ${COMPRESSOR_METHODS.map((m) => `${m}()`).join(', ')}), got ${describe(compressor)}`);
  }
  if (chatId !== undefined && typeof chatId !== 'function') {
    throw new InputError('options.chatId', `must be a function (state, runtime) => string | undefined, got ${describe(chatId)}`);
  }
  if (format !== undefined && format !== 'openai') {
    throw new InputError('options.format', `must be "openai" or left out: the compressor reads LangChain messages as OpenAI Chat messages, got ${describe(format)}`);
  }
  if (compressor !== undefined) {
    const extra = Object.keys(rest).find((k) => rest[k] !== undefined) ?? (format !== undefined ? 'format' : undefined);
    if (extra !== undefined) throw new InputError(`options.${extra}`, 'cannot be combined with options.compressor: set it when you create that compressor');
    return { shared: compressor, chatId };
  }
  return { compressorOptions: checkCompressorOptions<CompressorOptions>({ ...rest, format: 'openai' }), chatId };
}
