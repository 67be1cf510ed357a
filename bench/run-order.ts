/**
 * The order the systems run in for one request. A fixed order, or the same order rotated, has
 * every system run right after the same neighbour on every request, and a system run right after
 * another finds the processor's caches and the engine's inline caches as that one left them (the
 * same library's other configuration warms them; a heavy tokenizer run clears them). A fresh
 * shuffle per request spreads those effects over every system.
 */
import { mulberry32 } from './fixtures/conversation.js';

/**
 * `items` in the order of request number `request`: a permutation (every item once), shuffled
 * afresh for each request and the same for the same request and seed, so a run can be repeated.
 */
export function requestOrder<T>(items: readonly T[], request: number, seed = 0x5eed): T[] {
  const random = mulberry32(Math.imul(request + 1, 0x9e3779b1) ^ seed);
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
