/**
 * The token budget every system gets for a request: half the request's tokens, capped at a 32k
 * window (so every request must be trimmed, and long histories see a realistic fixed window).
 * Tokens are counted with a reference counter that no timed call uses.
 */
import type { OpenAIChatMessage, TokenCounter } from '../src/index.js';
import { openaiChatLens } from '../src/core/index.js';

/** Budget cap in tokens (a 32k context window). */
export const BUDGET_CAP_TOKENS = 32_000;

/** The rule, in words, for the results file. */
export const BUDGET_RULE = `min(${BUDGET_CAP_TOKENS}, floor(50% of the request's tokens)), tokens counted with createTokenCounter() (o200k_base) including per-message overheads`;

/**
 * Budgets for prefixes of one history. Prefix sums are extended only while they are under twice
 * the cap: past that point the budget is the cap and no more counting is needed.
 */
export function prefixBudgets(history: readonly OpenAIChatMessage[], reference: TokenCounter): (end: number) => number {
  const sums = [reference.requestOverhead];
  return (end) => {
    while (sums.length <= end && sums[sums.length - 1] < 2 * BUDGET_CAP_TOKENS) {
      sums.push(sums[sums.length - 1] + reference.message(history[sums.length - 1], openaiChatLens));
    }
    const tokens = end < sums.length ? sums[end] : Number.POSITIVE_INFINITY;
    return Math.max(1, Math.min(BUDGET_CAP_TOKENS, Math.floor(tokens / 2)));
  };
}

/** Tokens of a view as sent (reference counter, request overhead included). */
export function viewTokens(view: readonly OpenAIChatMessage[], reference: TokenCounter): number {
  let n = reference.requestOverhead;
  for (const m of view) n += reference.message(m, openaiChatLens);
  return n;
}
