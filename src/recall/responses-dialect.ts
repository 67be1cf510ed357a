import { isFields, type Fields, type RecallAsk, type RecallDialect } from './dialect.js';
import { RESPONSES_RECALL_STREAM } from './responses-stream.js';
import { isReasoning, isRecallCall, withoutResponsesRecallCalls, withoutResponsesRecallTool } from './responses-without.js';

export { withoutResponsesRecallCalls };

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
 * Recall on `POST /responses` (an `input` list, no `previous_response_id`): the model's turn is its
 * output items as they came, reasoning included and in order (the API wants a reasoning item right
 * before the item it was produced with), each call answered by a `function_call_output` with its `call_id`.
 */
export const RESPONSES_RECALL: RecallDialect = Object.freeze<RecallDialect>({
  format: 'openai-responses' as const,
  listField: 'input' as const,
  noToolChoice: 'none',
  read,
  turn: (response: Fields) => outputOf(response).slice(),
  result: (call, text) => ({ type: 'function_call_output', call_id: call.id, output: text }),
  without: withoutResponsesRecallCalls,
  withoutTool: withoutResponsesRecallTool,
  stream: RESPONSES_RECALL_STREAM,
});
