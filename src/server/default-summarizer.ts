import { createExtractiveSummarizer } from '../summarize/extractive.js';
import type { Summarizer } from '../summarize/summarizer.js';
import { createTokenCounter, summaryTextCounter } from '../tokens/counter.js';

/**
 * The proxy's summarizer when none is given: the extractive one, counting its summaries with the
 * proxy's tokenizer (`tokenizerModel`; o200k_base when unset). The serving thread and every fold
 * thread make it with this one function, so their summaries are the same.
 */
export function defaultSummarizer(tokenizerModel: string | undefined): Summarizer {
  return createExtractiveSummarizer(tokenizerModel === undefined ? {} : { countTokens: summaryTextCounter(createTokenCounter({ model: tokenizerModel })) });
}
