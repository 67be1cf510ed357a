import { createCompressor, type Compressor, type CompressorOptions, type CompressorStats } from '../runtime/compressor.js';
import { createHistoryCache } from '../runtime/history-cache.js';
import type { StateStore } from '../store/state.js';
import type { Summarizer } from '../summarize/summarizer.js';
import { createTokenCounter } from '../tokens/counter.js';
import { limitsFor, type ProxyConfig, type ResolvedLimits } from './model-limits.js';

/** Planning options every compressor of the proxy shares (the budget comes per model). */
export interface PoolOptions {
  readonly config: ProxyConfig;
  /** `--max-tokens`: the window of a model neither the config nor ctxfold's table knows. */
  readonly maxContextTokens?: number;
  readonly compressionThresholdTokens?: number;
  readonly keepFirst?: number;
  readonly keepLast?: number;
  readonly keepLastYields?: boolean;
  readonly lowWaterMark?: number;
  readonly toolOutputTrim?: CompressorOptions['toolOutputTrim'];
  /** Tokenizer model for counting (default o200k_base). */
  readonly tokenizerModel?: string;
  readonly repair?: boolean;
  readonly store: StateStore;
  readonly summarizer: Summarizer | null;
  readonly concurrency?: number;
  readonly jobTimeoutMs?: number;
  /** Summary jobs waiting for a slot, at most, per window (`createCompressor`'s `maxQueuedJobs`). */
  readonly maxQueuedJobs?: number;
  /** Recall, as `createCompressor` takes it (the store must keep originals). */
  readonly recall?: CompressorOptions['recall'];
  /** Where summary jobs on a body's bytes fold (the fold threads), as `createCompressor` takes it. */
  readonly offload?: CompressorOptions['offload'];
  /** Called once for each compressor the pool makes (to subscribe to its events). */
  readonly onCreate?: (compressor: Compressor, limits: ResolvedLimits) => void;
}

/** One compressor per context window, made when a request first needs it. */
export interface CompressorPool {
  /** The compressor for a request to `model`, and the limits it plans with. */
  forModel(model: string | undefined): { readonly compressor: Compressor; readonly limits: ResolvedLimits };
  /** Every compressor made so far. */
  all(): readonly Compressor[];
  /** Summary jobs waiting, running and queued for a slot, triggers coalesced, and jobs refused on a full queue, across the pool. */
  jobs(): PoolJobs;
  /** Store failures seen by requests, across the pool. */
  stats(): readonly CompressorStats[];
  /** Closes every compressor (waiting for its jobs; aborting them after `graceMs`), then the store; resolves with what became of the jobs. */
  close(graceMs?: number): Promise<ShutdownJobs>;
}

/** The pool's summary jobs at this moment, summed over its compressors. */
export interface PoolJobs {
  waiting: number;
  running: number;
  coalesced: number;
  queued: number;
  backlogFull: number;
}

/**
 * What a pool's `close()` did with the summary jobs it found: `finished` settled during the
 * close (done, stale or failed; `failed` of them failed), `abandoned` were given up at the grace's
 * end (`running`: aborted; `waiting`: never started). An abandoned job's chat keeps the summary it had.
 */
export interface ShutdownJobs {
  readonly finished: number;
  readonly failed: number;
  readonly abandoned: { readonly running: number; readonly waiting: number };
}

/** Jobs that settled so far (done, stale or failed), and of them failed, in these stats. */
function settled(stats: readonly CompressorStats[]): { finished: number; failed: number } {
  let finished = 0;
  let failed = 0;
  for (const s of stats) {
    finished += s.summariesDone + s.summariesStale + s.summariesFailed;
    failed += s.summariesFailed;
  }
  return { finished, failed };
}

/**
 * The store as each compressor sees it: the same object in every respect (a capability such as
 * a lease stays visible), except that `close` does nothing, since the pool closes the store once,
 * after the last compressor.
 */
function sharedStore(store: StateStore): StateStore {
  return new Proxy(store, {
    get(target, key) {
      if (key === 'close') return async () => undefined;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * Compressors keyed by window (`limitsFor`: config, then `--max-tokens`, then known models),
 * sharing one store, one token counter and one history cache, so a chat's counts and state are
 * the same whichever model it calls. Each compressor keeps one summary job per chat at a time;
 * a chat that switches between models of different windows may have one job in each (the
 * store's compare-and-set keeps the newer summary).
 */
export function createCompressorPool(options: PoolOptions): CompressorPool {
  const counter = createTokenCounter({ model: options.tokenizerModel });
  // The encoder is built at the first count (about 200 ms): done here, at start, it does not
  // hold up the first requests (and every probe answered meanwhile).
  counter.text('ctxfold starts: the tokenizer is loaded before the first request.');
  const historyCache = createHistoryCache();
  const store = sharedStore(options.store);
  const byWindow = new Map<string, Compressor>();
  const abandoned = { running: 0, waiting: 0 };

  const forModel = (model: string | undefined) => {
    const limits = limitsFor(model, options.config, options.maxContextTokens, options.compressionThresholdTokens);
    const key = `${limits.maxContextTokens ?? 'none'}/${limits.compressionThresholdTokens ?? 'default'}`;
    let compressor = byWindow.get(key);
    if (compressor === undefined) {
      compressor = createCompressor({
        maxContextTokens: limits.maxContextTokens,
        compressionThresholdTokens: limits.compressionThresholdTokens,
        keepFirst: options.keepFirst,
        keepLast: options.keepLast,
        keepLastYields: options.keepLastYields,
        lowWaterMark: options.lowWaterMark,
        toolOutputTrim: options.toolOutputTrim,
        repair: options.repair,
        counter,
        historyCache,
        store,
        summarizer: options.summarizer,
        concurrency: options.concurrency,
        jobTimeoutMs: options.jobTimeoutMs,
        maxQueuedJobs: options.maxQueuedJobs,
        recall: options.recall,
        offload: options.offload,
      });
      compressor.on('summary:abandoned', (e) => { abandoned[e.stage]++; });
      byWindow.set(key, compressor);
      options.onCreate?.(compressor, limits);
    }
    return { compressor, limits };
  };

  return {
    forModel,
    all: () => [...byWindow.values()],
    jobs() {
      const total: PoolJobs = { waiting: 0, running: 0, coalesced: 0, queued: 0, backlogFull: 0 };
      for (const c of byWindow.values()) {
        const jobs = c.stats().jobs;
        if (!jobs) continue;
        total.waiting += jobs.waiting;
        total.running += jobs.running;
        total.coalesced += jobs.coalesced;
        total.queued += jobs.queued;
        total.backlogFull += jobs.backlogFull;
      }
      return total;
    },
    stats: () => [...byWindow.values()].map((c) => c.stats()),
    async close(graceMs?: number) {
      const before = settled([...byWindow.values()].map((c) => c.stats()));
      const abandonedBefore = { ...abandoned };
      await Promise.allSettled([...byWindow.values()].map((c) => c.close(graceMs)));
      const after = settled([...byWindow.values()].map((c) => c.stats()));
      await options.store.close();
      return {
        finished: after.finished - before.finished,
        failed: after.failed - before.failed,
        abandoned: { running: abandoned.running - abandonedBefore.running, waiting: abandoned.waiting - abandonedBefore.waiting },
      };
    },
  };
}
