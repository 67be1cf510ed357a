import type { CallRef, MessageKind, MessageLens, Reading, ResultRef } from '../lens.js';
import { kindByRole, messageObjectProblem, NO_CALLS, NO_IN_PLACE, NO_RESULTS } from '../readings.js';
import type { OpenAIChatMessage, OpenAIContentPart } from './types.js';
import { imagePartTokens } from './image-tokens.js';
import { describe } from '../describe.js';
import { callsFromAssistant, contentNotNull } from './rules.js';

const ROLES: readonly string[] = Object.freeze(['system', 'developer', 'user', 'assistant', 'tool', 'function']);

/** Joins the text of string or part-list content; non-text parts contribute nothing. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let out = '';
  for (const part of content) {
    if (typeof part === 'string') out += part;
    else if (part && typeof part === 'object') {
      const p = part as OpenAIContentPart;
      if (typeof p.text === 'string') out += p.text;
      else if (typeof p.refusal === 'string') out += p.refusal;
    }
  }
  return out;
}

function argumentsText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return JSON.stringify(value);
}


function readCalls(m: OpenAIChatMessage): readonly CallRef[] {
  if (m.role !== 'assistant' || (!m.function_call && !(Array.isArray(m.tool_calls) && m.tool_calls.length > 0))) return NO_CALLS;
  const out: CallRef[] = [];
  if (Array.isArray(m.tool_calls)) {
    for (const call of m.tool_calls) {
      const fn = call?.function;
      out.push({
        id: typeof call?.id === 'string' ? call.id : undefined,
        name: typeof fn?.name === 'string' ? fn.name : '',
        arguments: argumentsText(fn?.arguments),
      });
    }
  }
  if (m.function_call && typeof m.function_call === 'object') {
    // Legacy function calling: one call per message, answered by role 'function' with the same name.
    out.push({ name: String(m.function_call.name ?? ''), arguments: argumentsText(m.function_call.arguments) });
  }
  return out;
}

function readResults(m: OpenAIChatMessage): readonly ResultRef[] {
  if (m.role === 'tool') {
    const raw = m.tool_call_id as unknown;
    if (typeof raw === 'string') return [{ id: raw, content: contentText(m.content) }];
    // Without a string id a tool message answers nothing, not even a legacy call (which has no id either).
    return [{ idHint: typeof raw === 'number' && Number.isFinite(raw) ? String(raw) : undefined, content: contentText(m.content), keyless: true }];
  }
  if (m.role === 'function') {
    if (typeof m.name === 'string' && m.name !== '') return [{ name: m.name, content: contentText(m.content) }];
    return [{ content: contentText(m.content), keyless: true }];
  }
  return NO_RESULTS;
}

/** The kind of a message, by its role (the legacy `function` role carries a result too). */
const KINDS: Readonly<Record<string, MessageKind>> = Object.freeze({ system: 'system', developer: 'system', user: 'user', assistant: 'assistant', tool: 'result', function: 'result' });


function readMessage(m: OpenAIChatMessage): Reading {
  const kind = kindByRole(m.role, KINDS);
  const role = kind === 'result' ? 'tool' : kind === 'other' ? 'other' : kind;
  return {
    kind,
    role,
    text: kind === 'result' ? '' : contentText(m.content),
    calls: readCalls(m),
    results: readResults(m),
    hasUserText: m.role === 'user',
    ownId: typeof m.id === 'string' ? m.id : undefined,
    inPlace: NO_IN_PLACE,
  };
}

/**
 * The OpenAI Chat Completions lens: roles system/developer/user/assistant/tool and the legacy
 * `function_call` / role `function`. Tool results pair with calls by `tool_call_id`; legacy
 * function results pair by position (one call per assistant message).
 */
export const openaiChatLens: MessageLens<OpenAIChatMessage> = {
  format: 'openai',
  request: { messagesField: 'messages' },
  read: readMessage,
  billedTextTokens(m, countText, callOverhead) {
    const role = m.role;
    if (role === 'tool') return countText(contentText(m.content));
    if (role === 'function') return countText(contentText(m.content)) + (typeof m.name === 'string' && m.name !== '' ? 1 : 0);
    let n = countText(contentText(m.content));
    if (role !== 'assistant') return n;
    const calls = m.tool_calls;
    if (Array.isArray(calls)) {
      for (const call of calls) {
        const fn = call?.function;
        n += callOverhead + countText(typeof fn?.name === 'string' ? fn.name : '') + countText(argumentsText(fn?.arguments));
      }
    }
    if (m.function_call && typeof m.function_call === 'object') {
      n += callOverhead + countText(String(m.function_call.name ?? '')) + countText(argumentsText(m.function_call.arguments));
    }
    return n;
  },
  mediaTokens(m) {
    const content = m.content;
    if (!Array.isArray(content)) return 0;
    let n = 0;
    for (const part of content) if (part && typeof part === 'object' && part.type === 'image_url') n += imagePartTokens(part as { readonly image_url?: unknown });
    return n;
  },
  splitParallelCalls: false,
  shapeRules: [callsFromAssistant, contentNotNull],
  cheapRead: true,
  stringContentIsText: true,
  summaryMessage: (text, role) => ({ role, content: text }),
  rekeyResult(m, _slot, call) {
    if (call.id === undefined) {
      const { tool_call_id: _id, ...rest } = m; // the answer to a legacy call is a function message, named for it
      return { ...rest, role: 'function', name: call.name };
    }
    if (m.role !== 'function') return { ...m, tool_call_id: call.id };
    const { name: _name, ...rest } = m; // a legacy function result becomes the tool message of its call
    return { ...rest, role: 'tool', tool_call_id: call.id };
  },
  rekeyCall(m, slot, id) {
    // Calls are read tool_calls first, then a legacy function_call (which has no id to change).
    if (!Array.isArray(m.tool_calls) || slot >= m.tool_calls.length) return m;
    return { ...m, tool_calls: m.tool_calls.map((c, k) => (k === slot ? { ...c, id } : c)) };
  },
  missingResults: (calls, text) => calls.map((call) => (call.id !== undefined ? { role: 'tool', tool_call_id: call.id, content: text } : { role: 'function', name: call.name, content: text })),
  // An OpenAI result message carries one result: clearing or removing it is the whole message.
  collapseResult: (m, _slot, placeholder) => ({ ...m, content: placeholder }),
  removeResult: () => undefined,
  problem(value: unknown) {
    const base = messageObjectProblem(value);
    if (base) return base;
    const m = value as Record<string, unknown>;
    const role = m.role as string;
    if (!ROLES.includes(role)) return { field: '.role', rule: `unknown role ${JSON.stringify(role)} (expected ${[...ROLES].join(', ')})` };
    const c = m.content;
    if (typeof c !== 'string' && c !== undefined && c !== null && !Array.isArray(c)) return { field: '.content', rule: `must be a string, an array of parts or null, got ${describe(c)}` };
    // Only assistants carry calls; other roles are not read for them (most messages stop here).
    if (role === 'assistant' && m.tool_calls !== undefined && m.tool_calls !== null) {
      if (!Array.isArray(m.tool_calls)) return { field: '.tool_calls', rule: `must be an array, got ${describe(m.tool_calls)}` };
      for (let k = 0; k < m.tool_calls.length; k++) {
        const call = m.tool_calls[k] as { id?: unknown; function?: { name?: unknown } } | null;
        if (!call || typeof call !== 'object') return { field: `.tool_calls[${k}]`, rule: `must be an object, got ${describe(call)}` };
        if (typeof call.id !== 'string') return { field: `.tool_calls[${k}].id`, rule: `must be a string, got ${describe(call.id)}` };
        if (!call.function || typeof call.function.name !== 'string') return { field: `.tool_calls[${k}].function.name`, rule: 'must be a string' };
      }
    }
    return undefined;
  },
};
