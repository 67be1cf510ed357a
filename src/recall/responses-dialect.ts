import { RECALL_TOOL_NAME } from './tool-definition.js';
import { isFields, type Fields, type RecallAsk, type RecallDialect } from './dialect.js';

const isRecallCall = (item: unknown): boolean => isFields(item) && item.type === 'function_call' && item.name === RECALL_TOOL_NAME;
const isReasoning = (item: unknown): boolean => isFields(item) && item.type === 'reasoning';
const outputOf = (response: Fields): unknown[] => (Array.isArray(response.output) ? response.output : []);

/**
 * Recall calls in a Responses response. Answerable when the response completed and its output is
 * `ctxfold_recall` function calls and reasoning items only (the reasoning travels with the calls it
 * was produced with). Output that also holds text, another call or any other item, or a response
 * that did not complete (its arguments may be cut off), is not: it is passed on without the calls.
 */
function read(response: Fields): RecallAsk | undefined {
  const output = outputOf(response);
  const recalls = output.filter(isRecallCall) as Fields[];
  if (recalls.length === 0) return undefined;
  const calls = recalls.map((item) => ({ id: typeof item.call_id === 'string' ? item.call_id : '', arguments: typeof item.arguments === 'string' ? item.arguments : '' }));
  const completed = response.status === undefined || response.status === 'completed';
  return { calls, answerable: completed && output.every((item) => isRecallCall(item) || isReasoning(item)) };
}

/**
 * A copy of a Responses response without its `ctxfold_recall` function calls. A reasoning item left
 * with nothing after it (it went with the removed calls) is removed too: "Item 'rs_...' of type
 * 'reasoning' was provided without its required following item" would meet the application that
 * sends the output back. Invariant: a response without recall calls is returned as is (the same object).
 */
export function withoutResponsesRecallCalls<T>(response: T): T {
  if (!isFields(response) || !Array.isArray(response.output) || !response.output.some(isRecallCall)) return response;
  const kept = response.output.filter((item: unknown) => !isRecallCall(item));
  while (kept.length > 0 && isReasoning(kept[kept.length - 1])) kept.pop();
  return { ...response, output: kept } as T;
}

/**
 * Recall on `POST /responses` (an `input` list, no `previous_response_id`): the model's turn is its
 * output items as they came, reasoning included and in order (the API wants a reasoning item right
 * before the item it was produced with), each call answered by a `function_call_output` with its `call_id`.
 */
export const RESPONSES_RECALL: RecallDialect = Object.freeze<RecallDialect>({
  format: 'openai-responses' as const,
  listField: 'input' as const,
  read,
  turn: (response: Fields) => outputOf(response).slice(),
  result: (call, text) => ({ type: 'function_call_output', call_id: call.id, output: text }),
  without: withoutResponsesRecallCalls,
});
