/**
 * The token budget every system gets for a request: half the request's tokens, capped at a 32k
 * window (so most requests must be trimmed, and long histories see a realistic fixed window), and
 * never below 1.25 x what any valid view must send (so "valid and within budget" is reachable).
 * Tokens are counted with a reference counter that no timed call uses.
 */
import type { OpenAIChatMessage, TokenCounter } from '../src/index.js';
import { openaiChatLens } from '../src/core/index.js';

/** Budget cap in tokens (a 32k context window). */
export const BUDGET_CAP_TOKENS = 32_000;

/** The rule, in words, for the results file. */
export const BUDGET_RULE = `max(min(${BUDGET_CAP_TOKENS}, floor(50% of the request's tokens)), ceil(1.25 x the request's floor)), where the floor is what any valid view must send (the first system message and everything from the last user message on, plus the request overhead); tokens counted with createTokenCounter() (o200k_base) including per-message overheads`;

/**
 * What any valid view of the request `history[0, end)` must send: its first system message and
 * everything from its last user message on, plus the request overhead.
 */
export function requestFloor(history: readonly OpenAIChatMessage[], end: number, reference: TokenCounter): number {
  let n = reference.requestOverhead;
  let lastUser = -1;
  for (let i = end - 1; i >= 0; i--) if (history[i].role === 'user') { lastUser = i; break; }
  const systemAt = history.findIndex((m, i) => i < end && (m.role === 'system' || m.role === 'developer'));
  if (systemAt >= 0 && systemAt < lastUser) n += reference.message(history[systemAt], openaiChatLens);
  for (let i = Math.max(0, lastUser); i < end; i++) n += reference.message(history[i], openaiChatLens);
  return n;
}

/**
 * A lower bound of what a system that always sends its head and its last `keepLast` messages
 * must send (ctxfold's `keepFirst` / `keepLast`): the request overhead, the first `keepFirst`
 * messages, every system or developer message, and the tail: the last `keepLast` messages (or
 * from the last user message on, if that starts earlier), widened back to the start of a tool
 * exchange it begins inside (a tool result, or an answer without calls right after tool results,
 * belongs with the assistant message that called the tools), since no valid view splits one. Written apart
 * from ctxfold's planner, with this one rule only, so it can be lower than what ctxfold
 * protects, never higher.
 */
export function protectedFloor(history: readonly OpenAIChatMessage[], keepFirst: number, keepLast: number, reference: TokenCounter): number {
  const n = history.length;
  let lastUser = n;
  for (let i = n - 1; i >= 0; i--) if (history[i].role === 'user') { lastUser = i; break; }
  let tailStart = Math.min(lastUser, Math.max(0, n - keepLast));
  const followUp = (m: OpenAIChatMessage) => m.role === 'assistant' && !(Array.isArray(m.tool_calls) && m.tool_calls.length > 0);
  while (tailStart > 0 && (history[tailStart].role === 'tool' || (followUp(history[tailStart]) && history[tailStart - 1].role === 'tool'))) tailStart--;
  let total = reference.requestOverhead;
  for (let i = 0; i < n; i++) {
    const m = history[i];
    if (i < keepFirst || i >= tailStart || m.role === 'system' || m.role === 'developer') total += reference.message(m, openaiChatLens);
  }
  return total;
}

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
    // Above the floor, so every system can send a view that is valid and within budget.
    return Math.max(1, Math.min(BUDGET_CAP_TOKENS, Math.floor(tokens / 2)), Math.ceil(1.25 * requestFloor(history, end, reference)));
  };
}

/** Tokens of a view as sent (reference counter, request overhead included). */
export function viewTokens(view: readonly OpenAIChatMessage[], reference: TokenCounter): number {
  let n = reference.requestOverhead;
  for (const m of view) n += reference.message(m, openaiChatLens);
  return n;
}

/**
 * The floor of the fair budget: what every valid view of `history` must send, by the rule the
 * economy's budget is stated in (written apart from ctxfold's grouping): the request overhead,
 * every system or developer message, the last user message, and the newest exchange after it (the
 * last message, widened back over the tool results before it to the assistant message that called
 * them, when that lies after the last user message).
 */
export function fairFloor(history: readonly OpenAIChatMessage[], reference: TokenCounter): number {
  const n = history.length;
  let lastUser = -1;
  for (let i = n - 1; i >= 0; i--) if (history[i].role === 'user') { lastUser = i; break; }
  let newest = n - 1;
  while (newest > lastUser && (history[newest].role === 'tool' || history[newest].role === 'function')) newest--;
  // `newest` is now the message that called the trailing results (or the last message itself).
  const inFloor = (i: number) => i === lastUser || (i > lastUser && i >= newest) || history[i].role === 'system' || history[i].role === 'developer';
  let total = reference.requestOverhead;
  for (let i = 0; i < n; i++) if (inFloor(i)) total += reference.message(history[i], openaiChatLens);
  return total;
}

/** The rule of the fair budget, in words, for the results. */
export const FAIR_BUDGET_RULE = 'floor + F x rest: floor = the request overhead, the system message(s), the last user message and the newest exchange after it (what every valid view must send); rest = the request\'s other tokens; tokens counted with createTokenCounter() (o200k_base) including per-message overheads';

/** The fair budget of a request at share `f` of what lies outside its floor: `floor + floor(f x rest)`. */
export function fairBudget(history: readonly OpenAIChatMessage[], f: number, reference: TokenCounter): { budget: number; floor: number; rest: number } {
  const floor = fairFloor(history, reference);
  const rest = Math.max(0, viewTokens(history, reference) - floor);
  return { budget: floor + Math.floor(f * rest), floor, rest };
}
