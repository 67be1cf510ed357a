import { RECALL_TOOL_NAME } from './tool-definition.js';
import { CHAT_RECALL_STREAM } from './chat-stream.js';
import { isFields, type Fields, type RecallAsk, type RecallDialect } from './dialect.js';

const isRecallCall = (c: unknown): boolean => isFields(c) && isFields(c.function) && c.function.name === RECALL_TOOL_NAME;

/** The tool calls of a choice's message, or an empty list. */
function callsOf(choice: unknown): unknown[] {
  return isFields(choice) && isFields(choice.message) && Array.isArray(choice.message.tool_calls) ? choice.message.tool_calls : [];
}

/**
 * Recall calls in a Chat Completions response: answerable when the response has one choice whose
 * tool calls are all `ctxfold_recall` (its text, if any, goes into the history with them); a
 * response with several choices, or mixing in the application's calls, is not.
 */
function read(response: Fields): RecallAsk | undefined {
  const choices = Array.isArray(response.choices) ? response.choices : [];
  if (!choices.some((c) => callsOf(c).some(isRecallCall))) return undefined;
  const own = callsOf(choices[0]);
  const calls = own.filter(isRecallCall).map((c) => {
    const call = c as Fields;
    const f = call.function as Fields;
    return { id: typeof call.id === 'string' ? call.id : '', arguments: typeof f.arguments === 'string' ? f.arguments : '' };
  });
  return { calls, answerable: choices.length === 1 && calls.length > 0 && calls.length === own.length };
}

/**
 * A copy of a Chat Completions response without its `ctxfold_recall` calls, in every choice: a
 * message left with no call loses `tool_calls`, and its `finish_reason` `tool_calls` becomes
 * `stop`. Invariant: a response without recall calls is returned as is (the same object).
 */
export function withoutRecallCalls<T>(response: T): T {
  if (!isFields(response) || !Array.isArray(response.choices)) return response;
  let changed = false;
  const choices = response.choices.map((choice: unknown) => {
    const calls = callsOf(choice);
    const kept = calls.filter((c) => !isRecallCall(c));
    if (kept.length === calls.length) return choice;
    changed = true;
    const { message: whole, finish_reason: finish } = choice as Fields;
    const { tool_calls: _dropped, ...message } = whole as Fields;
    return {
      ...(choice as Fields),
      message: kept.length > 0 ? { ...message, tool_calls: kept } : message,
      finish_reason: kept.length === 0 && finish === 'tool_calls' ? 'stop' : finish,
    };
  });
  return (changed ? { ...response, choices } : response) as T;
}

/**
 * Recall on `POST /chat/completions`: the model's turn is its assistant message (text and
 * `tool_calls`), each call answered by a `tool` message with its `tool_call_id`.
 */
export const CHAT_RECALL: RecallDialect = Object.freeze<RecallDialect>({
  format: 'openai' as const,
  listField: 'messages' as const,
  noToolChoice: 'none',
  read,
  turn(response: Fields) {
    const message = ((response.choices as Fields[])[0].message ?? {}) as Fields;
    return [{ role: 'assistant', content: typeof message.content === 'string' ? message.content : null, tool_calls: message.tool_calls }];
  },
  result: (call, text) => ({ role: 'tool', tool_call_id: call.id, content: text }),
  without: withoutRecallCalls,
  // A chat completion echoes nothing of its request's tools.
  withoutTool: (response) => response,
  stream: CHAT_RECALL_STREAM,
});
