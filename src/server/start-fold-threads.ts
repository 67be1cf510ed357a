import type { Logger } from 'pino';
import type { StateStore } from '../store/state.js';
import { createFoldThreads, type FoldThreads } from './fold-threads.js';
import type { ResolvedServerOptions } from './options.js';
import type { FoldThreadSettings } from './fold-thread-tasks.js';

/**
 * The proxy's fold threads for these options, or undefined where everything folds on the
 * serving thread: `foldThreads` 0, recall on (its exchange reads the parsed body), a summarizer
 * with its own `shorten` that a thread cannot rebuild, or the threads' script not built. Summary
 * jobs fold in the threads only with the built-in extractive summarizer (the default). The
 * threads plan with `planning`, the options the serving thread's compressors are made with.
 */
export function startFoldThreads(options: ResolvedServerOptions, planning: FoldThreadSettings['pool'], store: StateStore, logger: Logger): FoldThreads | undefined {
  const off = (why: string) => {
    logger.debug({ why }, 'fold threads off: every request folds on the serving thread');
    return undefined;
  };
  if (options.foldThreads === 0) return off('foldThreads is 0');
  if (options.recall !== undefined && options.recall !== false) return off('recall is on');
  const summarizer = options.summarizer;
  if (summarizer !== undefined && summarizer !== null && summarizer.shorten !== undefined) return off(`summarizer ${summarizer.name} shortens summaries its own way`);
  const threads = createFoldThreads({
    threads: options.foldThreads,
    minBytes: options.foldThreadMinBytes,
    foldsJobs: summarizer === undefined,
    getState: (chatId) => store.get(chatId),
    settings: {
      summarizer: summarizer === undefined ? 'extractive' : 'none',
      chatIdHeader: options.chatIdHeader,
      pool: planning,
    },
  });
  if (threads === undefined) return off('the fold threads\' script is not built (fold-worker.js)');
  logger.debug({ threads: options.foldThreads, minBytes: options.foldThreadMinBytes, jobs: threads.offload !== undefined }, 'fold threads started');
  return threads;
}
