import type { Converted } from '../convert-types.js';
import type { OpenAIChatMessage, OpenAIContentPart, OpenAIToolCall } from '../openai-chat/types.js';
import { IN_PLACE_TYPES, OUTPUT_OF, OUTPUT_TYPES, partsText, readCall, readResult, typeOf } from './items.js';
import type { ResponsesContentPart, ResponsesItem } from './types.js';
import { chatFields } from '../openai-chat/fields.js';

/**
 * OpenAI Chat Completions <-> OpenAI Responses `input` items.
 *
 * Chat -> Responses: system and developer messages stay where they are, as message items of the
 * same role (the Responses input takes both; nothing moves into `instructions`, so their place in
 * the history is kept). A user message becomes a message item (text parts `input_text`, images
 * `input_image`, files `input_file`); an assistant message becomes a message item of `output_text`
 * (and `refusal`) parts, followed by one `function_call` (or `custom_tool_call`) item per tool call;
 * a tool message becomes a `function_call_output`. Responses wants every `call_id` unique across
 * the request: a call id an earlier call already used is renamed (`<id>_2`, ...) in the call and
 * the results of its turn, and `lost` says so. A tool message's `name` is not an output field: it
 * is restored from its call on the way back when `toolNames` is true.
 *
 * Responses -> Chat: a message item becomes a message (an assistant's parts joined into one
 * string); call items join the assistant message right before them (as long as no output or other
 * message came in between) or open a new one; outputs become tool messages. Reasoning items,
 * in-place calls, compaction and item references have no Chat form and are listed in `lost`.
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Items converted from a Chat history, with what converting back needs to give the same history. */
export interface ResponsesConverted extends Converted<ResponsesItem> {
  /**
   * True when every tool message had a `name` equal to its call's name (and there was one): pass it
   * to `toOpenAIChat` to restore the names. A name that differs from its call's is listed in `lost`.
   */
  readonly toolNames: boolean;
}

/** Orders `lost` entries by the index they start with (`messages[12]` after `messages[3]`), stable otherwise. */
function byIndex(a: string, b: string): number {
  const index = (s: string) => Number(/^\w+\[(\d+)\]/.exec(s)?.[1] ?? Number.MAX_SAFE_INTEGER);
  return index(a) - index(b);
}

/** Options of `toOpenAIChat`. */
export interface ToOpenAIChatOptions {
  /** The request's `instructions`: a leading system message. */
  readonly instructions?: string;
  /** Give each tool message the `name` of the call it answers (see `ResponsesConverted.toolNames`). */
  readonly toolNames?: boolean;
}

const MESSAGE_FIELDS = chatFields(['refusal']);

/** A Chat content part as a Responses input part; undefined when Responses has no such part. */
function toInputPart(part: unknown): ResponsesContentPart | undefined {
  if (typeof part === 'string') return { type: 'input_text', text: part };
  if (!isObj(part)) return undefined;
  if (part.type === 'text' && typeof part.text === 'string') return { type: 'input_text', text: part.text };
  if (part.type === 'image_url') {
    const image = part.image_url;
    const url = typeof image === 'string' ? image : isObj(image) ? image.url : undefined;
    if (typeof url !== 'string') return undefined;
    const detail = isObj(image) && typeof image.detail === 'string' ? image.detail : 'auto';
    return { type: 'input_image', image_url: url, detail };
  }
  if (part.type === 'file' && isObj(part.file)) return { type: 'input_file', ...part.file };
  return undefined;
}

/** A Responses input part as a Chat content part; undefined when Chat has no such part. */
function toChatPart(part: unknown): OpenAIContentPart | undefined {
  if (!isObj(part)) return undefined;
  if ((part.type === 'input_text' || part.type === 'output_text') && typeof part.text === 'string') return { type: 'text', text: part.text };
  if (part.type === 'input_image' && typeof part.image_url === 'string') {
    // 'auto' is what a Chat image without `detail` means, and what converting it gave.
    return { type: 'image_url', image_url: part.detail === undefined || part.detail === 'auto' ? { url: part.image_url } : { url: part.image_url, detail: part.detail } };
  }
  if (part.type === 'input_file') {
    const { type: _type, ...file } = part;
    return { type: 'file', file };
  }
  return undefined;
}

/** Chat content (string or parts) as Responses content; parts it cannot carry are named in `lost`. */
function toInputContent(content: unknown, where: string, lost: string[]): string | ResponsesContentPart[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) {
    lost.push(`${where}: content ${content === null ? 'null' : 'missing'} sent as an empty string`);
    return '';
  }
  const out: ResponsesContentPart[] = [];
  content.forEach((part, k) => {
    const p = toInputPart(part);
    if (p) out.push(p);
    else lost.push(`${where}: content part ${k} (${isObj(part) ? String(part.type) : typeof part}) dropped: Responses input has no such part`);
    if (isObj(part) && part.type === 'image_url' && isObj(part.image_url) && part.image_url.detail === 'auto') lost.push(`${where}: content part ${k}: image detail "auto" is the default and is left out on the way back`);
  });
  return out;
}

/** Fields of a Chat message that no Responses item carries, named in `lost`. */
function extraFields(m: OpenAIChatMessage, where: string, lost: string[]): void {
  const allowed = MESSAGE_FIELDS[m.role] ?? [];
  for (const key of Object.keys(m)) {
    if (allowed.includes(key) || (m as Obj)[key] === undefined) continue;
    lost.push(`${where}: field "${key}" dropped (no Responses item carries it)`);
  }
}

/** Where a Chat history is being converted to Responses items: the items so far and what the next messages need to know. */
interface Converting {
  readonly items: ResponsesItem[];
  readonly lost: string[];
  /** Every id in the history, so a renamed id never collides with one used later. */
  readonly taken: Set<string>;
  readonly used: Set<string>;
  /** The calls of the assistant message whose results may follow: Chat id -> Responses call_id and name. */
  run: Map<string, { id: string; name: string }>;
  legacy?: { id: string; name: string };
  /** Tool messages whose name is their call's, how many tool messages were named, and how many there were. */
  readonly sameName: number[];
  named: number;
  tools: number;
}

/**
 * Converts an OpenAI Chat history to Responses input items (see the file comment). `lost` names
 * every source message and what could not be carried (or was renamed); when it is empty,
 * `toOpenAIChat(messages, { toolNames })` gives the input back.
 */
export function fromOpenAIChat(messages: readonly OpenAIChatMessage[]): ResponsesConverted {
  const c: Converting = { items: [], lost: [], taken: new Set(), used: new Set(), run: new Map(), sameName: [], named: 0, tools: 0 };
  for (const m of messages) for (const call of Array.isArray(m?.tool_calls) ? m.tool_calls : []) if (typeof call?.id === 'string') c.taken.add(call.id);
  const { items, lost } = c;
  messages.forEach((m, i) => {
    const where = `messages[${i}]`;
    if (!isObj(m) || typeof m.role !== 'string') {
      lost.push(`${where}: not a Chat message; dropped`);
      return;
    }
    extraFields(m, where, lost);
    switch (m.role) {
      case 'system':
      case 'developer':
      case 'user':
        c.run = new Map();
        if (m.name !== undefined) lost.push(`${where}: field "name" dropped (a Responses message has no participant name)`);
        items.push({ type: 'message', role: m.role, content: toInputContent(m.content, where, lost) });
        return;
      case 'assistant':
        return assistantFrom(c, messages, i, where);
      case 'tool':
        return toolFrom(c, m, i, where);
      case 'function': {
        const call = c.legacy;
        c.legacy = undefined;
        const id = call?.id ?? freshId(c.taken, `call_legacy_${i}`);
        lost.push(`${where}: legacy function message becomes a function_call_output for call_id ${id} (it converts back as a tool message)`);
        items.push({ type: 'function_call_output', call_id: id, output: toInputContent(m.content, where, lost) });
        return;
      }
      default:
        lost.push(`${where}: role ${JSON.stringify(m.role)} has no Responses item; dropped`);
    }
  });
  // Names come back from the calls only when every tool message had its call's name.
  const toolNames = c.tools > 0 && c.named === c.tools && c.sameName.length === c.tools;
  if (!toolNames) {
    for (const i of c.sameName) lost.push(`messages[${i}]: field "name" dropped (not every tool message has its call's name, so converting back adds none)`);
  }
  return { messages: items, lost: lost.sort(byIndex), toolNames };
}

/** `base` itself when no call uses it, else `base_2`, `base_3`, ... */
function freshId(taken: Set<string>, base: string): string {
  for (let n = 1; ; n++) {
    const id = n === 1 ? base : `${base}_${n}`;
    if (!taken.has(id)) {
      taken.add(id);
      return id;
    }
  }
}

/** An assistant message: a message item of its text (none for null content beside calls), then an item per call. */
function assistantFrom(c: Converting, messages: readonly OpenAIChatMessage[], i: number, where: string): void {
  const m = messages[i];
  const { items, lost } = c;
  c.run = new Map();
  c.legacy = undefined;
  if (m.name !== undefined) lost.push(`${where}: field "name" dropped (a Responses message has no participant name)`);
  const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
  const parts: ResponsesContentPart[] = [];
  if (typeof m.content === 'string') parts.push({ type: 'output_text', text: m.content, annotations: [] });
  else if (Array.isArray(m.content)) {
    lost.push(`${where}: content parts become output_text parts, which convert back as one string`);
    for (const p of m.content) {
      if (isObj(p) && typeof p.text === 'string') parts.push({ type: 'output_text', text: p.text, annotations: [] });
      else if (isObj(p) && typeof p.refusal === 'string') parts.push({ type: 'refusal', refusal: p.refusal });
    }
  }
  if (typeof m.refusal === 'string') parts.push({ type: 'refusal', refusal: m.refusal });
  // Null content on a message that makes calls is no item at all; without calls, an empty one.
  if (parts.length > 0 || (calls.length === 0 && !m.function_call)) items.push({ type: 'message', role: 'assistant', content: parts });
  else if (i > 0 && messages[i - 1]?.role === 'assistant') lost.push(`${where}: its tool calls follow the assistant message messages[${i - 1}] with nothing between, so they convert back as part of it`);
  calls.forEach((call, k) => callFrom(c, call, k, where));
  if (isObj(m.function_call)) {
    const name = String(m.function_call.name ?? '');
    const id = freshId(c.taken, `call_legacy_${i}`);
    c.legacy = { id, name };
    const args = m.function_call.arguments;
    items.push({ type: 'function_call', call_id: id, name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) });
    lost.push(`${where}: legacy function_call becomes a function_call with call_id ${id} (it converts back as tool_calls)`);
  }
}

/** One tool call as a function_call (or custom_tool_call) item, its call_id unique in the request. */
function callFrom(c: Converting, call: unknown, k: number, where: string): void {
  const { items, lost, used, run } = c;
  if (!isObj(call) || typeof call.id !== 'string') {
    lost.push(`${where}: tool_calls[${k}] has no id; dropped`);
    return;
  }
  let id = call.id;
  if (used.has(id)) {
    id = freshId(c.taken, call.id);
    lost.push(`${where}: tool call id ${call.id} is used again (Responses needs each call_id unique in the request); it is ${id} in the call and its results`);
  }
  used.add(id);
  for (const key of Object.keys(call)) if (!['id', 'type', 'function', 'custom'].includes(key)) lost.push(`${where}: tool_calls[${k}].${key} dropped`);
  if (call.type === 'custom' && isObj(call.custom)) {
    const name = String(call.custom.name ?? '');
    items.push({ type: 'custom_tool_call', call_id: id, name, input: typeof call.custom.input === 'string' ? call.custom.input : JSON.stringify(call.custom.input ?? '') });
    if (!run.has(call.id)) run.set(call.id, { id, name });
    return;
  }
  if (call.type !== 'function') lost.push(`${where}: tool_calls[${k}].type ${JSON.stringify(call.type)} becomes "function"`);
  const fn: Obj = isObj(call.function) ? call.function : {};
  const name = typeof fn.name === 'string' ? fn.name : '';
  items.push({ type: 'function_call', call_id: id, name, arguments: typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {}) });
  if (!run.has(call.id)) run.set(call.id, { id, name });
}

/** A tool message as a function_call_output for the call it answers (its call_id as renamed). */
function toolFrom(c: Converting, m: OpenAIChatMessage, i: number, where: string): void {
  const { lost } = c;
  c.tools++;
  const raw = m.tool_call_id as unknown;
  const chatId = typeof raw === 'string' ? raw : String(raw);
  if (typeof raw !== 'string') lost.push(`${where}: tool_call_id ${String(raw)} is not a string; sent as "${chatId}"`);
  const call = c.run.get(chatId);
  if (typeof m.name === 'string') {
    c.named++;
    if (call && call.name === m.name) c.sameName.push(i);
    else lost.push(`${where}: field "name" ${JSON.stringify(m.name)} dropped (an output has no name; it is not the name of the call it answers)`);
  }
  c.items.push({ type: 'function_call_output', call_id: call?.id ?? chatId, output: toInputContent(m.content, where, lost) });
}

/** An assistant message item's content as Chat has it: text parts joined (null when none) and a refusal. */
function assistantContent(content: unknown, where: string, lost: string[]): { content: string | null; refusal?: string } {
  if (typeof content === 'string') return { content };
  if (!Array.isArray(content)) return { content: null };
  let text: string | null = null;
  let refusal: string | undefined;
  content.forEach((p, k) => {
    if (isObj(p) && typeof p.text === 'string') text = (text ?? '') + p.text;
    else if (isObj(p) && typeof p.refusal === 'string') refusal = (refusal ?? '') + p.refusal;
    else lost.push(`${where}: content part ${k} (${isObj(p) ? String(p.type) : typeof p}) dropped: a Chat assistant message holds text only`);
  });
  return refusal === undefined ? { content: text } : { content: text, refusal };
}

/** A call item as a Chat tool call; other call types than function and custom become function calls, said in `lost`. */
function toToolCall(item: ResponsesItem, type: string, where: string, lost: string[]): OpenAIToolCall {
  const call = readCall(item, type);
  const id = call.id ?? '';
  if (type === 'custom_tool_call') return { id, type: 'custom', custom: { name: call.name, input: call.arguments } } as unknown as OpenAIToolCall;
  if (type !== 'function_call') lost.push(`${where}: ${type} becomes a function tool call named ${call.name}`);
  return { id, type: 'function', function: { name: call.name, arguments: call.arguments } };
}

/** A tool output as Chat tool message content: a string, or parts Chat has. */
function toolContent(item: ResponsesItem, type: string, where: string, lost: string[]): string | OpenAIContentPart[] {
  const output = item.output;
  if (type === 'function_call_output' || type === 'custom_tool_call_output') {
    if (typeof output === 'string') return output;
    if (Array.isArray(output)) {
      const parts: OpenAIContentPart[] = [];
      output.forEach((p, k) => {
        const c = toChatPart(p);
        if (c) parts.push(c);
        else lost.push(`${where}: output part ${k} dropped: a Chat tool message has no such part`);
      });
      return parts;
    }
  }
  lost.push(`${where}: ${type} becomes a tool message of its text`);
  return readResult(item, type).content;
}

/**
 * Converts Responses input (a list of items, or a string: one user message) to an OpenAI Chat
 * history (see the file comment). `lost` names every item (`input[i]`) and what Chat cannot carry.
 */
export function toOpenAIChat(input: string | readonly ResponsesItem[], options: ToOpenAIChatOptions = {}): Converted<OpenAIChatMessage> {
  const out: OpenAIChatMessage[] = [];
  const lost: string[] = [];
  if (options.instructions !== undefined) out.push({ role: 'system', content: options.instructions });
  if (typeof input === 'string') {
    out.push({ role: 'user', content: input });
    return { messages: out, lost };
  }
  // The assistant message later call items join, until an output or another message comes.
  let open: OpenAIChatMessage | undefined;
  let names = new Map<string, string>();
  input.forEach((item, i) => {
    const where = `input[${i}]`;
    const type = typeOf(item);
    if (type === undefined) {
      lost.push(`${where}: not an input item; dropped`);
      return;
    }
    const meta = ['id', 'status'].filter((k) => item[k] !== undefined && !(type === 'local_shell_call_output' && k === 'id'));
    if (meta.length > 0 && type !== 'reasoning' && type !== 'item_reference' && type !== 'compaction') lost.push(`${where}: ${meta.join(' and ')} dropped (a Chat message has no item id or status)`);
    if (type === 'message') {
      const role = String(item.role);
      if (role === 'assistant') {
        const { content, refusal } = assistantContent(item.content, where, lost);
        open = refusal === undefined ? { role, content } : { role, content, refusal };
        names = new Map();
        out.push(open);
        return;
      }
      open = undefined;
      out.push({ role, content: typeof item.content === 'string' ? item.content : chatParts(item.content, where, lost) });
      return;
    }
    if (Object.hasOwn(OUTPUT_OF, type)) {
      const call = toToolCall(item, type, where, lost);
      if (!open) {
        open = { role: 'assistant', content: null, tool_calls: [] };
        names = new Map();
        out.push(open);
      }
      open.tool_calls = [...(open.tool_calls ?? []), call];
      names.set(call.id, readCall(item, type).name);
      return;
    }
    if (OUTPUT_TYPES.includes(type)) {
      open = undefined;
      const id = readResult(item, type).id ?? '';
      const message: OpenAIChatMessage = { role: 'tool', tool_call_id: id, content: toolContent(item, type, where, lost) };
      const name = names.get(id);
      if (options.toolNames && name !== undefined) message.name = name;
      out.push(message);
      return;
    }
    if (type === 'reasoning') {
      lost.push(`${where}: reasoning item dropped (Chat Completions takes no reasoning items)`);
      return;
    }
    if (type === 'compaction' || type === 'item_reference') {
      open = undefined;
      lost.push(`${where}: ${type} item dropped (its content is held by the provider; Chat cannot refer to it)`);
      return;
    }
    // In-place calls are answered server-side and belong to the model turn; other types end it.
    if (!IN_PLACE_TYPES.includes(type)) open = undefined;
    lost.push(`${where}: ${type} item dropped (Chat Completions has no such item)`);
  });
  return { messages: out, lost };
}

/** Responses message parts as Chat content parts. */
function chatParts(content: unknown, where: string, lost: string[]): string | OpenAIContentPart[] {
  if (!Array.isArray(content)) return partsText(content);
  const parts: OpenAIContentPart[] = [];
  content.forEach((p, k) => {
    const c = toChatPart(p);
    if (c) parts.push(c);
    else lost.push(`${where}: content part ${k} dropped: a Chat message has no such part`);
  });
  return parts;
}
