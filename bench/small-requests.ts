/**
 * The requests and windows of the small-conversation rows (`small.ts`): corpus conversations of
 * 20 to 300 messages and the three windows each is run against. Loads no tokenizer.
 */
import type { createTokenCounter, OpenAIChatMessage } from '../src/index.js';
import { requestFloor, viewTokens } from './budget.js';
import { modelRequestEnds } from './fixtures/conversation.js';

/** The sizes measured, in messages. */
export const SMALL_SIZES = [20, 50, 100, 300] as const;

/** How the window stands to the request. */
export type WindowCase = 'under' | 'at' | 'over';
export const WINDOW_CASES: readonly WindowCase[] = ['under', 'at', 'over'];

/** The window of the `under` rows: gpt-4o's. */
export const UNDER_WINDOW_TOKENS = 128_000;

/** The workload name of one size and window case, as in the results' rows. */
export const smallWorkload = (size: number, windowCase: WindowCase) => `small-${size}/${windowCase}`;

/**
 * `count` requests of about `size` messages from the corpus: the k-th starts at conversation
 * `k * stride`, takes the next conversations after it into the same chat (without their system
 * messages) until it has `size` messages, and ends before the last assistant message at or
 * before `size` (a request ends where the model answers). Same corpus, same requests.
 */
export function smallRequests(corpus: readonly OpenAIChatMessage[][], size: number, count: number): OpenAIChatMessage[][] {
  const out: OpenAIChatMessage[][] = [];
  const stride = Math.max(1, Math.floor(corpus.length / count));
  for (let k = 0; k < count; k++) {
    const chat: OpenAIChatMessage[] = [];
    for (let c = k * stride; chat.length <= size; c++) {
      const conversation = corpus[c % corpus.length];
      chat.push(...(chat.length === 0 ? conversation : conversation.filter((m) => m.role !== 'system')));
    }
    const ends = modelRequestEnds(chat).filter((e) => e <= size);
    out.push(chat.slice(0, ends[ends.length - 1]));
  }
  return out;
}

/** The window of `request` in `windowCase` (tokens by the reference counter, all overheads in). */
export function windowOf(request: readonly OpenAIChatMessage[], windowCase: WindowCase, reference: ReturnType<typeof createTokenCounter>): number {
  if (windowCase === 'under') return UNDER_WINDOW_TOKENS;
  const tokens = viewTokens(request, reference);
  if (windowCase === 'at') return tokens;
  return Math.max(Math.floor(tokens / 4), Math.ceil(1.25 * requestFloor(request, request.length, reference)));
}

