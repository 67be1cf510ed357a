import { RECALL_TOOL_NAME } from './tool-definition.js';
import { ANTHROPIC_RECALL_STREAM } from './anthropic-stream.js';
import { isFields, type Fields, type RecallAsk, type RecallDialect } from './dialect.js';

/** A client-run `ctxfold_recall` call: a `tool_use` block with its name (a `server_tool_use` block is the provider's). */
export const isRecallBlock = (b: unknown): b is Fields => isFields(b) && b.type === 'tool_use' && b.name === RECALL_TOOL_NAME;
/** Blocks the application (or the provider) acts on: any tool use. */
const isToolBlock = (b: unknown): boolean => isFields(b) && typeof b.type === 'string' && b.type.endsWith('tool_use');
const contentOf = (message: Fields): unknown[] => (Array.isArray(message.content) ? message.content : []);

/**
 * Recall calls in a Messages response: answerable when it stopped for `tool_use` and every tool
 * use block is a `ctxfold_recall` call (its text and thinking blocks go into the history with
 * them); one that also uses the application's or the provider's tools, or stopped for anything
 * else (a call cut by `max_tokens`), is not.
 */
function read(message: Fields): RecallAsk | undefined {
  const content = contentOf(message);
  const recalls = content.filter(isRecallBlock);
  if (recalls.length === 0) return undefined;
  const calls = recalls.map((b) => ({ id: typeof b.id === 'string' ? b.id : '', arguments: JSON.stringify(b.input ?? {}) }));
  const others = content.some((b) => isToolBlock(b) && !isRecallBlock(b));
  return { calls, answerable: !others && message.stop_reason === 'tool_use' };
}

/**
 * A copy of a Messages response without its `ctxfold_recall` blocks; one left with no tool use
 * that stopped for `tool_use` stops for `end_turn`. Invariant: a response without recall calls is
 * returned as is (the same object).
 */
export function withoutAnthropicRecallCalls<T>(message: T): T {
  if (!isFields(message) || !contentOf(message).some(isRecallBlock)) return message;
  const content = contentOf(message).filter((b) => !isRecallBlock(b));
  const stop = message.stop_reason === 'tool_use' && !content.some(isToolBlock) ? 'end_turn' : message.stop_reason;
  return { ...message, content, stop_reason: stop } as T;
}

/**
 * Recall on `POST /messages` (Anthropic): the model's turn is its assistant message, every block
 * as it came (thinking blocks must come back unchanged), and the answers are `tool_result` blocks
 * in the one user message that follows it.
 */
export const ANTHROPIC_RECALL: RecallDialect = Object.freeze<RecallDialect>({
  format: 'anthropic' as const,
  listField: 'messages' as const,
  noToolChoice: Object.freeze({ type: 'none' }),
  read,
  turn: (message: Fields) => [{ role: 'assistant', content: contentOf(message) }],
  result: (call, text) => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: text }] }),
  combine: (results) => [{ role: 'user', content: results.flatMap((r) => (isFields(r) && Array.isArray(r.content) ? r.content : [])) }],
  without: withoutAnthropicRecallCalls,
  // A Messages response echoes nothing of its request's tools.
  withoutTool: (response) => response,
  stream: ANTHROPIC_RECALL_STREAM,
});
