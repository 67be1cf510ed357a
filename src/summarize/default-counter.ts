import { createTokenCounter, type TextCounter } from '../tokens/counter.js';

let shared: TextCounter | undefined;

/**
 * The process-wide tiktoken text counter (`o200k_base`) summarizers and the rolling driver use
 * when the caller gives none. Created on first use, so nothing loads the encoder before it is needed.
 */
export function defaultTextCounter(): TextCounter {
  shared ??= createTokenCounter().text;
  return shared;
}
