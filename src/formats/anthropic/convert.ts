import type { Converted } from '../convert-types.js';
import type { OpenAIChatMessage, OpenAIContentPart, OpenAIToolCall } from '../openai-chat/types.js';
import { isBlock } from './blocks.js';
import type { AnthropicBlock, AnthropicMessage, AnthropicSystem } from './types.js';

/**
 * OpenAI Chat Completions <-> Anthropic Messages. Every conversion says what the target cannot
 * carry in `lost`; with `lost` empty, converting back gives the input again (deep-equal).
 *
 * - Leading system / developer messages become the request's top-level `system` text; one in the
 *   middle of the history becomes a user message of one text block (reported).
 * - Parallel `tool_calls` become `tool_use` blocks of one assistant message (after its text);
 *   `arguments` JSON text becomes the `input` object (reported when its formatting changes; text
 *   that is not a JSON object is kept as `{"_raw": text}`, reported, and restored on the way back).
 * - Consecutive `tool` messages become one user message of `tool_result` blocks. A tool message's
 *   `name` is not carried (Anthropic takes it from the call): `toOpenAIChat` writes the call's
 *   name back with `toolNames: true`; a name that differs from its call's is reported.
 * - Call ids: Anthropic rejects a `tool_use` id used twice in one request, and real logs reuse ids
 *   in later turns. By default a reused id gets a fresh one (`<id>_2`, never an id the history
 *   uses), in the call and in its results, and the renaming is reported; ids are opaque, so the
 *   conversation means the same. `uniqueIds: false` keeps every id as it is.
 */

/** An Anthropic history converted from OpenAI Chat, with the instructions for the top-level `system` field. */
export interface AnthropicConverted extends Converted<AnthropicMessage> {
  /** The text of the leading system / developer messages, for the request's `system` field. */
  readonly system?: string;
}

/** Options of `fromOpenAIChat`. */
export interface FromOpenAIChatOptions {
  /** Give a call id used again in a later turn a fresh one (default true: Anthropic wants unique ids). */
  readonly uniqueIds?: boolean;
}

/** Options of `toOpenAIChat`. */
export interface ToOpenAIChatOptions {
  /** The request's top-level `system`: becomes the first message, role `system`. */
  readonly system?: AnthropicSystem;
  /** Write the call's name as `name` on each tool message (as some OpenAI-compatible logs do). */
  readonly toolNames?: boolean;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keys of `o` other than `known`, for reporting fields a conversion drops. */
function extraKeys(o: Obj, known: readonly string[]): string[] {
  return Object.keys(o).filter((k) => !known.includes(k));
}

/** The text of OpenAI content (string or parts), and whether any part was not text. */
function openaiText(content: unknown): { text: string; other: boolean } {
  if (typeof content === 'string') return { text: content, other: false };
  if (!Array.isArray(content)) return { text: '', other: content !== null && content !== undefined };
  let text = '';
  let other = false;
  for (const p of content) {
    if (isObj(p) && p.type === 'text' && typeof p.text === 'string') text += p.text;
    else other = true;
  }
  return { text, other };
}

/** An OpenAI content part as an Anthropic block, or undefined when Anthropic has no such block. */
function blockFromPart(part: unknown, at: string, lost: string[]): AnthropicBlock | undefined {
  if (!isObj(part)) {
    lost.push(`${at}: a part that is not an object was dropped`);
    return undefined;
  }
  if (part.type === 'text' && typeof part.text === 'string') {
    const extra = extraKeys(part, ['type', 'text']);
    if (extra.length > 0) lost.push(`${at}: fields ${extra.join(', ')} of a text part were dropped`);
    return { type: 'text', text: part.text };
  }
  if (part.type === 'image_url') {
    const image = part.image_url;
    const url = typeof image === 'string' ? image : isObj(image) && typeof image.url === 'string' ? image.url : undefined;
    if (url === undefined) {
      lost.push(`${at}: an image part without a URL was dropped`);
      return undefined;
    }
    if (isObj(image) && image.detail !== undefined) lost.push(`${at}: the image detail setting was dropped (Anthropic sizes images itself)`);
    const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
    return data ? { type: 'image', source: { type: 'base64', media_type: data[1], data: data[2] } } : { type: 'image', source: { type: 'url', url } };
  }
  lost.push(`${at}: a "${String(part.type)}" part was dropped (no Anthropic block carries it)`);
  return undefined;
}

/** The `input` object for a call's `arguments` text, and whether the text comes back unchanged. */
function inputOf(args: unknown): { input: Obj; exact: boolean; raw: boolean } {
  if (typeof args !== 'string') return { input: isObj(args) ? args : { _raw: args }, exact: false, raw: !isObj(args) };
  try {
    const parsed: unknown = JSON.parse(args);
    if (isObj(parsed)) return { input: parsed, exact: JSON.stringify(parsed) === args, raw: false };
  } catch {
    // not JSON: kept as text below
  }
  return { input: { _raw: args }, exact: true, raw: true };
}

/** Where an OpenAI Chat history is being converted: the output so far and what the next messages need to know. */
interface Converting {
  readonly uniqueIds: boolean;
  readonly out: AnthropicMessage[];
  readonly lost: string[];
  readonly system: string[];
  /** Every id the history uses, so a fresh id never collides with one of them. */
  readonly used: Set<string>;
  readonly seen: Set<string>;
  /** Original id -> id sent, and the names, for the calls of the last assistant message. */
  turnIds: Map<string, string>;
  readonly turnNames: Map<string, string>;
  /** The id given to a legacy function_call, for its function message. */
  pendingFunction?: string;
  minted: number;
  /** The user message of tool_result blocks being built. */
  results?: AnthropicBlock[];
  /** No user, assistant or result message yet: system text still goes to the system field. */
  leading: boolean;
}

/** Converts an OpenAI Chat history to Anthropic Messages (see the file comment for what changes). */
export function fromOpenAIChat(messages: readonly OpenAIChatMessage[], options: FromOpenAIChatOptions = {}): AnthropicConverted {
  const c: Converting = { uniqueIds: options.uniqueIds ?? true, out: [], lost: [], system: [], used: new Set(), seen: new Set(), turnIds: new Map(), turnNames: new Map(), minted: 0, leading: true };
  for (const m of messages) if (Array.isArray(m.tool_calls)) for (const call of m.tool_calls) if (typeof call?.id === 'string') c.used.add(call.id);
  messages.forEach((m, i) => {
    const at = `messages[${i}]`;
    const role = m.role;
    if (role !== 'tool' && role !== 'function') flushResults(c);
    if (role === 'system' || role === 'developer') return systemFrom(c, m, at);
    c.leading = false;
    if (role === 'user') return userFrom(c, m, at);
    if (role === 'assistant') return assistantFrom(c, m, at, i);
    if (role === 'tool' || role === 'function') return resultFrom(c, m, at);
    c.lost.push(`${at}: a message with role ${JSON.stringify(role)} was dropped`);
  });
  flushResults(c);
  const { out, lost, system } = c;
  return system.length > 0 ? { messages: out, lost, system: system.join('\n\n') } : { messages: out, lost };
}

/** The tool_result blocks gathered so far go out as one user message. */
function flushResults(c: Converting): void {
  if (c.results) c.out.push({ role: 'user', content: c.results });
  c.results = undefined;
}

/** Names in `lost` every field of `m` outside `known`. */
function dropExtra(c: Converting, m: Obj, known: readonly string[], at: string): void {
  const extra = extraKeys(m, known);
  if (extra.length > 0) c.lost.push(`${at}: fields ${extra.join(', ')} were dropped`);
}

/** The blocks of an OpenAI content array (parts no block carries are dropped and named in `lost`). */
function blocksFrom(content: readonly unknown[], at: string, lost: string[]): AnthropicBlock[] {
  const blocks: AnthropicBlock[] = [];
  content.forEach((p, k) => {
    const b = blockFromPart(p, `${at}.content[${k}]`, lost);
    if (b) blocks.push(b);
  });
  return blocks;
}

/** Leading system and developer text joins the system field; later, it becomes a user message. */
function systemFrom(c: Converting, m: OpenAIChatMessage, at: string): void {
  const { text, other } = openaiText(m.content);
  if (other) c.lost.push(`${at}: non-text parts of a ${m.role} message were dropped`);
  dropExtra(c, m, ['role', 'content'], at);
  if (c.leading) {
    if (m.role === 'developer') c.lost.push(`${at}: a developer message became system text`);
    if (c.system.length > 0) c.lost.push(`${at}: joined with the system text before it (Anthropic has one system field)`);
    c.system.push(text);
  } else {
    c.lost.push(`${at}: a ${m.role} message in the middle of the history became a user message (Anthropic has no system role in messages)`);
    c.out.push({ role: 'user', content: [{ type: 'text', text }] });
  }
}

function userFrom(c: Converting, m: OpenAIChatMessage, at: string): void {
  dropExtra(c, m, ['role', 'content'], at);
  if (Array.isArray(m.content)) c.out.push({ role: 'user', content: blocksFrom(m.content, at, c.lost) });
  else {
    if (typeof m.content !== 'string') c.lost.push(`${at}: content that is not text became an empty string`);
    c.out.push({ role: 'user', content: typeof m.content === 'string' ? m.content : '' });
  }
}

/** An assistant message: its text, then a tool_use block per call (ids made unique where the history reuses one). */
function assistantFrom(c: Converting, m: OpenAIChatMessage, at: string, i: number): void {
  const { lost } = c;
  const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
  dropExtra(c, m, ['role', 'content', 'tool_calls', 'function_call'], at);
  if (m.tool_calls !== undefined && calls.length === 0) lost.push(`${at}: an empty tool_calls list was dropped`);
  c.turnIds = new Map();
  c.turnNames.clear();
  c.pendingFunction = undefined;
  const blocks: AnthropicBlock[] = [];
  if (Array.isArray(m.content)) {
    if (calls.length > 0 || m.function_call) lost.push(`${at}: content parts beside tool calls come back as one string`);
    m.content.forEach((p, k) => {
      if (isObj(p) && p.type === 'refusal' && typeof p.refusal === 'string') {
        lost.push(`${at}.content[${k}]: a refusal part became text`);
        blocks.push({ type: 'text', text: p.refusal });
        return;
      }
      const b = blockFromPart(p, `${at}.content[${k}]`, lost);
      if (b) blocks.push(b);
    });
  } else if (typeof m.content === 'string' && m.content !== '') {
    blocks.push({ type: 'text', text: m.content });
  } else if (m.content === '' && (calls.length > 0 || m.function_call)) {
    lost.push(`${at}: empty content beside tool calls comes back as null`);
  }
  calls.forEach((call: OpenAIToolCall, k) => blocks.push(toolUseFrom(c, call, `${at}.tool_calls[${k}]`, `call_${i}_${k}`)));
  if (m.function_call && isObj(m.function_call)) blocks.push(functionCallFrom(c, m.function_call as { name?: unknown; arguments?: unknown }, at));
  const plain = calls.length === 0 && !m.function_call;
  if (plain && typeof m.content === 'string') c.out.push({ role: 'assistant', content: m.content });
  else {
    if (plain && m.content === null) lost.push(`${at}: null content became an empty list`);
    c.out.push({ role: 'assistant', content: blocks });
  }
}

/** One call as a tool_use block; `fallbackId` names a call that has no id. */
function toolUseFrom(c: Converting, call: OpenAIToolCall, at: string, fallbackId: string): AnthropicBlock {
  const { lost } = c;
  const original = typeof call?.id === 'string' ? call.id : fallbackId;
  if (typeof call?.id !== 'string') lost.push(`${at}: a call without an id was given ${original}`);
  let id = original;
  if (c.uniqueIds && c.seen.has(original)) {
    id = freshId(c.used, original);
    lost.push(`${at}.id: ${original} is used again in this history; Anthropic wants unique tool_use ids, so it is ${id} here and in its result`);
  }
  c.seen.add(original);
  c.turnIds.set(original, id);
  const name = typeof call?.function?.name === 'string' ? call.function.name : '';
  c.turnNames.set(original, name);
  const { input, exact, raw } = inputOf(call?.function?.arguments);
  if (raw) lost.push(`${at}.function.arguments: not a JSON object; sent as {"_raw": text}`);
  else if (!exact) lost.push(`${at}.function.arguments: formatting not kept (sent as a JSON object)`);
  const callExtra = isObj(call) ? extraKeys(call, ['id', 'type', 'function']) : [];
  if (callExtra.length > 0 || (isObj(call) && call.type !== 'function')) lost.push(`${at}: fields other than id, function (and type "function") were dropped`);
  return { type: 'tool_use', id, name, input };
}

/** `id` with the first `_2`, `_3`, ... suffix no message of the history uses. */
function freshId(used: Set<string>, id: string): string {
  for (let k = 2; ; k++) {
    const candidate = `${id}_${k}`;
    if (!used.has(candidate)) {
      used.add(candidate);
      return candidate;
    }
  }
}

/** A legacy function_call as a tool_use block with an id of its own, which its function message then answers. */
function functionCallFrom(c: Converting, fc: { name?: unknown; arguments?: unknown }, at: string): AnthropicBlock {
  let id = `toolu_function_${c.minted++}`;
  while (c.used.has(id)) id = `toolu_function_${c.minted++}`;
  c.used.add(id);
  c.pendingFunction = id;
  c.lost.push(`${at}.function_call: a legacy function call became a tool_use with id ${id}`);
  return { type: 'tool_use', id, name: typeof fc.name === 'string' ? fc.name : '', input: inputOf(fc.arguments).input };
}

/** A tool (or legacy function) message as a tool_result block of the user message being gathered. */
function resultFrom(c: Converting, m: OpenAIChatMessage, at: string): void {
  const { lost } = c;
  const role = m.role;
  const originalId = role === 'tool' ? m.tool_call_id : undefined;
  const id = role === 'function' ? (c.pendingFunction ?? '') : typeof originalId === 'string' ? (c.turnIds.get(originalId) ?? originalId) : '';
  if (role === 'function') lost.push(`${at}: a legacy function result became a tool_result for ${id}`);
  if (role === 'tool' && typeof originalId !== 'string') lost.push(`${at}: a tool message without tool_call_id became a tool_result with an empty id`);
  if (role === 'tool' && typeof originalId === 'string' && m.name !== undefined && m.name !== c.turnNames.get(originalId)) {
    lost.push(`${at}.name: ${String(m.name)} is not the name of the call it answers; dropped`);
  }
  dropExtra(c, m, ['role', 'content', 'tool_call_id', 'name'], at);
  let content: string | AnthropicBlock[];
  if (Array.isArray(m.content)) content = blocksFrom(m.content, at, lost);
  else {
    if (typeof m.content !== 'string') lost.push(`${at}: content that is not text became an empty string`);
    content = typeof m.content === 'string' ? m.content : '';
  }
  (c.results ??= []).push({ type: 'tool_result', tool_use_id: id, content });
}

/** An Anthropic block as an OpenAI content part, or undefined when OpenAI Chat has no such part. */
function partFromBlock(b: AnthropicBlock, at: string, lost: string[]): OpenAIContentPart | undefined {
  if (b.type === 'text' && typeof b.text === 'string') {
    const extra = extraKeys(b, ['type', 'text']);
    if (extra.length > 0) lost.push(`${at}: fields ${extra.join(', ')} of a text block were dropped`);
    return { type: 'text', text: b.text };
  }
  if (b.type === 'image' && isObj(b.source)) {
    const s = b.source;
    if (s.type === 'base64' && typeof s.data === 'string') return { type: 'image_url', image_url: { url: `data:${String(s.media_type)};base64,${s.data}` } };
    if (s.type === 'url' && typeof s.url === 'string') return { type: 'image_url', image_url: { url: s.url } };
  }
  lost.push(`${at}: a "${b.type}" block was dropped (OpenAI Chat has no such part)`);
  return undefined;
}

/** A call's `arguments` text for a `tool_use` input: the raw text kept by `fromOpenAIChat`, or the input's JSON. */
function argumentsOf(input: unknown): string {
  if (isObj(input) && Object.keys(input).length === 1 && typeof input._raw === 'string') return input._raw;
  return JSON.stringify(input ?? {});
}

/** Converts an Anthropic Messages history (and its `system`) to OpenAI Chat; thinking and server tool blocks are reported lost. */
export function toOpenAIChat(messages: readonly AnthropicMessage[], options: ToOpenAIChatOptions = {}): Converted<OpenAIChatMessage> {
  const out: OpenAIChatMessage[] = [];
  const lost: string[] = [];
  const sys = options.system;
  if (typeof sys === 'string') out.push({ role: 'system', content: sys });
  else if (Array.isArray(sys)) {
    if (sys.some((b) => extraKeys(b, ['type', 'text']).length > 0)) lost.push('system: fields of system text blocks were dropped');
    out.push({ role: 'system', content: sys.map((b) => (typeof b.text === 'string' ? b.text : '')).join('\n\n') });
  }
  const names = new Map<string, string>();
  messages.forEach((m, i) => {
    const at = `messages[${i}]`;
    const extra = extraKeys(m, ['role', 'content']);
    if (extra.length > 0) lost.push(`${at}: fields ${extra.join(', ')} were dropped`);
    if (typeof m.content === 'string') {
      out.push({ role: m.role === 'assistant' ? 'assistant' : 'user', content: m.content });
      return;
    }
    const blocks = Array.isArray(m.content) ? m.content.filter(isBlock) : [];
    if (m.role === 'assistant') {
      names.clear();
      let text: string | undefined;
      const parts: OpenAIContentPart[] = [];
      const calls: OpenAIToolCall[] = [];
      blocks.forEach((b, k) => {
        if (b.type === 'tool_use') {
          const id = typeof b.id === 'string' ? b.id : '';
          const name = typeof b.name === 'string' ? b.name : '';
          names.set(id, name);
          calls.push({ id, type: 'function', function: { name, arguments: argumentsOf(b.input) } });
          return;
        }
        const p = partFromBlock(b, `${at}.content[${k}]`, lost);
        if (!p) return;
        if (p.type !== 'text') {
          lost.push(`${at}.content[${k}]: an image in an assistant message was dropped`);
          return;
        }
        parts.push(p);
        text = (text ?? '') + String(p.text);
      });
      if (calls.length > 0) out.push({ role: 'assistant', content: text ?? null, tool_calls: calls });
      else out.push({ role: 'assistant', content: parts });
      return;
    }
    const rest: OpenAIContentPart[] = [];
    blocks.forEach((b, k) => {
      if (b.type !== 'tool_result') {
        const p = partFromBlock(b, `${at}.content[${k}]`, lost);
        if (p) rest.push(p);
        return;
      }
      if (b.is_error !== undefined) lost.push(`${at}.content[${k}]: is_error was dropped (OpenAI tool messages have no error flag)`);
      const resultExtra = extraKeys(b, ['type', 'tool_use_id', 'content', 'is_error']);
      if (resultExtra.length > 0) lost.push(`${at}.content[${k}]: fields ${resultExtra.join(', ')} were dropped`);
      let content: string | OpenAIContentPart[] = '';
      if (typeof b.content === 'string') content = b.content;
      else if (Array.isArray(b.content)) {
        content = [];
        for (const [j, inner] of b.content.entries()) {
          const p = isBlock(inner) ? partFromBlock(inner, `${at}.content[${k}].content[${j}]`, lost) : undefined;
          if (p && p.type === 'text') content.push(p);
          else if (p) lost.push(`${at}.content[${k}].content[${j}]: an image in a tool result was dropped`);
        }
      }
      const id = typeof b.tool_use_id === 'string' ? b.tool_use_id : '';
      const name = names.get(id);
      out.push(options.toolNames && name !== undefined ? { role: 'tool', tool_call_id: id, name, content } : { role: 'tool', tool_call_id: id, content });
    });
    if (rest.length > 0 || !blocks.some((b) => b.type === 'tool_result')) out.push({ role: 'user', content: rest });
  });
  return { messages: out, lost };
}
