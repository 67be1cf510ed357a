import type { MessageLens } from '../../formats/lens.js';
import { openaiChatLens, type OpenAIChatMessage } from '../../formats/openai-chat/lens.js';
import {
  callIdsUnique, callsAnswered, contentPresent, legacyFunctionShape, resultsHaveCall, resultsUnique, toolMessageHasId,
  type Rule, type Violation,
} from './rules.js';
import { scanCalls } from '../turns.js';

/** A provider profile: the lens that reads its messages and the list of rules it enforces. */
export interface Profile<M> {
  readonly name: string;
  readonly lens: MessageLens<M>;
  readonly rules: readonly Rule<M>[];
}

/** OpenAI Chat Completions: the rules its API enforces with a 400. */
export const openaiProfile: Profile<OpenAIChatMessage> = {
  name: 'openai',
  lens: openaiChatLens,
  rules: [callsAnswered, resultsHaveCall, resultsUnique, callIdsUnique, toolMessageHasId, legacyFunctionShape, contentPresent],
};

/**
 * Checks a message sequence against every rule of a profile. Returns all violations ordered by
 * message index; an empty list means the provider accepts the sequence's tool-call structure.
 */
export function validateMessages<M>(messages: readonly M[], profile: Profile<M>): Violation[] {
  const structure = scanCalls(messages, profile.lens);
  const input = { messages, lens: profile.lens, structure };
  const out: Violation[] = [];
  for (const rule of profile.rules) out.push(...rule.check(input));
  return out.sort((a, b) => a.index - b.index);
}
