/**
 * Replays one conversation request by request, the way a chat server sees it (request i = every
 * message before the i-th assistant message, as `modelRequestEnds` gives), lets each system turn
 * the history into the view it would send, and bills the sequence of views through the simulated
 * provider prompt cache (`prompt-cache.ts`). Also bills "no compression": the full history of each
 * request, which may pass the budget (such requests are counted in `overBudgetRequests`).
 *
 * Input side only: every system answers the same requests with the same recorded assistant
 * messages, so output tokens, and their cost, are the same for all of them; `outputTokens` gives
 * their count under the same counter, for scale.
 */
import { createTokenCounter, type OpenAIChatMessage } from '../../src/index.js';
import { openaiChatLens } from '../../src/core/index.js';
import { REQUEST_OVERHEAD_TOKENS } from '../../src/tokens/accounting.js';
import { modelRequestEnds } from '../fixtures/conversation.js';
import { priceOf, type ModelPrice } from './prices.js';
import { canonicalJson, simulateCache, type CacheRequest, type CacheRules, type SimulateOptions } from './prompt-cache.js';

/** A compared system: the view it sends for a history at a budget. */
export interface EconomySystem {
  readonly name: string;
  viewOf(history: OpenAIChatMessage[], budget: number, chatId: string): OpenAIChatMessage[] | Promise<OpenAIChatMessage[]>;
}

/** Name of the row that sends every request's full history. */
export const NO_COMPRESSION = 'no compression';

/** The views one system sent over a replay. */
export interface SystemViews {
  readonly name: string;
  /** One per request the system answered (a request whose view failed is left out: nothing was sent). */
  readonly views: OpenAIChatMessage[][];
  /** Requests whose view call threw or returned something that is not a message list. */
  readonly failedRequests: number;
  /** Views over the budget (request overhead included). */
  readonly overBudgetRequests: number;
  /**
   * Views that begin with the whole previous view (same messages by canonical JSON): the prompt
   * only grew, so its prefix stayed cacheable. Counted over the views after the first.
   */
  readonly extendedPrevious: number;
  readonly firstError?: string;
}

/** Views of every system (and of no compression) over a conversation's requests. */
export interface ReplayViews {
  readonly budget: number;
  readonly requests: number;
  /** Tokens of the recorded assistant messages that answer the requests (same for every system). */
  readonly outputTokens: number;
  readonly systems: SystemViews[];
}

/** One system's bill for the conversation. */
export interface SystemEconomy {
  readonly name: string;
  readonly requests: number;
  readonly failedRequests: number;
  readonly overBudgetRequests: number;
  readonly inputTokens: number;
  readonly cachedTokens: number;
  readonly cacheWriteTokens: number;
  readonly cachedShare: number;
  /** USD, input side, with the provider's prompt cache. */
  readonly cost: number;
  /** USD, input side, had nothing been cached. */
  readonly costWithoutCache: number;
}

/** Result of `replayEconomy`. */
export interface EconomyResult {
  readonly rules: CacheRules;
  readonly model: ModelPrice;
  readonly budget: number;
  readonly requests: number;
  readonly outputTokens: number;
  /** USD of the output tokens at the model's output price (same for every system), null without a price. */
  readonly outputCost: number | null;
  readonly systems: SystemEconomy[];
}

/** Options of `replayEconomy`. */
export interface EconomyOptions {
  readonly conversation: readonly OpenAIChatMessage[];
  readonly systems: readonly EconomySystem[];
  readonly budget: number;
  readonly rules: CacheRules;
  /** A model of the price table (`prices.ts`), or a price entry. */
  readonly model: string | ModelPrice;
  readonly chatId?: string;
  /** Per-message token counter; default `createTokenCounter()` (o200k_base) with ctxfold's accounting. */
  readonly countMessage?: (m: OpenAIChatMessage) => number;
  /** Tool definitions sent with every request (the same each time). */
  readonly tools?: readonly unknown[];
  readonly simulate?: SimulateOptions;
}

/** The default counter: tiktoken o200k_base, with the per-message overheads of `src/tokens/accounting.ts`. */
export function defaultMessageCounter(): (m: OpenAIChatMessage) => number {
  const counter = createTokenCounter();
  return (m) => counter.message(m, openaiChatLens);
}

function isMessageList(v: unknown): v is OpenAIChatMessage[] {
  return Array.isArray(v) && v.every((m) => m !== null && typeof m === 'object' && typeof (m as { role?: unknown }).role === 'string');
}

/**
 * Replays the conversation: for each request (history before each assistant message), asks every
 * system for its view, in order, and records the views. `NO_COMPRESSION` is added first.
 * `lastRequests` replays only the conversation's last requests (each still carries the whole
 * history before it).
 */
export async function collectViews(
  conversation: readonly OpenAIChatMessage[],
  systems: readonly EconomySystem[],
  budget: number,
  options: { chatId?: string; countMessage?: (m: OpenAIChatMessage) => number; lastRequests?: number } = {},
): Promise<ReplayViews> {
  const count = options.countMessage ?? defaultMessageCounter();
  const chatId = options.chatId ?? 'economy';
  const allEnds = modelRequestEnds(conversation);
  // With `lastRequests`, only the last requests are replayed: the first of them is every system's
  // first sight of the chat (cold caches, no summary yet), as after a restart with a fresh store.
  const ends = options.lastRequests === undefined ? allEnds : allEnds.slice(Math.max(0, allEnds.length - options.lastRequests));
  const tokensOf = (view: readonly OpenAIChatMessage[]) => view.reduce((a, m) => a + count(m), REQUEST_OVERHEAD_TOKENS);
  const all: { name: string; views: OpenAIChatMessage[][]; failed: number; over: number; extended: number; previous?: string[]; firstError?: string }[] = [
    { name: NO_COMPRESSION, views: [], failed: 0, over: 0, extended: 0 },
    ...systems.map((s) => ({ name: s.name, views: [], failed: 0, over: 0, extended: 0 })),
  ];
  const keys = new WeakMap<object, string>();
  const keyOf = (m: OpenAIChatMessage) => {
    let k = keys.get(m);
    if (k === undefined) keys.set(m, (k = canonicalJson(m)));
    return k;
  };
  let outputTokens = 0;
  for (const end of ends) {
    outputTokens += count(conversation[end]);
    const history = conversation.slice(0, end);
    for (let i = 0; i < all.length; i++) {
      const row = all[i];
      let view: unknown;
      try {
        view = i === 0 ? history : await systems[i - 1].viewOf(history.slice(), budget, chatId);
      } catch (error) {
        row.failed++;
        row.firstError ??= error instanceof Error ? error.message : String(error);
        continue;
      }
      if (!isMessageList(view)) {
        row.failed++;
        row.firstError ??= 'the view is not a list of messages';
        continue;
      }
      row.views.push(view);
      if (tokensOf(view) > budget) row.over++;
      const viewKeys = view.map(keyOf);
      if (row.previous && row.previous.length <= viewKeys.length && row.previous.every((k, j) => k === viewKeys[j])) row.extended++;
      row.previous = viewKeys;
    }
  }
  return {
    budget,
    requests: ends.length,
    outputTokens,
    systems: all.map((r) => ({ name: r.name, views: r.views, failedRequests: r.failed, overBudgetRequests: r.over, extendedPrevious: r.extended, ...(r.firstError ? { firstError: r.firstError } : {}) })),
  };
}

/** Bills recorded views under one rule set and model. */
export function economyOfViews(
  replay: ReplayViews,
  rules: CacheRules,
  model: string | ModelPrice,
  options: { countMessage?: (m: OpenAIChatMessage) => number; tools?: readonly unknown[]; simulate?: SimulateOptions } = {},
): EconomyResult {
  const price = typeof model === 'string' ? priceOf(model) : model;
  const count = options.countMessage ?? defaultMessageCounter();
  const systems = replay.systems.map((s): SystemEconomy => {
    const requests: CacheRequest[] = s.views.map((messages) => (options.tools ? { messages, tools: options.tools } : { messages }));
    const sim = simulateCache(requests, rules, count, price, options.simulate);
    return {
      name: s.name,
      requests: sim.requests,
      failedRequests: s.failedRequests,
      overBudgetRequests: s.overBudgetRequests,
      inputTokens: sim.inputTokens,
      cachedTokens: sim.cachedTokens,
      cacheWriteTokens: sim.cacheWriteTokens,
      cachedShare: sim.cachedShare,
      cost: sim.cost,
      costWithoutCache: sim.costWithoutCache,
    };
  });
  return {
    rules,
    model: price,
    budget: replay.budget,
    requests: replay.requests,
    outputTokens: replay.outputTokens,
    outputCost: price.output === null ? null : (replay.outputTokens * price.output) / 1e6,
    systems,
  };
}

/** Replays a conversation through every system and bills each system's views (see the file comment). */
export async function replayEconomy(options: EconomyOptions): Promise<EconomyResult> {
  const count = options.countMessage ?? defaultMessageCounter();
  const replay = await collectViews(options.conversation, options.systems, options.budget, { chatId: options.chatId, countMessage: count });
  return economyOfViews(replay, options.rules, options.model, { countMessage: count, tools: options.tools, simulate: options.simulate });
}
