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

/** True for the `ctxfold_recall` entry of a Responses request's `tools` (a function tool of that name). */
const isRecallTool = (tool: unknown): boolean => isFields(tool) && tool.type === 'function' && tool.name === RECALL_TOOL_NAME;

/**
 * A copy of a Responses response whose echo of the request's `tools` leaves out the
 * `ctxfold_recall` tool ctxfold added, so the application sees the tools it sent. Invariant: a
 * response that echoes no such tool is returned as is (the same object).
 */
export function withoutResponsesRecallTool<T>(response: T): T {
  if (!isFields(response) || !Array.isArray(response.tools) || !response.tools.some(isRecallTool)) return response;
  return { ...response, tools: response.tools.filter((tool: unknown) => !isRecallTool(tool)) } as T;
}
