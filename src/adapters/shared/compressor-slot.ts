import { InputError } from '../../errors.js';
import { createCompressor, type Compressor, type CompressorEvents, type CompressorOptions, type CompressorStats } from '../../runtime/compressor.js';
import { contextWindowOf } from '../../runtime/context-windows.js';

/** Where the middleware gets its compressor: at once, or at the first model call once the model's window is known. */
export interface CompressorSlot {
  /** The compressor users hold (`middleware.compressor`), usable before the first call (events, drain, close, stats). */
  readonly compressor: Compressor;
  /** The compressor for a call to `model` (its name, when known); an `InputError` naming `maxContextTokens` when no window is known. */
  forModel(model: string | undefined): Compressor;
}

const IDLE_STATS: CompressorStats = Object.freeze({
  storeFailures: 0, summariesStarted: 0, summariesDone: 0, summariesFailed: 0, summariesStale: 0, summariesSkipped: 0,
  calibration: Object.freeze({ samples: 0, byModel: Object.freeze({}) }),
});

type Listener = { readonly event: keyof CompressorEvents; readonly listener: (payload: never) => void; off?: () => void };

/**
 * One compressor per middleware. A shared one, or one made from a given `maxContextTokens`,
 * exists at once. Otherwise it is made at the first model call with the window
 * `contextWindowOf(model name)` gives, and `compressor` stands in for it until then: listeners
 * added early move onto it, `drain` and `stats` answer as an idle compressor, an early `close`
 * closes it as soon as it is made. A later call to a model with another window is refused (one
 * budget per compressor), naming `maxContextTokens`.
 */
export function compressorSlot(options: CompressorOptions | undefined, shared: Compressor | undefined): CompressorSlot {
  if (shared !== undefined) return { compressor: shared, forModel: () => shared };
  if (options?.maxContextTokens !== undefined) {
    const made = createCompressor(options);
    return { compressor: made, forModel: () => made };
  }
  let made: { compressor: Compressor; model: string; window: number } | undefined;
  let closing: { graceMs?: number } | undefined;
  const early = new Set<Listener>();
  const notYet = (what: string): never => {
    throw new InputError('options.maxContextTokens', `${what} needs the compressor, which is made at the first model call (its window comes from the model's name): pass maxContextTokens to have it at once`);
  };

  function forModel(model: string | undefined): Compressor {
    const window = model === undefined ? undefined : contextWindowOf(model);
    if (window === undefined) {
      const which = model === undefined ? 'the model does not say its name' : `the model ${JSON.stringify(model)} is not in ctxfold's table of known context windows`;
      throw new InputError('options.maxContextTokens', `is required: ${which}; pass ctxfoldMiddleware({ maxContextTokens })`);
    }
    if (made !== undefined) {
      if (made.window === window) return made.compressor;
      throw new InputError('options.maxContextTokens', `is required: this middleware's compressor was made for ${made.model} (${made.window} tokens) and ${model} has ${window}; pass maxContextTokens, or use one ctxfoldMiddleware per model`);
    }
    const c = createCompressor({ ...options, maxContextTokens: window });
    made = { compressor: c, model: model!, window };
    for (const e of early) e.off = c.on(e.event, e.listener as never);
    if (closing !== undefined) void c.close(closing.graceMs);
    return c;
  }

  const now = () => made?.compressor;
  const compressor: Compressor = {
    wrap: (handler) => (now() ?? notYet('wrap')).wrap(handler),
    compress: (chatId, messages, request) => (now() ?? notYet('compress')).compress(chatId, messages, request),
    afterResponse: (chatId, messages, report, response) => (now() ?? notYet('afterResponse')).afterResponse(chatId, messages, report, response),
    schedule: (chatId, messages) => (now() ?? notYet('schedule')).schedule(chatId, messages),
    drain: () => now()?.drain() ?? Promise.resolve(),
    close: (graceMs) => {
      closing = { graceMs };
      return now()?.close(graceMs) ?? Promise.resolve();
    },
    stats: () => now()?.stats() ?? IDLE_STATS,
    jobState: (chatId) => now()?.jobState(chatId) ?? 'idle',
    on(event, listener) {
      const c = now();
      if (c) return c.on(event, listener);
      const e: Listener = { event, listener: listener as (payload: never) => void };
      early.add(e);
      return () => {
        early.delete(e);
        e.off?.();
      };
    },
  };
  return { compressor, forModel };
}
