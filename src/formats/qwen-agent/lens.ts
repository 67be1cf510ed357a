import type { CallRef, MessageKind, MessageLens, Reading, ResultRef } from '../lens.js';
import { kindByRole, messageObjectProblem, NO_CALLS, NO_IN_PLACE, NO_RESULTS } from '../readings.js';
import { CONTENT_ITEM_KEYS, contentImageTokens, contentText } from './content.js';
import type { QwenAgentMessage } from './types.js';
import { describe } from '../describe.js';

const ROLES: readonly string[] = Object.freeze(['system', 'user', 'assistant', 'function']);

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The `extra.function_id` of a message, when it is a string (the key that pairs a call and its result). */
export function functionIdOf(m: QwenAgentMessage): string | undefined {
  const extra = m.extra;
  return isObj(extra) && typeof extra.function_id === 'string' ? extra.function_id : undefined;
}


/** The kind of a message, by its role. */
const KINDS: Readonly<Record<string, MessageKind>> = Object.freeze({ system: 'system', user: 'user', assistant: 'assistant', function: 'result' });

function readMessage(m: QwenAgentMessage): Reading {
  const kind = kindByRole(m.role, KINDS);
  const role = kind === 'result' ? 'tool' : kind === 'other' ? 'other' : kind;
  const content = contentText(m.content);
  // Reasoning is sent back to the model (and billed) as Qwen-Agent keeps it: count it with the text.
  const reasoning = kind === 'assistant' ? contentText(m.reasoning_content) : '';
  const fc = m.function_call;
  const calls: readonly CallRef[] = kind === 'assistant' && isObj(fc)
    ? [{ id: functionIdOf(m), name: typeof fc.name === 'string' ? fc.name : '', arguments: typeof fc.arguments === 'string' ? fc.arguments : '' }]
    : NO_CALLS;
  const results: readonly ResultRef[] = kind === 'result'
    ? [{ id: functionIdOf(m), name: typeof m.name === 'string' && m.name !== '' ? m.name : undefined, content }]
    : NO_RESULTS;
  return {
    kind,
    role,
    text: kind === 'result' ? '' : reasoning !== '' && content !== '' ? `${reasoning}\n\n${content}` : reasoning || content,
    calls,
    results,
    hasUserText: m.role === 'user',
    inPlace: NO_IN_PLACE,
  };
}

/** Why `content` (or `reasoning_content`) is not Qwen-Agent content, relative to the message; undefined when it is. */
function contentProblem(value: unknown, field: string): { field: string; rule: string } | undefined {
  if (value === null || typeof value === 'string') return undefined;
  if (!Array.isArray(value)) return { field, rule: `must be a string or a list of content items, got ${describe(value)}` };
  for (let k = 0; k < value.length; k++) {
    const item: unknown = value[k];
    const expected = 'must be an object with exactly one of text, image, file, audio, video (a Qwen-Agent ContentItem)';
    if (!isObj(item)) return { field: `${field}[${k}]`, rule: `${expected}, got ${describe(item)}` };
    const keys = Object.keys(item).filter((key) => item[key] !== undefined && item[key] !== null);
    const unknown = keys.find((key) => !CONTENT_ITEM_KEYS.includes(key));
    if (unknown !== undefined) return { field: `${field}[${k}].${unknown}`, rule: `is not a field of a Qwen-Agent content item (${expected})` };
    if (keys.length !== 1) return { field: `${field}[${k}]`, rule: `${expected}, got ${keys.length === 0 ? 'none' : keys.join(' and ')}` };
    if (keys[0] === 'text' && typeof item.text !== 'string') return { field: `${field}[${k}].text`, rule: `must be a string, got ${describe(item.text)}` };
  }
  return undefined;
}

/** Qwen-Agent parallel calls split one model response over messages: a text or reasoning message belongs with the assistant message after it. */
function joinResponses(messages: readonly QwenAgentMessage[], read: (m: QwenAgentMessage) => Reading): Uint8Array | undefined {
  const n = messages.length;
  let joins: Uint8Array | undefined;
  for (let i = 1; i < n; i++) {
    const prev = read(messages[i - 1]);
    if (prev.kind !== 'assistant' || prev.calls.length > 0) continue;
    const cur = read(messages[i]);
    if (cur.kind !== 'assistant') continue;
    joins ??= new Uint8Array(n);
    joins[i] = 1;
  }
  return joins;
}

/**
 * The Qwen-Agent lens: roles system/user/assistant/function. A call is an assistant message's
 * `function_call`, keyed by `extra.function_id` where present (id-less otherwise, paired by name
 * and position); a result is a `function` message (`name` = the function, `extra.function_id`
 * where present), answering a call of its own function name. Parallel calls are consecutive assistant messages; one model response's text
 * or reasoning message and the messages after it are never cut apart.
 */
export const qwenAgentLens: MessageLens<QwenAgentMessage> = {
  format: 'qwen-agent',
  request: { messagesField: 'messages' },
  read: readMessage,
  mediaTokens: (m) => contentImageTokens(m.content),
  atomicJoins: joinResponses,
  splitParallelCalls: true,
  repeatsCallIds: true,
  resultsInCallOrder: true,
  cheapRead: true,
  stringContentIsText: true,
  // Qwen-Agent checks that a result names its call's function; and its Nous prompt gives every call
  // function_id "1", so the id alone cannot tell which call a result answers.
  namesMustMatch: true,
  summaryMessage: (text, role) => ({ role, content: text }),
  missingResults: (calls, text) => calls.map((call) => (call.id !== undefined
    ? { role: 'function', name: call.name, content: text, extra: { function_id: call.id } }
    : { role: 'function', name: call.name, content: text })),
  rekeyResult(m, _slot, call) {
    const out: QwenAgentMessage = { ...m, role: 'function', name: call.name };
    if (isObj(m.extra) || call.id !== undefined) {
      const { function_id: _old, ...rest } = isObj(m.extra) ? m.extra : {};
      out.extra = call.id !== undefined ? { ...rest, function_id: call.id } : rest;
    }
    return out;
  },
  rekeyCall(m, slot, id) {
    if (slot !== 0 || m.role !== 'assistant' || !isObj(m.function_call)) return m;
    return { ...m, extra: { ...(isObj(m.extra) ? m.extra : {}), function_id: id } };
  },
  // A function message carries one result: clearing or removing it is the whole message.
  collapseResult: (m, _slot, placeholder) => ({ ...m, content: placeholder }),
  removeResult: () => undefined,
  problem(value: unknown) {
    const base = messageObjectProblem(value);
    if (base || !isObj(value)) return base;
    const role = value.role as string;
    if (!ROLES.includes(role)) return { field: '.role', rule: `unknown role ${JSON.stringify(role)} (expected ${ROLES.join(', ')}; Qwen-Agent results have role "function")` };
    if (value.content === undefined) return { field: '.content', rule: 'must be a string or a list of content items, got nothing (the field is missing)' };
    const content = contentProblem(value.content, '.content');
    if (content) return content;
    if (value.reasoning_content !== undefined) {
      const reasoning = contentProblem(value.reasoning_content, '.reasoning_content');
      if (reasoning) return reasoning;
    }
    if (value.name !== undefined && value.name !== null && typeof value.name !== 'string') return { field: '.name', rule: `must be a string, got ${describe(value.name)}` };
    const fc = value.function_call;
    if (fc !== undefined && fc !== null) {
      if (role !== 'assistant') return { field: '.function_call', rule: `only assistant messages make function calls, got one on a ${role} message` };
      if (!isObj(fc)) return { field: '.function_call', rule: `must be an object { name, arguments }, got ${describe(fc)}` };
      if (typeof fc.name !== 'string') return { field: '.function_call.name', rule: `must be a string, got ${describe(fc.name)}` };
      if (typeof fc.arguments !== 'string') return { field: '.function_call.arguments', rule: `must be a string (the arguments' JSON text), got ${describe(fc.arguments)}` };
    }
    const extra = value.extra;
    if (extra !== undefined && extra !== null) {
      if (!isObj(extra)) return { field: '.extra', rule: `must be an object, got ${describe(extra)}` };
      const id = extra.function_id;
      if (id !== undefined && id !== null && typeof id !== 'string') return { field: '.extra.function_id', rule: `must be a string, got ${describe(id)}` };
    }
    return undefined;
  },
};
