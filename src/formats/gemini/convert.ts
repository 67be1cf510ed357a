import type { Converted } from '../convert-types.js';
import type { OpenAIChatMessage, OpenAIContentPart, OpenAIToolCall } from '../openai-chat/types.js';
import { isModelContent } from './lens.js';
import type { GeminiContent, GeminiFunctionCall, GeminiFunctionResponse, GeminiPart, GeminiSystemInstruction } from './types.js';
import { chatFields } from '../openai-chat/fields.js';

/**
 * OpenAI Chat <-> Gemini `contents`, both ways, saying in `lost` whatever the target cannot carry.
 *
 * OpenAI -> Gemini: leading system (or developer) messages become `systemInstruction` parts, one
 * per message; a system message later in the history becomes a user text content (reported). A
 * user message becomes a user content (string -> one text part; text and image parts -> text,
 * `inlineData` for a base64 data URL, `fileData` otherwise). An assistant message becomes a model
 * content: its text (unless null, or empty beside calls), then one `functionCall` part per tool
 * call with the call's `id` kept and `arguments` parsed into `args`. Consecutive tool messages
 * become ONE user content of `functionResponse` parts, each with its call's name and id and the
 * response `{ result }`: `result` is the tool's text parsed as JSON when it is JSON written exactly
 * as `JSON.stringify` writes it (and not a JSON string), else the text itself. That choice makes
 * the way back exact: a string result is the content as it was, anything else its `JSON.stringify`.
 *
 * Gemini -> OpenAI: `systemInstruction` parts become system messages, a model content an assistant
 * message (text parts joined; null when there is none), `functionCall` parts tool calls, and the
 * `functionResponse` parts of a user content tool messages (with the call's `name`), before a user
 * message holding the content's text and images. A call without an id gets `call_<contentIndex>_<k>`
 * (k: its place among the content's calls), used in its response too (paired as Gemini pairs an
 * id-less response: by name, in order). A response `{ result: x }` becomes x (a string as is, else
 * its JSON); any other response object its JSON. Thoughts, thought signatures, code execution
 * parts and other media are reported in `lost`.
 */

/** A Gemini conversion: the contents plus the instructions that go in the request's `systemInstruction`. */
export interface GeminiConverted extends Converted<GeminiContent> {
  readonly systemInstruction?: { parts: { text: string }[] };
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Fields each OpenAI role carries that the conversion maps; any other field is reported lost. */
const MAPPED_FIELDS = chatFields();

/** The value a tool's text is sent as in `{ result }`: parsed JSON only when that converts back to the same text. */
export function resultValue(text: string): unknown {
  const t = text.trim();
  if (t === '' || t !== text || !(t[0] === '{' || t[0] === '[' || t[0] === '-' || t[0] === 't' || t[0] === 'f' || t[0] === 'n' || (t[0] >= '0' && t[0] <= '9'))) return text;
  try {
    const parsed: unknown = JSON.parse(text);
    return JSON.stringify(parsed) === text ? parsed : text;
  } catch {
    return text;
  }
}

/** The text a `{ result }` value stands for (the inverse of `resultValue`). */
function resultText(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}

/** Text of OpenAI content that is a string or a list of parts, and whether the list had to be joined. */
function plainText(content: unknown): { text: string; joined: boolean } {
  if (typeof content === 'string') return { text: content, joined: false };
  if (!Array.isArray(content)) return { text: '', joined: content !== undefined && content !== null };
  let text = '';
  for (const p of content) if (isObj(p)) text += typeof p.text === 'string' ? p.text : typeof p.refusal === 'string' ? p.refusal : '';
  return { text, joined: true };
}

const IMAGE_TYPES: Readonly<Record<string, string>> = Object.freeze({ png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp' });

/** A Gemini media part for an OpenAI image URL: inline bytes for a base64 data URL, a file reference otherwise. */
function imagePart(url: string): GeminiPart {
  if (url.startsWith('data:')) {
    const comma = url.indexOf(',');
    const header = comma > 0 ? url.slice(5, comma) : '';
    if (header.endsWith(';base64')) return { inlineData: { mimeType: header.split(';')[0] || 'application/octet-stream', data: url.slice(comma + 1) } };
  }
  const ext = /\.([a-z0-9]+)(?:[?#].*)?$/i.exec(url)?.[1]?.toLowerCase();
  const mimeType = ext !== undefined ? IMAGE_TYPES[ext] : undefined;
  return { fileData: { ...(mimeType !== undefined ? { mimeType } : {}), fileUri: url } };
}

/** User content parts for OpenAI user content; what has no Gemini form is reported. */
function userParts(content: unknown, at: string, lost: string[]): GeminiPart[] {
  if (typeof content === 'string') return [{ text: content }];
  if (!Array.isArray(content)) {
    lost.push(`${at}.content: ${content === null ? 'null' : 'missing'} content sent as an empty content`);
    return [];
  }
  const parts: GeminiPart[] = [];
  content.forEach((raw, k) => {
    const p = raw as OpenAIContentPart;
    if (isObj(p) && p.type === 'text' && typeof p.text === 'string') parts.push({ text: p.text });
    else if (isObj(p) && p.type === 'image_url' && (typeof p.image_url === 'string' || isObj(p.image_url))) {
      const image = p.image_url as string | Obj;
      const url = typeof image === 'string' ? image : typeof image.url === 'string' ? image.url : '';
      if (isObj(image) && image.detail !== undefined) lost.push(`${at}.content[${k}].image_url.detail: dropped (Gemini has no image detail setting)`);
      parts.push(imagePart(url));
    } else lost.push(`${at}.content[${k}]: ${isObj(p) && typeof p.type === 'string' ? `a "${p.type}" part` : 'a part'} dropped (no Gemini form)`);
  });
  if (parts.length === 1 && typeof parts[0].text === 'string') lost.push(`${at}.content: a list of one text part comes back as a string`);
  if (parts.length === 0) lost.push(`${at}.content: an empty list comes back as an empty string`);
  return parts;
}

/** `args` for a call's `arguments` text: the parsed JSON object; anything else is reported and sent as `{}`. */
function argsOf(args: unknown, at: string, lost: string[]): Record<string, unknown> {
  if (typeof args !== 'string') {
    lost.push(`${at}: arguments are not a JSON text; sent as {}`);
    return {};
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    lost.push(`${at}: arguments are not valid JSON; sent as {}`);
    return {};
  }
  if (!isObj(parsed)) {
    lost.push(`${at}: arguments are JSON but not an object (Gemini args is an object); sent as {}`);
    return {};
  }
  if (JSON.stringify(parsed) !== args) lost.push(`${at}: arguments formatting (whitespace, escapes) not kept; they come back as compact JSON`);
  return parsed;
}

/** Where a Chat history is being converted to Gemini contents: the output so far and what the next messages need to know. */
interface Converting {
  readonly contents: GeminiContent[];
  readonly lost: string[];
  readonly system: { text: string }[];
  /** Names of the calls of the latest assistant message, by id, for the responses that follow it. */
  callNames: Map<string, string>;
  /** The content the current run of tool messages is gathered in (all responses of a turn in one content). */
  responses?: GeminiContent;
}

/** Converts an OpenAI Chat history to Gemini `contents` and `systemInstruction` (see the file comment for the mapping). */
export function fromOpenAIChat(messages: readonly OpenAIChatMessage[]): GeminiConverted {
  const c: Converting = { contents: [], lost: [], system: [], callNames: new Map() };
  const { contents, lost, system } = c;
  messages.forEach((m, i) => {
    const at = `messages[${i}]`;
    const role = isObj(m) && typeof m.role === 'string' ? m.role : '';
    const mapped = MAPPED_FIELDS[role];
    if (!mapped) {
      lost.push(`${at}: a message with role ${JSON.stringify(role)} dropped (no Gemini form)`);
      return;
    }
    for (const key of Object.keys(m)) if (!mapped.includes(key)) lost.push(`${at}.${key}: dropped (no Gemini form)`);
    if (role !== 'tool' && role !== 'function') c.responses = undefined;
    if (role === 'system' || role === 'developer') systemFrom(c, m, at);
    else if (role === 'user') contents.push({ role: 'user', parts: userParts(m.content, at, lost) });
    else if (role === 'assistant') modelFrom(c, m, at);
    else responseFrom(c, m, at);
  });
  return { messages: contents, lost, ...(system.length > 0 ? { systemInstruction: { parts: system } } : {}) };
}

/** Leading system text goes to systemInstruction; later, it is sent as user text. */
function systemFrom(c: Converting, m: OpenAIChatMessage, at: string): void {
  const { text, joined } = plainText(m.content);
  if (joined) c.lost.push(`${at}.content: a list of parts comes back as one string`);
  if (m.role === 'developer') c.lost.push(`${at}.role: "developer" comes back as "system"`);
  if (c.contents.length === 0) c.system.push({ text });
  else {
    c.contents.push({ role: 'user', parts: [{ text }] });
    c.lost.push(`${at}: a system message after the first turn is sent as user text (Gemini keeps instructions in systemInstruction only)`);
  }
}

/** An assistant message as a model content: its text, then a functionCall part per call. */
function modelFrom(c: Converting, m: OpenAIChatMessage, at: string): void {
  const { lost } = c;
  const parts: GeminiPart[] = [];
  const makesCalls = (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) || isObj(m.function_call);
  if (m.content !== null && m.content !== undefined) {
    const { text, joined } = plainText(m.content);
    if (joined) lost.push(`${at}.content: a list of parts comes back as one string`);
    // An empty text part beside calls says nothing, and Gemini refuses empty text parameters.
    if (text === '' && makesCalls) lost.push(`${at}.content: empty text beside tool calls left out; it comes back as null`);
    else parts.push({ text });
  } else if (m.content === undefined) lost.push(`${at}.content: missing content comes back as null`);
  c.callNames = new Map();
  const calls: unknown = m.tool_calls;
  if (Array.isArray(calls)) {
    if (calls.length === 0) lost.push(`${at}.tool_calls: an empty list dropped`);
    calls.forEach((raw, k) => {
      const part = callPartFrom(c, raw as OpenAIToolCall, `${at}.tool_calls[${k}]`);
      if (part) parts.push(part);
    });
  } else if (calls !== undefined && calls !== null) lost.push(`${at}.tool_calls: not a list; dropped`);
  else if (calls === null) lost.push(`${at}.tool_calls: null dropped`);
  if (isObj(m.function_call)) {
    const name = typeof m.function_call.name === 'string' ? m.function_call.name : '';
    parts.push({ functionCall: { name, args: argsOf(m.function_call.arguments, `${at}.function_call.arguments`, lost) } });
    lost.push(`${at}.function_call: a legacy function call comes back as a tool call with a minted id`);
  } else if (m.function_call !== undefined) lost.push(`${at}.function_call: ${m.function_call === null ? 'null' : 'not an object'}; dropped`);
  c.contents.push({ role: 'model', parts });
}

/** One tool call as a functionCall part (its name remembered for the response); undefined for a value that is no call. */
function callPartFrom(c: Converting, call: OpenAIToolCall, cat: string): GeminiPart | undefined {
  const { lost } = c;
  if (!isObj(call)) {
    lost.push(`${cat}: not a call object; dropped`);
    return undefined;
  }
  for (const key of Object.keys(call)) if (key !== 'id' && key !== 'type' && key !== 'function') lost.push(`${cat}.${key}: dropped (no Gemini form)`);
  if (call.type !== 'function') lost.push(`${cat}.type: ${JSON.stringify(call.type)} comes back as "function"`);
  const fn = isObj(call.function) ? call.function : { name: '', arguments: '' };
  for (const key of Object.keys(fn)) if (key !== 'name' && key !== 'arguments') lost.push(`${cat}.function.${key}: dropped (no Gemini form)`);
  const name = typeof fn.name === 'string' ? fn.name : '';
  const fc: GeminiFunctionCall = { name, args: argsOf(fn.arguments, `${cat}.function.arguments`, lost) };
  if (typeof call.id === 'string') {
    fc.id = call.id;
    c.callNames.set(call.id, name);
  } else lost.push(`${cat}.id: missing; the call goes without an id`);
  return { functionCall: fc };
}

/** A tool (or legacy function) result joins the response content of its turn, named after the call it answers. */
function responseFrom(c: Converting, m: OpenAIChatMessage, at: string): void {
  const { lost } = c;
  const { text, joined } = plainText(m.content);
  if (joined) lost.push(`${at}.content: ${Array.isArray(m.content) ? 'a list of parts comes back as one string' : 'missing content comes back as an empty string'}`);
  const fr: GeminiFunctionResponse = { name: '', response: { result: resultValue(text) } };
  if (m.role === 'tool') {
    const id = m.tool_call_id;
    const callName = typeof id === 'string' ? c.callNames.get(id) : undefined;
    const ownName = typeof m.name === 'string' ? m.name : undefined;
    fr.name = callName ?? ownName ?? '';
    if (ownName === undefined) lost.push(`${at}.name: missing; the name of the call it answers comes back`);
    else if (callName !== undefined && ownName !== callName) lost.push(`${at}.name: "${ownName}" replaced by the name of the call it answers, "${callName}" (Gemini checks it)`);
    if (typeof id === 'string') fr.id = id;
    else lost.push(`${at}.tool_call_id: missing; the response goes without an id`);
  } else {
    fr.name = typeof m.name === 'string' ? m.name : '';
    lost.push(`${at}: a legacy function message comes back as a tool message with a minted id`);
  }
  if (c.responses === undefined) {
    c.responses = { role: 'user', parts: [] };
    c.contents.push(c.responses);
  }
  c.responses.parts.push({ functionResponse: fr });
}

/** The OpenAI content of a Gemini `functionResponse.response` (see the file comment). */
function responseContent(response: unknown): string {
  if (isObj(response)) {
    const keys = Object.keys(response);
    if (keys.length === 1 && keys[0] === 'result') return resultText(response.result);
  }
  return JSON.stringify(response ?? {}) ?? '';
}

/** A call of the current turn as converted: its OpenAI id, name, whether Gemini gave it an id, whether answered. */
interface TurnCall {
  readonly id: string;
  readonly name: string;
  readonly own: boolean;
  answered: boolean;
}

/** Where Gemini contents are being converted to Chat: the messages so far, what was lost, and the calls of the latest model content. */
interface ToChat {
  readonly messages: OpenAIChatMessage[];
  readonly lost: string[];
  /** The calls of the latest model content, for the responses that follow it. */
  turn: TurnCall[];
}

/** Converts Gemini `contents` (and `systemInstruction`) to an OpenAI Chat history (see the file comment for the mapping). */
export function toOpenAIChat(contents: readonly GeminiContent[], systemInstruction?: GeminiSystemInstruction): Converted<OpenAIChatMessage> {
  const t: ToChat = { messages: [], lost: [], turn: [] };
  const { messages, lost } = t;
  if (systemInstruction !== undefined) {
    const parts: unknown = isObj(systemInstruction) ? systemInstruction.parts : undefined;
    if (Array.isArray(parts)) {
      parts.forEach((p, k) => {
        if (isObj(p) && typeof p.text === 'string') messages.push({ role: 'system', content: p.text });
        else lost.push(`systemInstruction.parts[${k}]: not a text part; dropped`);
      });
    } else lost.push('systemInstruction: has no parts list; dropped');
  }
  contents.forEach((c, i) => {
    const at = `contents[${i}]`;
    const parts: readonly unknown[] = isObj(c) && Array.isArray(c.parts) ? c.parts : [];
    if (!isObj(c) || !Array.isArray(c.parts)) lost.push(`${at}: not a content with parts; dropped`);
    if (isObj(c)) for (const key of Object.keys(c)) if (key !== 'role' && key !== 'parts') lost.push(`${at}.${key}: dropped (no OpenAI Chat form)`);
    if (isObj(c) && isModelContent(c)) assistantFrom(t, parts, i, at);
    else if (isObj(c) && c.role !== undefined && c.role !== 'user') lost.push(`${at}: a content with role ${JSON.stringify(c.role)} dropped`);
    else userFrom(t, parts, i, at);
  });
  return { messages, lost };
}

/** A model content as an assistant message: its text parts joined, its functionCall parts as tool calls (id-less ones given ids). */
function assistantFrom(t: ToChat, parts: readonly unknown[], i: number, at: string): void {
  const { lost } = t;
  let text: string | null = null;
  const toolCalls: OpenAIToolCall[] = [];
  const ownIds = new Set<string>();
  for (const p of parts) if (isObj(p) && isObj(p.functionCall) && typeof p.functionCall.id === 'string') ownIds.add(p.functionCall.id);
  t.turn = [];
  parts.forEach((raw, k) => {
    const pat = `${at}.parts[${k}]`;
    if (!isObj(raw)) return;
    const p = raw as GeminiPart;
    if (p.thoughtSignature !== undefined) lost.push(`${pat}.thoughtSignature: dropped (OpenAI Chat has no place for it)`);
    if (typeof p.text === 'string') {
      if (p.thought === true) lost.push(`${pat}: thought summary dropped (OpenAI Chat has no place for it)`);
      else text = (text ?? '') + p.text;
    } else if (isObj(p.functionCall)) {
      const fc = p.functionCall;
      let id = typeof fc.id === 'string' ? fc.id : `call_${i}_${toolCalls.length}`;
      while (typeof fc.id !== 'string' && ownIds.has(id)) id += '_';
      const name = typeof fc.name === 'string' ? fc.name : '';
      toolCalls.push({ id, type: 'function', function: { name, arguments: JSON.stringify(fc.args ?? {}) } });
      t.turn.push({ id, name, own: typeof fc.id === 'string', answered: false });
    } else {
      const kind = Object.keys(p).find((key) => key !== 'thoughtSignature' && key !== 'thought') ?? 'empty';
      lost.push(`${pat}: a ${kind} part dropped (no OpenAI Chat form)`);
    }
  });
  const message: OpenAIChatMessage = { role: 'assistant', content: text };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  t.messages.push(message);
}

/** A user content: each functionResponse a tool message; the rest (text, images) one user message, when there is any. */
function userFrom(t: ToChat, parts: readonly unknown[], i: number, at: string): void {
  const { lost } = t;
  const userParts: OpenAIContentPart[] = [];
  parts.forEach((raw, k) => {
    const pat = `${at}.parts[${k}]`;
    if (!isObj(raw)) return;
    const p = raw as GeminiPart;
    if (p.thoughtSignature !== undefined) lost.push(`${pat}.thoughtSignature: dropped (OpenAI Chat has no place for it)`);
    if (isObj(p.functionResponse)) t.messages.push(toolMessageFrom(t, p.functionResponse, `call_${i}_${k}`, pat));
    else if (typeof p.text === 'string') userParts.push({ type: 'text', text: p.text });
    else if (isObj(p.inlineData) && typeof p.inlineData.mimeType === 'string' && p.inlineData.mimeType.startsWith('image/')) {
      userParts.push({ type: 'image_url', image_url: { url: `data:${p.inlineData.mimeType};base64,${String(p.inlineData.data ?? '')}` } });
    } else if (isObj(p.fileData) && typeof p.fileData.fileUri === 'string' && (p.fileData.mimeType === undefined || String(p.fileData.mimeType).startsWith('image/'))) {
      userParts.push({ type: 'image_url', image_url: { url: p.fileData.fileUri } });
    } else {
      const kind = Object.keys(p).find((key) => key !== 'thoughtSignature') ?? 'empty';
      lost.push(`${pat}: a ${kind} part dropped (no OpenAI Chat form)`);
    }
  });
  if (userParts.length > 0 || !parts.some((p) => isObj(p) && isObj(p.functionResponse))) {
    t.turn = [];
    const only = userParts.length === 1 && userParts[0].type === 'text' ? userParts[0].text : undefined;
    t.messages.push({ role: 'user', content: only ?? (userParts.length === 0 ? '' : userParts) });
  }
}

/** A functionResponse as a tool message answering its call: by id, or (id-less) the first id-less open call of its name, as Gemini pairs them. */
function toolMessageFrom(t: ToChat, fr: GeminiFunctionResponse, fallbackId: string, pat: string): OpenAIChatMessage {
  const name = typeof fr.name === 'string' ? fr.name : '';
  let id: string;
  if (typeof fr.id === 'string') {
    id = fr.id;
    const call = t.turn.find((c) => c.own && c.id === id && !c.answered);
    if (call) call.answered = true;
  } else {
    const call = t.turn.find((c) => !c.own && !c.answered && c.name === name);
    if (call) {
      call.answered = true;
      id = call.id;
    } else {
      id = fallbackId;
      t.lost.push(`${pat}: an id-less functionResponse answering no call of the turn before it; given the id ${id}`);
    }
  }
  for (const key of Object.keys(fr)) if (key !== 'name' && key !== 'response' && key !== 'id') t.lost.push(`${pat}.functionResponse.${key}: dropped (no OpenAI Chat form)`);
  return { role: 'tool', tool_call_id: id, name, content: responseContent(fr.response) };
}
