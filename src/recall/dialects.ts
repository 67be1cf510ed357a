import { ANTHROPIC_RECALL } from './anthropic-dialect.js';
import { CHAT_RECALL } from './chat-dialect.js';
import type { RecallDialect } from './dialect.js';
import { RESPONSES_RECALL } from './responses-dialect.js';

/** The formats whose responses ctxfold can read recall calls from (and answer them): Chat Completions, Responses, Messages (Anthropic). */
export type RecallDialectName = RecallDialect['format'];

/** The dialect of a format, or undefined for a format whose responses are not read for recall. */
export function recallDialect(format: unknown): RecallDialect | undefined {
  if (format === 'openai') return CHAT_RECALL;
  if (format === 'openai-responses') return RESPONSES_RECALL;
  if (format === 'anthropic') return ANTHROPIC_RECALL;
  return undefined;
}
