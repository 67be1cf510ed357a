import type { CallRef, InPlaceCall, MessageKind, MessageLens, Reading, ResultRef } from '../lens.js';
import { kindByRole, NO_CALLS, NO_IN_PLACE, NO_RESULTS } from '../readings.js';
import { IN_PLACE_TYPES, itemTypeOf, OUTPUT_OF, OUTPUT_TYPES, partsText, readCall, readInPlace, readResult, reasoningText, typeOf } from './items.js';
import { responsesJoins } from './atomic-joins.js';
import { itemMediaTokens } from './media.js';
import { itemProblem } from './problem.js';
import type { ResponsesItem } from './types.js';


/** The kind of a message item, by its role. */
const MESSAGE_KINDS: Readonly<Record<string, MessageKind>> = Object.freeze({ user: 'user', assistant: 'assistant', system: 'system', developer: 'system' });

/** The reading of an item; its own id is its `id`, unless `ownsId` is false (the `id` names something else). */
function reading(kind: MessageKind, item: ResponsesItem, parts: { text?: string; calls?: readonly CallRef[]; results?: readonly ResultRef[]; inPlace?: readonly InPlaceCall[] }, ownsId = true): Reading {
  return {
    kind,
    role: kind === 'result' ? 'tool' : kind,
    text: parts.text ?? '',
    calls: parts.calls ?? NO_CALLS,
    results: parts.results ?? NO_RESULTS,
    inPlace: parts.inPlace ?? NO_IN_PLACE,
    hasUserText: kind === 'user',
    ownId: ownsId && typeof item.id === 'string' ? item.id : undefined,
  };
}

/**
 * Reads one item. Kinds: a user message is `user`; an assistant message, a reasoning item, a call
 * and an in-place call are `assistant` (one model response is split over such items); an output is
 * `result`; a system or developer message and a compaction item (pinned: it stands for the history
 * it compacted) are `system`; an MCP approval response is the user's decision (`user`); an item
 * reference and unknown types are `other`.
 */
function readItem(item: ResponsesItem): Reading {
  const type = typeOf(item);
  if (type === undefined) return reading('other', item, {});
  if (type === 'message') return reading(kindByRole(item.role, MESSAGE_KINDS), item, { text: partsText(item.content) });
  if (type === 'reasoning') return reading('assistant', item, { text: reasoningText(item) });
  if (Object.hasOwn(OUTPUT_OF, type)) return reading('assistant', item, { calls: [readCall(item, type)] });
  if (OUTPUT_TYPES.includes(type)) {
    // A local shell output without `call_id` names the call it answers in `id`: that is not its own id.
    const namesCall = type === 'local_shell_call_output' && item.call_id === undefined;
    return reading('result', item, { results: [readResult(item, type)] }, !namesCall);
  }
  if (IN_PLACE_TYPES.includes(type)) return reading('assistant', item, { inPlace: [readInPlace(item, type)] });
  if (type === 'compaction') return reading('system', item, {});
  if (type === 'mcp_approval_response') return reading('user', item, { text: typeof item.reason === 'string' ? item.reason : '' });
  return reading('other', item, {});
}

/**
 * The OpenAI Responses API lens: the items of a request's `input` list. Calls (`function_call`,
 * `custom_tool_call`, local shell, computer, shell and apply-patch calls) are items of their own,
 * answered by output items paired by `call_id`; the calls of one model response are consecutive
 * items (with reasoning and text items between them) and form one turn. In-place calls (web and
 * file search, code interpreter, image generation, MCP) carry their own result. A reasoning item
 * is never separated from the items after it in its model turn (the preamble message and calls
 * made with it), nor those from it.
 */
export const openaiResponsesLens: MessageLens<ResponsesItem> = {
  format: 'openai-responses',
  request: { messagesField: 'input', systemField: 'instructions' },
  read: readItem,
  mediaTokens: itemMediaTokens,
  // A reasoning item and the rest of its model turn (preamble, calls) are kept or dropped together;
  // an MCP approval response stays with its request.
  atomicJoins: responsesJoins,
  splitParallelCalls: true,
  cheapRead: true,
  stringContentIsText: true,
  summaryMessage: (text, role) => ({ type: 'message', role: role === 'system' ? 'developer' : 'user', content: text }),
  // A custom tool call is answered by a custom tool output; every other call by a function call
  // output, which the API also takes for local shell calls (the call's type travels on the CallRef
  // this lens made; a CallRef made elsewhere gets a function call output).
  missingResults: (calls, text) => calls.map((call) => ({
    type: itemTypeOf(call) === 'custom_tool_call' ? 'custom_tool_call_output' : 'function_call_output',
    call_id: call.id ?? '',
    output: text,
  })),
  // An output item carries one result: answering another call is a new call_id (a local shell
  // output that names its call in `id` keeps doing so).
  rekeyResult(m, _slot, call) {
    if (call.id === undefined) return m;
    if (typeOf(m) === 'local_shell_call_output' && m.call_id === undefined) return { ...m, id: call.id };
    return { ...m, call_id: call.id };
  },
  // A call item opens one call; its own item id (fc_...) stays, since it names the item, not the call.
  rekeyCall(m, slot, id) {
    const type = typeOf(m);
    if (slot !== 0 || type === undefined || !Object.hasOwn(OUTPUT_OF, type)) return m;
    return { ...m, call_id: id };
  },
  collapseResult(m, _slot, placeholder) {
    switch (typeOf(m)) {
      case 'function_call_output':
      case 'custom_tool_call_output':
      case 'local_shell_call_output':
      case 'apply_patch_call_output':
        return { ...m, output: placeholder };
      case 'shell_call_output': {
        const first = Array.isArray(m.output) ? (m.output[0] as Record<string, unknown> | undefined) : undefined;
        return { ...m, output: [{ ...first, stdout: placeholder, stderr: '' }] };
      }
      default:
        return m; // a computer call's screenshot has no text to clear
    }
  },
  // An output item carries exactly one result: removing it removes the item.
  removeResult: () => undefined,
  problem: itemProblem,
};
