import { selectLens } from '../formats/registry.js';
import type { FormatName } from '../formats/lens.js';
import type { TokenCounter } from '../tokens/counter.js';

/** Below this many new messages a history is counted synchronously by the plan itself. */
const SLICE_FROM_MESSAGES = 512;

/**
 * Counts the messages of a history that the counter does not know yet, in event-loop-friendly
 * slices, and remembers the history, so the synchronous plan that follows is all cache hits. Only
 * the new messages are shape-checked here; a history the counter already knows costs one
 * comparison per message.
 */
export async function countNewInSlices(counter: TokenCounter, messages: readonly unknown[], format: FormatName | 'auto'): Promise<void> {
  const { shared } = counter.recall(messages);
  if (messages.length - shared < SLICE_FROM_MESSAGES) return;
  const lens = selectLens(messages, format, 'messages', shared);
  await counter.messagesInSlices(messages, lens);
}
