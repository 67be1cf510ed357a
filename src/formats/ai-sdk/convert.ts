import type { Converted } from '../convert-types.js';
import type { OpenAIChatMessage, OpenAIContentPart, OpenAIToolCall } from '../openai-chat/types.js';
import { callArguments, isObj, jsonText, partsOf } from './parts.js';
import type { AiSdkMessage, AiSdkPart, AiSdkToolResultOutput } from './types.js';
import { chatFields } from '../openai-chat/fields.js';

/**
 * OpenAI Chat Completions <-> Vercel AI SDK `ModelMessage` lists. Calls: `tool_calls[].function
 * .arguments` (JSON text) <-> `tool-call` parts with `input` (the parsed value); results: one `tool`
 * message per result <-> `tool-result` parts (text output), consecutive ones in one tool message;
 * a result's `toolName` is the name of the call it answers. Whatever the target cannot carry is
 * named in `lost` (`messages[i]...: what`); with `lost` empty, converting back gives the input.
 */

type Obj = Record<string, unknown>;

const MESSAGE_FIELDS = chatFields([], ['function']);

/** Names in `lost` every field of `value` outside `known`. */
function extraFields(value: Obj, known: readonly string[], where: string, lost: string[], target: string): void {
  for (const key of Object.keys(value)) if (!known.includes(key) && value[key] !== undefined) lost.push(`${where}.${key}: dropped (${target} has no such field)`);
}

/** Text of an OpenAI content value: a string as it is, the text of text parts joined. */
function openaiText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let s = '';
  for (const part of content) if (isObj(part) && typeof part.text === 'string') s += part.text;
  return s;
}

/** A user content part of OpenAI Chat as an AI SDK part, or undefined (named in `lost`) when it has none. */
function userPartFromOpenAI(part: unknown, where: string, lost: string[]): AiSdkPart | undefined {
  if (!isObj(part)) {
    lost.push(`${where}: dropped (not a content part)`);
    return undefined;
  }
  if (part.type === 'text' && typeof part.text === 'string') {
    extraFields(part, ['type', 'text'], where, lost, 'an AI SDK text part');
    return { type: 'text', text: part.text };
  }
  if (part.type === 'image_url') {
    const image = part.image_url;
    extraFields(part, ['type', 'image_url'], where, lost, 'an AI SDK image part');
    if (typeof image === 'string') {
      lost.push(`${where}.image_url: a bare URL string; converting back gives { url }`);
      return { type: 'image', image };
    }
    if (isObj(image) && typeof image.url === 'string') {
      extraFields(image, ['url', 'detail'], `${where}.image_url`, lost, 'an AI SDK image part');
      return typeof image.detail === 'string'
        ? { type: 'image', image: image.url, providerOptions: { openai: { imageDetail: image.detail } } }
        : { type: 'image', image: image.url };
    }
  }
  lost.push(`${where}: ${typeof part.type === 'string' ? `"${part.type}" part` : 'part'} dropped (no AI SDK equivalent in this conversion)`);
  return undefined;
}

/** The input of a call from its arguments text: the parsed JSON, or the text itself when it is not JSON. */
function inputFromArguments(args: unknown, where: string, lost: string[]): unknown {
  if (typeof args !== 'string') {
    lost.push(`${where}: arguments are not a string; converting back gives their JSON text`);
    return args;
  }
  try {
    const input: unknown = JSON.parse(args);
    if (JSON.stringify(input) !== args) lost.push(`${where}: arguments re-serialized from the parsed input (their formatting is not kept)`);
    return input;
  } catch {
    lost.push(`${where}: arguments are not valid JSON; kept as a string input`);
    return args;
  }
}

/** The output a tool message's content becomes: text as it is, a list of text parts as a `content` output. */
function outputFromOpenAI(content: unknown, where: string, lost: string[]): AiSdkToolResultOutput {
  if (typeof content === 'string') return { type: 'text', value: content };
  if (Array.isArray(content)) {
    const value: { type: 'text'; text: string }[] = [];
    content.forEach((part, k) => {
      if (isObj(part) && part.type === 'text' && typeof part.text === 'string') {
        extraFields(part, ['type', 'text'], `${where}[${k}]`, lost, 'an AI SDK content item');
        value.push({ type: 'text', text: part.text });
      } else lost.push(`${where}[${k}]: dropped (only text parts are carried in a tool result)`);
    });
    return { type: 'content', value };
  }
  lost.push(`${where}: ${content === null ? 'null' : 'missing'} content became an empty text output`);
  return { type: 'text', value: '' };
}

/**
 * An OpenAI Chat history as AI SDK `ModelMessage`s. A tool message's `toolName` is the name of the
 * call it answers, looked up in the closest assistant message before it; legacy `function_call` /
 * role `function` become a tool call with a made-up id and its result (named in `lost`).
 */
export function fromOpenAIChat(messages: readonly OpenAIChatMessage[]): Converted<AiSdkMessage> {
  const out: AiSdkMessage[] = [];
  const lost: string[] = [];
  let lastAssistant: OpenAIChatMessage | undefined;
  let lastAssistantIndex = -1;
  let previousWasResult = false;
  const pushResult = (part: AiSdkPart) => {
    const last = out[out.length - 1];
    if (previousWasResult && last?.role === 'tool' && Array.isArray(last.content)) last.content.push(part);
    else out.push({ role: 'tool', content: [part] });
    previousWasResult = true;
  };
  messages.forEach((m, i) => {
    const where = `messages[${i}]`;
    const role = m.role;
    const isResult = role === 'tool' || role === 'function';
    if (!isResult) previousWasResult = false;
    if (MESSAGE_FIELDS[role]) extraFields(m, MESSAGE_FIELDS[role], where, lost, 'an AI SDK message');
    switch (role) {
      case 'system':
      case 'developer': {
        if (role === 'developer') lost.push(`${where}.role: "developer" became "system"`);
        if (typeof m.content !== 'string') lost.push(`${where}.content: ${Array.isArray(m.content) ? 'parts joined into one string' : 'became an empty string'}`);
        out.push({ role: 'system', content: openaiText(m.content) });
        return;
      }
      case 'user': {
        if (typeof m.content === 'string') out.push({ role: 'user', content: m.content });
        else if (Array.isArray(m.content)) {
          const parts: AiSdkPart[] = [];
          m.content.forEach((p, k) => {
            const part = userPartFromOpenAI(p, `${where}.content[${k}]`, lost);
            if (part) parts.push(part);
          });
          out.push({ role: 'user', content: parts });
        } else {
          lost.push(`${where}.content: became an empty string`);
          out.push({ role: 'user', content: '' });
        }
        return;
      }
      case 'assistant': {
        lastAssistant = m;
        lastAssistantIndex = i;
        const calls: AiSdkPart[] = [];
        if (m.tool_calls === null || (Array.isArray(m.tool_calls) && m.tool_calls.length === 0)) lost.push(`${where}.tool_calls: ${m.tool_calls === null ? 'null' : 'an empty list'} dropped`);
        if (Array.isArray(m.tool_calls)) {
          m.tool_calls.forEach((call: OpenAIToolCall, k) => {
            const at = `${where}.tool_calls[${k}]`;
            extraFields(call, ['id', 'type', 'function'], at, lost, 'an AI SDK tool-call part');
            if (call.type !== 'function') lost.push(`${at}.type: ${call.type === undefined ? 'missing' : JSON.stringify(call.type)}; converting back gives "function"`);
            extraFields(call.function as unknown as Obj, ['name', 'arguments'], `${at}.function`, lost, 'an AI SDK tool-call part');
            calls.push({ type: 'tool-call', toolCallId: call.id, toolName: call.function?.name ?? '', input: inputFromArguments(call.function?.arguments, `${at}.function.arguments`, lost) });
          });
        }
        if (isObj(m.function_call)) {
          lost.push(`${where}.function_call: a legacy function call became a tool call with the made-up id function_call_${i}`);
          const fn = m.function_call as { name?: unknown; arguments?: unknown };
          calls.push({ type: 'tool-call', toolCallId: `function_call_${i}`, toolName: typeof fn.name === 'string' ? fn.name : '', input: inputFromArguments(fn.arguments, `${where}.function_call.arguments`, lost) });
        }
        if (Array.isArray(m.content)) lost.push(`${where}.content: parts joined into one text`);
        if (calls.length === 0) {
          if (typeof m.content !== 'string' && !Array.isArray(m.content)) lost.push(`${where}.content: ${m.content === null ? 'null' : 'missing'} content became an empty string`);
          out.push({ role: 'assistant', content: openaiText(m.content) });
          return;
        }
        // Content beside the calls: a text part (an empty string too); null content gives none.
        const text = typeof m.content === 'string' || Array.isArray(m.content) ? [{ type: 'text', text: openaiText(m.content) }] : [];
        if (m.content === undefined) lost.push(`${where}.content: missing; converting back gives null`);
        out.push({ role: 'assistant', content: [...text, ...calls] });
        return;
      }
      case 'tool':
      case 'function': {
        const id = role === 'tool' ? m.tool_call_id : `function_call_${lastAssistantIndex}`;
        if (role === 'function') lost.push(`${where}.role: a legacy function result became the tool result of function_call_${lastAssistantIndex}`);
        if (typeof id !== 'string') lost.push(`${where}.tool_call_id: not a string; became an empty id`);
        const call = role === 'tool' ? lastAssistant?.tool_calls?.find((c) => c?.id === id) : undefined;
        const callName = role === 'function' ? (typeof lastAssistant?.function_call?.name === 'string' ? lastAssistant.function_call.name : undefined) : call?.function?.name;
        const own = typeof m.name === 'string' ? m.name : undefined;
        if (callName === undefined) lost.push(`${where}: no call before it has this id; toolName taken from its own name`);
        else if (own === undefined) lost.push(`${where}: has no name; converting back names it after its call (${callName})`);
        else if (own !== callName) lost.push(`${where}.name: "${own}" differs from its call's name "${callName}", which the result takes`);
        pushResult({ type: 'tool-result', toolCallId: typeof id === 'string' ? id : '', toolName: callName ?? own ?? '', output: outputFromOpenAI(m.content, `${where}.content`, lost) });
        return;
      }
      default:
        lost.push(`${where}: role ${JSON.stringify(role)} dropped (the AI SDK has no such role)`);
    }
  });
  return { messages: out, lost };
}

/** The data URL or URL text of an AI SDK image or file value (bytes as base64). */
function urlOf(data: unknown, mediaType: unknown, where: string, lost: string[]): string {
  const type = typeof mediaType === 'string' ? mediaType : 'image/*';
  if (data instanceof URL) return data.href;
  if (typeof data === 'string') {
    if (data.startsWith('data:') || /^[a-z][a-z0-9+.-]*:\/\//i.test(data)) return data;
    lost.push(`${where}: base64 data sent as a data URL`);
    return `data:${type};base64,${data}`;
  }
  if (data instanceof Uint8Array || data instanceof ArrayBuffer) {
    const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
    let s = '';
    for (let k = 0; k < bytes.length; k++) s += String.fromCharCode(bytes[k]);
    lost.push(`${where}: bytes sent as a base64 data URL`);
    return `data:${type};base64,${btoa(s)}`;
  }
  lost.push(`${where}: image data of an unknown kind dropped`);
  return '';
}

/** A user part of the AI SDK as an OpenAI content part, or undefined (named in `lost`). */
function userPartToOpenAI(part: AiSdkPart, where: string, lost: string[]): OpenAIContentPart | undefined {
  if (part.type === 'text' && typeof part.text === 'string') {
    extraFields(part, ['type', 'text'], where, lost, 'an OpenAI text part');
    return { type: 'text', text: part.text };
  }
  const isImageFile = part.type === 'file' && typeof part.mediaType === 'string' && part.mediaType.startsWith('image/');
  if (part.type === 'image' || isImageFile) {
    if (isImageFile) lost.push(`${where}: an image file part sent as image_url`);
    const po = part.providerOptions;
    const openai = isObj(po) ? po.openai : undefined;
    const detail = isObj(openai) && typeof openai.imageDetail === 'string' ? openai.imageDetail : undefined;
    if (isObj(po)) extraFields(po, ['openai'], `${where}.providerOptions`, lost, 'an OpenAI image part');
    if (isObj(openai)) extraFields(openai, ['imageDetail'], `${where}.providerOptions.openai`, lost, 'an OpenAI image part');
    extraFields(part, ['type', part.type === 'image' ? 'image' : 'data', 'providerOptions', ...(part.type === 'file' ? ['mediaType'] : [])], where, lost, 'an OpenAI image part');
    if (part.type === 'image' && part.mediaType !== undefined) lost.push(`${where}.mediaType: dropped (an image URL carries its own type)`);
    const url = urlOf(part.type === 'image' ? part.image : part.data, part.mediaType, where, lost);
    return { type: 'image_url', image_url: detail !== undefined ? { url, detail } : { url } };
  }
  lost.push(`${where}: "${part.type}" part dropped (OpenAI Chat has no equivalent in this conversion)`);
  return undefined;
}

/** The content of an OpenAI tool message for an AI SDK tool result. */
function toolContentToOpenAI(part: AiSdkPart, where: string, lost: string[]): string | OpenAIContentPart[] {
  const out = part.output;
  if (!isObj(out)) {
    if ('result' in part) {
      lost.push(`${where}.result: an ai v4 result; converting back gives an output`);
      return typeof part.result === 'string' ? part.result : jsonText(part.result);
    }
    lost.push(`${where}.output: missing; sent as empty text`);
    return '';
  }
  extraFields(out, ['type', 'value', ...(out.type === 'execution-denied' ? ['reason'] : [])], `${where}.output`, lost, 'an OpenAI tool message');
  switch (out.type) {
    case 'text':
      if (typeof out.value === 'string') return out.value;
      break;
    case 'content': {
      if (!Array.isArray(out.value)) break;
      const parts: OpenAIContentPart[] = [];
      out.value.forEach((item, k) => {
        if (isObj(item) && item.type === 'text' && typeof item.text === 'string') {
          extraFields(item, ['type', 'text'], `${where}.output.value[${k}]`, lost, 'an OpenAI text part');
          parts.push({ type: 'text', text: item.text });
        } else lost.push(`${where}.output.value[${k}]: dropped (OpenAI tool messages carry text only)`);
      });
      return parts;
    }
    case 'execution-denied':
      lost.push(`${where}.output: an execution-denied output sent as text`);
      return typeof out.reason === 'string' ? out.reason : 'Tool execution denied.';
    default:
      break;
  }
  lost.push(`${where}.output: a "${String(out.type)}" output sent as text`);
  return typeof out.value === 'string' ? out.value : jsonText(out.value);
}

/**
 * AI SDK `ModelMessage`s as an OpenAI Chat history. Calls the client runs become `tool_calls`
 * (input as JSON text); each tool result becomes a `tool` message named after its tool. Reasoning,
 * provider-executed calls, approvals, files and provider options have no place there: `lost` names them.
 */
export function toOpenAIChat(messages: readonly AiSdkMessage[]): Converted<OpenAIChatMessage> {
  const out: OpenAIChatMessage[] = [];
  const lost: string[] = [];
  messages.forEach((m, i) => {
    const where = `messages[${i}]`;
    extraFields(m, ['role', 'content'], where, lost, 'an OpenAI Chat message');
    switch (m.role) {
      case 'system':
        out.push({ role: 'system', content: typeof m.content === 'string' ? m.content : openaiText(m.content) });
        return;
      case 'user': {
        if (typeof m.content === 'string') {
          out.push({ role: 'user', content: m.content });
          return;
        }
        const parts: OpenAIContentPart[] = [];
        partsOf(m).forEach((p, k) => {
          const part = userPartToOpenAI(p, `${where}.content[${k}]`, lost);
          if (part) parts.push(part);
        });
        out.push({ role: 'user', content: parts });
        return;
      }
      case 'assistant': {
        if (typeof m.content === 'string') {
          out.push({ role: 'assistant', content: m.content });
          return;
        }
        const texts: string[] = [];
        const calls: OpenAIToolCall[] = [];
        partsOf(m).forEach((part, k) => {
          const at = `${where}.content[${k}]`;
          if (part.type === 'text' && typeof part.text === 'string') {
            if (calls.length > 0) lost.push(`${at}: text after a tool call moved before the calls`);
            extraFields(part, ['type', 'text'], at, lost, 'OpenAI assistant content');
            texts.push(part.text);
          } else if (part.type === 'tool-call' && part.providerExecuted !== true) {
            extraFields(part, ['type', 'toolCallId', 'toolName', 'input', 'args'], at, lost, 'an OpenAI tool call');
            calls.push({ id: String(part.toolCallId), type: 'function', function: { name: String(part.toolName), arguments: callArguments(part) || '{}' } });
          } else {
            lost.push(`${at}: ${part.type === 'tool-call' ? 'a provider-executed tool call' : `a "${part.type}" part`} dropped (OpenAI Chat has no place for it)`);
          }
        });
        if (texts.length > 1) lost.push(`${where}.content: ${texts.length} text parts joined into one string`);
        else if (calls.length === 0) lost.push(`${where}.content: a part list without tool calls became string content`);
        const content = texts.length > 0 ? texts.join('') : calls.length > 0 ? null : '';
        out.push(calls.length > 0 ? { role: 'assistant', content, tool_calls: calls } : { role: 'assistant', content });
        return;
      }
      case 'tool': {
        partsOf(m).forEach((part, k) => {
          const at = `${where}.content[${k}]`;
          if (part.type !== 'tool-result') {
            lost.push(`${at}: a "${part.type}" part dropped (OpenAI Chat has no place for it)`);
            return;
          }
          extraFields(part, ['type', 'toolCallId', 'toolName', 'output', 'result'], at, lost, 'an OpenAI tool message');
          const msg: OpenAIChatMessage = { role: 'tool', tool_call_id: String(part.toolCallId), content: toolContentToOpenAI(part, at, lost) };
          if (typeof part.toolName === 'string') msg.name = part.toolName;
          out.push(msg);
        });
        return;
      }
      default:
        lost.push(`${where}: role ${JSON.stringify(m.role)} dropped (OpenAI Chat has no such role)`);
    }
  });
  return { messages: out, lost };
}
