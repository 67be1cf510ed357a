/**
 * "A background summary never holds the event loop": event-loop delay (p99, max) measured with
 * `monitorEventLoopDelay` while `createCompressor` folds a whole long history into its first
 * summary with the extractive summarizer, after the request that triggered it was served.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { generateConversation } from './fixtures/conversation.js';
import { createCompressor, createTokenCounter } from '../src/index.js';

/** What one background-summary run measured. */
export interface SummaryLoopFigure {
  readonly messages: number;
  /** How long the request that triggered the job took (counts made in slices, then the plan). */
  readonly requestMs: number;
  /** How long the background job took, start to commit. */
  readonly jobMs: number;
  readonly coveredMessages: number;
  readonly summarizerCalls: number;
  /** Event-loop delay while the background job ran (the request had been answered). */
  readonly loopDelayP99Ms: number;
  readonly loopDelayMaxMs: number;
  /** Event-loop delay while the triggering request was served (a cold count of the whole history). */
  readonly requestLoopDelayP99Ms: number;
  readonly requestLoopDelayMaxMs: number;
}

/** Serves one request over an `n`-message history through `wrap`, then measures the loop while its summary job runs. */
export async function summaryLoopDelay(n: number): Promise<SummaryLoopFigure> {
  const messages = generateConversation({ messages: n, seed: 3 });
  const counter = createTokenCounter();
  const compressor = createCompressor({ maxContextTokens: 32_000, compressionThresholdTokens: 24_000, counter, jobTimeoutMs: 600_000 });
  let calls = 0;
  let covered = 0;
  let jobStart = 0;
  let jobEnd = 0;
  compressor.on('summary:start', () => { jobStart = performance.now(); });
  compressor.on('summary:done', (e) => { jobEnd = performance.now(); calls = e.calls; covered = e.coveredIds.length; });
  compressor.on('summary:failed', (e) => { throw e.error; });
  const requestLoop = monitorEventLoopDelay({ resolution: 5 });
  const t0 = performance.now();
  requestLoop.enable();
  await compressor.wrap(async (request: { messages: unknown[]; chatId: string }) => request.messages.length)({ messages, chatId: 'long' });
  requestLoop.disable();
  const requestMs = performance.now() - t0;
  const jobLoop = monitorEventLoopDelay({ resolution: 5 });
  jobLoop.enable();
  await compressor.drain();
  jobLoop.disable();
  await compressor.close();
  if (covered === 0) throw new Error('the background summary did not run');
  return {
    messages: n,
    requestMs,
    jobMs: jobEnd - jobStart,
    coveredMessages: covered,
    summarizerCalls: calls,
    loopDelayP99Ms: jobLoop.percentile(99) / 1e6,
    loopDelayMaxMs: jobLoop.max / 1e6,
    requestLoopDelayP99Ms: requestLoop.percentile(99) / 1e6,
    requestLoopDelayMaxMs: requestLoop.max / 1e6,
  };
}
