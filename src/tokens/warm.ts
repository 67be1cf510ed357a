import type { MessageLens } from '../formats/lens.js';
import type { TokenCounter } from './counter.js';

export { inSlices } from './slices.js';

/**
 * Counts a history in event-loop-friendly slices and remembers it in the counter, so the
 * synchronous plan that follows costs one comparison per message.
 */
export async function warmCounts<M>(counter: TokenCounter, messages: readonly M[], lens: MessageLens<M>, sliceMs?: number): Promise<void> {
  await counter.messagesInSlices(messages, lens, sliceMs);
}
