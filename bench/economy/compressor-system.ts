/**
 * ctxfold as a chat server runs it: `createCompressor` with the extractive summarizer and its
 * defaults (threshold 75% of the budget, folds to the low-water mark), one per workload. Each
 * request is compressed, then reported with `afterResponse`, and the background summary is
 * awaited (`drain`) before the next request, so the replay is deterministic: every summary a
 * server would have made by then is in place. Counts the summarizer's calls, for "summarizer
 * calls per 100 turns".
 */
import { createCompressor, createExtractiveSummarizer, createTokenCounter, type Compressor, type CompressorOptions, type Summarizer } from '../../src/index.js';
import type { EconomySystem } from './economy-replay.js';

/** The system, and how many calls its summarizer has made and over how many requests. */
export interface CompressorEconomySystem extends EconomySystem {
  readonly stats: () => { readonly requests: number; readonly summarizerCalls: number; readonly summaries: number };
  close(): Promise<void>;
}

/** Compressor options a system may set beside the budget, summarizer and counter it manages. */
export type CompressorSystemOptions = Omit<CompressorOptions, 'maxContextTokens' | 'summarizer' | 'counter'>;

/**
 * A fresh `createCompressor` economy system at one budget (the budget of a workload is fixed),
 * with `options` (default: the compressor's own defaults).
 */
export function compressorSystem(name = 'ctxfold + background summaries', options: CompressorSystemOptions = {}): CompressorEconomySystem {
  const extractive = createExtractiveSummarizer();
  let summarizerCalls = 0;
  let summaries = 0;
  let requests = 0;
  const counting: Summarizer = { ...extractive, summarize: (request) => { summarizerCalls++; return extractive.summarize(request); } };
  let compressor: Compressor | undefined;
  let budgetOf: number | undefined;
  const counter = createTokenCounter();
  return {
    name,
    async viewOf(history, budget, chatId) {
      if (compressor === undefined || budgetOf !== budget) {
        await compressor?.close();
        compressor = createCompressor({ ...options, maxContextTokens: budget, summarizer: counting, counter });
        compressor.on('summary:done', () => { summaries++; });
        budgetOf = budget;
      }
      requests++;
      const { messages, report } = await compressor.compress(chatId, history);
      compressor.afterResponse(chatId, history, report);
      await compressor.drain();
      return messages as typeof history;
    },
    stats: () => ({ requests, summarizerCalls, summaries }),
    close: async () => { await compressor?.close(); },
  };
}
