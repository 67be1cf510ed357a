import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { MessageLens } from '../formats/lens.js';
import type { TokenCounter } from './counter.js';

/**
 * Calls `step(i)` for every index in [0, n), giving the event loop a turn every `sliceMs`
 * milliseconds, so a long pass over a huge history (a cold token count, fingerprints) never
 * blocks other requests for longer than one slice.
 */
export async function inSlices(n: number, step: (i: number) => void, sliceMs = 4): Promise<void> {
  let sliceStart = performance.now();
  for (let i = 0; i < n; i++) {
    step(i);
    if ((i & 63) === 63 && performance.now() - sliceStart > sliceMs) {
      await yieldToLoop();
      sliceStart = performance.now();
    }
  }
}

/** Counts every message once into the counter's cache, in slices; a later synchronous plan is then all cache hits. */
export function warmCounts<M>(counter: TokenCounter, messages: readonly M[], lens: MessageLens<M>, sliceMs?: number): Promise<void> {
  return inSlices(messages.length, (i) => counter.message(messages[i], lens), sliceMs);
}
