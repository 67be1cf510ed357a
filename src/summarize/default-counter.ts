import { createTokenCounter, summaryTextCounter, type TextCounter } from '../tokens/counter.js';

let shared: TextCounter | undefined;

/**
 * The process-wide tiktoken text counter (`o200k_base`) summarizers and the rolling driver use
 * when the caller gives none (its `textByLines`: a summary is counted line by line from the
 * cache, the same number as counting it whole). Created on first use, so nothing loads the encoder before it is needed.
 */
export function defaultTextCounter(): TextCounter {
  shared ??= summaryTextCounter(createTokenCounter());
  return shared;
}
