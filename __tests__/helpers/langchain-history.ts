import type { BaseMessage } from '@langchain/core/messages';
import { toLangChain } from '../../bench/langchain-convert.js';
import { generateConversation } from '../../bench/fixtures/conversation.js';

/**
 * A generated tool-calling conversation as LangChain messages for an agent's input: the system
 * message apart (for `createAgent({ systemPrompt })`), every other message with an id (so the
 * agent's message reducer has nothing to add to the caller's objects), ending on a user message.
 */
export function langchainHistory(messages: number, seed: number): { systemPrompt: string; history: BaseMessage[] } {
  const conversation = generateConversation({ messages, seed });
  let end = conversation.length;
  while (end > 1 && conversation[end - 1].role !== 'user') end--;
  const [system, ...rest] = toLangChain(conversation.slice(0, end));
  rest.forEach((m, i) => {
    m.id = `m-${seed}-${i}`;
  });
  return { systemPrompt: typeof system.content === 'string' ? system.content : '', history: rest };
}
