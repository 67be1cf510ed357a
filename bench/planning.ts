/**
 * "Planning is linear": ctxfold's time per message on generated histories of growing size with a
 * warm token cache (the counter of the cold call, over the same parsed objects), timed by tinybench.
 */
import { Bench } from 'tinybench';
import { compressContext } from '../src/index.js';
import type { ColdState } from './runner.js';

/** Planning time of one history size. */
export interface PlanningFigure {
  readonly messages: number;
  readonly samples: number;
  readonly medianMs: number;
  readonly p99Ms: number;
  readonly perMessageUs: number;
}

/** Times `compressContext` on a warm counter; `timeMs` is tinybench's time budget for the task. */
export async function planningTime(state: ColdState, timeMs: number): Promise<PlanningFigure> {
  const bench = new Bench({ time: timeMs, iterations: 5, warmupTime: Math.min(200, timeMs / 4), warmupIterations: 2, throws: true });
  bench.add(`plan ${state.messages.length}`, () => {
    compressContext(state.messages, { maxContextTokens: state.budget, counter: state.counter, historyCache: state.historyCache, chatId: state.chatId });
  });
  await bench.run();
  const result = bench.tasks[0].result;
  if (!result || !('latency' in result)) throw new Error('tinybench returned no latency for the planning task');
  const latency = result.latency;
  const medianMs = latency.p50 ?? latency.mean;
  return { messages: state.messages.length, samples: latency.samples.length, medianMs, p99Ms: latency.p99 ?? latency.max, perMessageUs: (medianMs * 1000) / state.messages.length };
}
