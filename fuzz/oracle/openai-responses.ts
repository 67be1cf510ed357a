import type { ResponsesItem } from '../../src/formats/openai-responses/types.js';

/**
 * An independent checker of OpenAI Responses `input` lists, written from the provider notes
 * (../shared/provider-rules.md, "OpenAI Responses API" and I1-I6) and the API reference, sharing
 * no code with src (type imports only). It models what the API checks by `call_id` over the whole
 * input, plus the one ordering rule ctxfold promises on top (an output is not separated from its
 * call by a user, system or developer message):
 * - every call item (function, custom tool, local shell, computer, shell, apply patch) has an
 *   output with its `call_id` after it ("No tool output found for function call X.");
 * - every output has a call with its `call_id` before it ("No tool call found for function call
 *   output with call_id X."), and a call has one output;
 * - `call_id`s of calls are unique in the request; item `id`s are unique ("Duplicate item found");
 * - a reasoning item is followed right away by a model item ("... was provided without its
 *   required following item.");
 * - items have the shape the API reads (message roles and content, string call_id/name/arguments).
 */

/** One problem the checker found: the item index, a short code and what is wrong. */
export interface ResponsesCheckProblem {
  readonly index: number;
  readonly code: string;
  readonly detail: string;
}

type Obj = Record<string, unknown>;

const CALL_TYPES = ['function_call', 'custom_tool_call', 'local_shell_call', 'computer_call', 'shell_call', 'apply_patch_call'];
const OUTPUT_FOR: Record<string, string> = {
  function_call_output: 'function_call',
  custom_tool_call_output: 'custom_tool_call',
  local_shell_call_output: 'local_shell_call',
  computer_call_output: 'computer_call',
  shell_call_output: 'shell_call',
  apply_patch_call_output: 'apply_patch_call',
};
/** Items the model produces: what may follow a reasoning item. */
const MODEL_ITEMS = ['reasoning', ...CALL_TYPES, 'web_search_call', 'file_search_call', 'code_interpreter_call', 'image_generation_call', 'mcp_call', 'mcp_list_tools', 'mcp_approval_request'];
const ROLES = ['user', 'assistant', 'system', 'developer'];

function itemType(item: Obj): string | undefined {
  if (typeof item.type === 'string') return item.type;
  return item.type === undefined && typeof item.role === 'string' ? 'message' : undefined;
}

/** Every problem of `items` as a Responses `input` list (empty when the API would take it). */
export function checkResponsesInput(items: readonly unknown[]): ResponsesCheckProblem[] {
  const problems: ResponsesCheckProblem[] = [];
  const say = (index: number, code: string, detail: string) => problems.push({ index, code, detail });
  const callAt = new Map<string, { index: number; type: string; answered: boolean }>();
  const itemIds = new Map<string, number>();
  // The last user/system/developer message seen so far: an output must not stand after one that follows its call.
  let lastBreak = -1;
  items.forEach((raw, index) => {
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      say(index, 'not-an-item', 'not an object');
      return;
    }
    const item = raw as Obj;
    const type = itemType(item);
    if (type === undefined) {
      say(index, 'no-type', 'neither a type nor a role');
      return;
    }
    const ownsId = !(type === 'local_shell_call_output' && item.call_id === undefined);
    if (ownsId && typeof item.id === 'string') {
      const seen = itemIds.get(item.id);
      if (seen !== undefined) say(index, 'duplicate-item', `Duplicate item found with id ${item.id} (first at ${seen})`);
      else itemIds.set(item.id, index);
    }
    if (type === 'message') {
      if (!ROLES.includes(String(item.role))) say(index, 'bad-role', `role ${String(item.role)}`);
      if (typeof item.content !== 'string' && !Array.isArray(item.content)) say(index, 'bad-content', 'content is neither a string nor a list');
      if (item.role !== 'assistant') lastBreak = index;
    }
    if (type === 'reasoning') {
      const next = items[index + 1] as Obj | undefined;
      const nextType = next && typeof next === 'object' ? itemType(next) : undefined;
      const ok = nextType !== undefined && (MODEL_ITEMS.includes(nextType) || (nextType === 'message' && next!.role === 'assistant'));
      if (!ok) say(index, 'reasoning-alone', `Item '${String(item.id)}' of type 'reasoning' was provided without its required following item`);
    }
    if (CALL_TYPES.includes(type)) {
      if (typeof item.call_id !== 'string') {
        say(index, 'bad-call', 'call_id is not a string');
        return;
      }
      if (type === 'function_call' && (typeof item.name !== 'string' || typeof item.arguments !== 'string')) say(index, 'bad-call', 'name and arguments must be strings');
      if (type === 'custom_tool_call' && (typeof item.name !== 'string' || typeof item.input !== 'string')) say(index, 'bad-call', 'name and input must be strings');
      if (callAt.has(item.call_id)) say(index, 'call-id-repeated', `call_id ${item.call_id} was used by the call at ${callAt.get(item.call_id)!.index}`);
      else callAt.set(item.call_id, { index, type, answered: false });
    }
    if (type in OUTPUT_FOR) {
      const id = type === 'local_shell_call_output' && item.call_id === undefined ? item.id : item.call_id;
      if (typeof id !== 'string') {
        say(index, 'bad-output', 'call_id is not a string');
        return;
      }
      const call = callAt.get(id);
      // A function_call_output may answer any client-run call (clients answer local shell calls with one).
      if (!call || (type !== 'function_call_output' && OUTPUT_FOR[type] !== call.type)) {
        say(index, 'output-without-call', `No tool call found for function call output with call_id ${id}`);
        return;
      }
      if (call.answered) say(index, 'output-repeated', `second output for ${id}`);
      if (lastBreak > call.index) say(index, 'output-after-message', `output for ${id} stands after the message at ${lastBreak}, which follows its call`);
      call.answered = true;
    }
  });
  for (const [id, call] of callAt) if (!call.answered) say(call.index, 'call-without-output', `No tool output found for function call ${id}`);
  return problems.sort((a, b) => a.index - b.index);
}
