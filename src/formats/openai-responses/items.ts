import type { CallRef, InPlaceCall, ResultRef } from '../lens.js';
import type { ResponsesItem } from './types.js';
import { contentText } from '../openai-chat/lens.js';

/**
 * What each Responses item type is, and the texts it bills. One table for the lens, the rules and
 * the converters: call types answered by an output item of their own (paired by `call_id`), calls
 * the provider runs and answers inside the same item, and the rest.
 */

type Obj = Record<string, unknown>;

/** The roles a message item may have. */
export const MESSAGE_ROLES: readonly string[] = Object.freeze(['user', 'assistant', 'system', 'developer']);

/** Call item types answered by an output item of their own, paired by `call_id`, and that output's type. */
export const OUTPUT_OF: Readonly<Record<string, string>> = Object.freeze({
  function_call: 'function_call_output',
  custom_tool_call: 'custom_tool_call_output',
  local_shell_call: 'local_shell_call_output',
  computer_call: 'computer_call_output',
  shell_call: 'shell_call_output',
  apply_patch_call: 'apply_patch_call_output',
});

/** Output item types, each answering one call by `call_id`. */
export const OUTPUT_TYPES: readonly string[] = Object.freeze(Object.values(OUTPUT_OF));

/** The tool name a built-in call type stands for (function and custom calls carry their own `name`). */
const BUILT_IN_NAME: Readonly<Record<string, string>> = Object.freeze({
  local_shell_call: 'local_shell',
  computer_call: 'computer',
  shell_call: 'shell',
  apply_patch_call: 'apply_patch',
  web_search_call: 'web_search',
  file_search_call: 'file_search',
  code_interpreter_call: 'code_interpreter',
  image_generation_call: 'image_generation',
  mcp_list_tools: 'mcp_list_tools',
});

/** Calls the provider runs itself and answers inside the same item (nothing can split them). */
export const IN_PLACE_TYPES: readonly string[] = Object.freeze([
  'web_search_call', 'file_search_call', 'code_interpreter_call', 'image_generation_call', 'mcp_call', 'mcp_list_tools', 'mcp_approval_request',
]);

/**
 * A call as this lens reads it: a `CallRef` that also names the item type that made it, so an
 * output of the matching type can be built for it (`custom_tool_call` wants `custom_tool_call_output`).
 */
export interface ResponsesCallRef extends CallRef {
  readonly itemType: string;
}

/** The item type a call was read from, when the `CallRef` came from this lens; undefined otherwise. */
export function itemTypeOf(call: CallRef): string | undefined {
  const t = (call as Partial<ResponsesCallRef>).itemType;
  return typeof t === 'string' ? t : undefined;
}

/** An item's type: its `type`, or `message` for an object with a `role` and no `type`; undefined when it has neither. */
export function typeOf(item: unknown): string | undefined {
  if (typeof item !== 'object' || item === null) return undefined;
  const o = item as Obj;
  if (typeof o.type === 'string') return o.type;
  return o.type === undefined && typeof o.role === 'string' ? 'message' : undefined;
}

/** Text of a string or a list of parts (`text`, or `refusal`, of each part, joined); other parts add nothing. Same rule as OpenAI Chat content. */
export const partsText = contentText;

/** A value as the model is shown it: a string as is, anything else as JSON, nothing as ''. */
export function jsonText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return JSON.stringify(value) ?? '';
}

/** Texts of a list of `{ text }` objects (reasoning summary or content), one per line. */
function textsOf(list: unknown): string {
  if (!Array.isArray(list)) return '';
  const texts: string[] = [];
  for (const x of list) if (x && typeof x === 'object' && typeof (x as Obj).text === 'string') texts.push((x as Obj).text as string);
  return texts.join('\n');
}

/** The billed text of a reasoning item: its summary and its readable content; `encrypted_content` is opaque and counts nothing. */
export function reasoningText(item: ResponsesItem): string {
  const summary = textsOf(item.summary);
  const content = textsOf(item.content);
  return summary && content ? `${summary}\n${content}` : summary || content;
}

/** The call a call item (a key of `OUTPUT_OF`) opens: its `call_id`, tool name, and arguments as billed. */
export function readCall(item: ResponsesItem, type: string): ResponsesCallRef {
  const id = typeof item.call_id === 'string' ? item.call_id : undefined;
  switch (type) {
    case 'function_call':
      return { id, name: typeof item.name === 'string' ? item.name : '', arguments: jsonText(item.arguments), itemType: type };
    case 'custom_tool_call':
      return { id, name: typeof item.name === 'string' ? item.name : '', arguments: jsonText(item.input), itemType: type };
    case 'apply_patch_call':
      return { id, name: BUILT_IN_NAME[type], arguments: jsonText(item.operation), itemType: type };
    default:
      // local_shell_call, computer_call, shell_call: what the model asked for is the action.
      return { id, name: BUILT_IN_NAME[type] ?? type, arguments: jsonText(item.action ?? item.actions), itemType: type };
  }
}

/** Text of a shell call's output: each command's stdout and stderr. */
function shellOutputText(output: unknown): string {
  if (!Array.isArray(output)) return jsonText(output);
  const out: string[] = [];
  for (const o of output) {
    if (!o || typeof o !== 'object') continue;
    const { stdout, stderr } = o as Obj;
    if (typeof stdout === 'string' && stdout !== '') out.push(stdout);
    if (typeof stderr === 'string' && stderr !== '') out.push(stderr);
  }
  return out.join('\n');
}

/**
 * The result an output item (one of `OUTPUT_TYPES`) carries: the `call_id` it answers (a local
 * shell output may name it in `id`, as the API reference has it) and its text. A computer call's
 * output is a screenshot: no text (its image is counted as media).
 */
export function readResult(item: ResponsesItem, type: string): ResultRef {
  const raw = type === 'local_shell_call_output' && item.call_id === undefined ? item.id : item.call_id;
  const content = type === 'computer_call_output' ? '' : type === 'shell_call_output' ? shellOutputText(item.output) : partsText(item.output);
  if (typeof raw === 'string') return { id: raw, content };
  return { idHint: typeof raw === 'number' && Number.isFinite(raw) ? String(raw) : undefined, content };
}

/** Logs a code interpreter call printed. */
function codeOutputText(outputs: unknown): string {
  if (!Array.isArray(outputs)) return '';
  const out: string[] = [];
  for (const o of outputs) if (o && typeof o === 'object' && typeof (o as Obj).logs === 'string') out.push((o as Obj).logs as string);
  return out.join('\n');
}

/** Texts of the passages a file search returned. */
function fileSearchText(results: unknown): string {
  return textsOf(results);
}

/**
 * The call an in-place item (one of `IN_PLACE_TYPES`) made and the result it holds, as billed:
 * a web search's results stay server-side (empty), an image generation's image is media, an MCP
 * call's output (or error) and a code interpreter's logs are text.
 */
export function readInPlace(item: ResponsesItem, type: string): InPlaceCall {
  const id = typeof item.id === 'string' ? item.id : undefined;
  const call = (name: string, args: string, result: string): InPlaceCall => ({ call: { id, name, arguments: args }, result: { id, name, content: result } });
  switch (type) {
    case 'mcp_call':
      return call(typeof item.name === 'string' ? item.name : '', jsonText(item.arguments), jsonText(item.output ?? item.error));
    case 'mcp_approval_request':
      return call(typeof item.name === 'string' ? item.name : '', jsonText(item.arguments), '');
    case 'mcp_list_tools':
      return call(BUILT_IN_NAME[type], jsonText(item.server_label), jsonText(item.tools));
    case 'code_interpreter_call':
      return call(BUILT_IN_NAME[type], jsonText(item.code), codeOutputText(item.outputs));
    case 'file_search_call':
      return call(BUILT_IN_NAME[type], jsonText(item.queries), fileSearchText(item.results));
    case 'image_generation_call':
      return call(BUILT_IN_NAME[type], '', '');
    default:
      return call(BUILT_IN_NAME[type] ?? type, jsonText(item.action), '');
  }
}
