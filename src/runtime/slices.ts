import { setImmediate as yieldToLoop } from 'node:timers/promises';

/**
 * Calls `step(i)` for every index in [0, n), giving the event loop a turn every `sliceMs`
 * milliseconds, so a long pass over a huge history (a cold token count, fingerprints) never
 * blocks other requests for longer than about one slice.
 */
export async function inSlices(n: number, step: (i: number) => void, sliceMs = 4): Promise<void> {
  let sliceStart = performance.now();
  for (let i = 0; i < n; i++) {
    step(i);
    if ((i & 15) === 15 && performance.now() - sliceStart > sliceMs) {
      await yieldToLoop();
      sliceStart = performance.now();
    }
  }
}
