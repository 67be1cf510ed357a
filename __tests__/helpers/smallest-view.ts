import { openaiChatLens } from '../../src/formats/openai-chat/lens.js';
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';
import type { TokenCounter } from '../../src/tokens/counter.js';
import { unitStarts } from './oracle.js';
import { expectedHeadEnd } from './view-checks.js';

/** What no view of an OpenAI Chat history may leave out once the kept tail yields, read apart from the planner. */
export interface SmallestView {
  /** Index of the last user message (-1: none). */
  readonly lastUser: number;
  /** Start of the last unit (the oracle's own grouping): it and what follows are always sent. */
  readonly lastUnit: number;
  /** Tokens of the head, system and developer messages, the last user message and the last unit on, request overhead included. */
  readonly tokens: number;
}

/**
 * The smallest view a kept tail that yields to the budget allows: the head (`keepFirst`, rounded
 * out by `expectedHeadEnd`), system and developer messages, the last user message and everything
 * from the last unit on. Any view within budget needs at least these tokens.
 */
export function smallestYieldingView(messages: readonly OpenAIChatMessage[], keepFirst: number, counter: TokenCounter): SmallestView {
  const head = expectedHeadEnd(messages, keepFirst);
  const starts = unitStarts(messages);
  const lastUnit = starts.length > 0 ? starts[starts.length - 1] : messages.length;
  let lastUser = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === 'user') {
      lastUser = i;
      break;
    }
  }
  let tokens = counter.requestOverhead;
  messages.forEach((m, i) => {
    if (i < head || i >= lastUnit || i === lastUser || m.role === 'system' || m.role === 'developer') tokens += counter.message(m, openaiChatLens);
  });
  return { lastUser, lastUnit, tokens };
}
