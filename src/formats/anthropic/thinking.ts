import { onlyToolResults, startsWithThinking } from './blocks.js';
import type { AnthropicMessage } from './types.js';

/**
 * Anthropic's rule for thinking in a tool loop, in one place for the lens's atomic constraints
 * and the profile's rule. With thinking on, the API answers a history whose last turn is an
 * unfinished tool loop with
 *   "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`. When
 *   `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding
 *   the lastmost set of `tool_use` and `tool_result` blocks). ..."
 * unless the assistant message that started the loop (the first after the last user message with
 * text) starts with its original thinking block. A tool loop is that assistant message and every
 * assistant and `tool_result`-only user message after it, up to the next user message with text.
 */

/** True for a message that ends a tool loop: a user message with anything but `tool_result` blocks. */
function isHumanTurn(m: AnthropicMessage): boolean {
  return m?.role === 'user' && !onlyToolResults(m);
}

/**
 * Index of the assistant message that started the tool loop the history ends in, when the history
 * ends in one (its last message carries only `tool_result` blocks); -1 otherwise.
 */
export function openLoopStart(messages: readonly AnthropicMessage[]): number {
  const n = messages.length;
  if (n === 0 || !onlyToolResults(messages[n - 1])) return -1;
  let start = -1;
  for (let i = n - 1; i >= 0 && !isHumanTurn(messages[i]); i--) if (messages[i]?.role === 'assistant') start = i;
  return start;
}

/**
 * Marks in `joins` the cuts that would leave the unfinished tool loop the history ends in without
 * the thinking-led assistant message that started it: `joins[i] = 1` when messages[i] is an
 * assistant message that does not start with thinking, right after a `tool_result`-only user
 * message, in that loop, when its first assistant message starts with thinking. Finished loops
 * are not joined: the API does not check thinking in earlier turns, so they may be cut step by
 * step. Call only when the history uses thinking. Linear.
 */
export function thinkingJoins(messages: readonly AnthropicMessage[], joins: Uint8Array): boolean {
  let any = false;
  let loopStarted = false; // an assistant message has started the current loop
  let thinkingLed = false; // ... and it started with thinking
  const from = openLoopStart(messages);
  if (from < 0) return false;
  for (let i = from; i < messages.length; i++) {
    const m = messages[i];
    if (isHumanTurn(m)) {
      loopStarted = false;
      continue;
    }
    if (m?.role !== 'assistant') continue;
    if (!loopStarted) {
      loopStarted = true;
      thinkingLed = startsWithThinking(m);
      continue;
    }
    if (thinkingLed && !startsWithThinking(m) && i > 0 && onlyToolResults(messages[i - 1])) {
      joins[i] = 1;
      any = true;
    }
  }
  return any;
}
