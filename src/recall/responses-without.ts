import { RECALL_TOOL_NAME } from './tool-definition.js';
import { isFields } from './dialect.js';

/** True for a `ctxfold_recall` function call item of a Responses output. */
export const isRecallCall = (item: unknown): boolean => isFields(item) && item.type === 'function_call' && item.name === RECALL_TOOL_NAME;
/** True for a reasoning item. */
export const isReasoning = (item: unknown): boolean => isFields(item) && item.type === 'reasoning';

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

