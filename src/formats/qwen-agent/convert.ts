import { scanStructure, type CallStructure } from '../../core/structure.js';
import type { Converted } from '../convert-types.js';
import type { OpenAIChatMessage, OpenAIContentPart, OpenAIToolCall } from '../openai-chat/types.js';
import { contentText } from './content.js';
import { functionIdOf, qwenAgentLens } from './lens.js';
import type { QwenAgentContentItem, QwenAgentMessage } from './types.js';

/**
 * OpenAI Chat Completions <-> Qwen-Agent. An assistant message's `tool_calls` become consecutive
 * assistant messages, each with one `function_call` and `extra.function_id` = the call id (its
 * text and reasoning, when it has them, in an assistant message before them, as Qwen-Agent's own
 * output has it); each `tool` message becomes a `function` message named after its call, with the
 * same `extra.function_id`. Back, the messages of one model response merge into one assistant
 * message, and calls without a usable id get `call_<messageIndex>_0`. What a side cannot carry is
 * named in `lost`; with `lost` empty, converting back gives the input again.
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const OPENAI_FIELDS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  system: Object.freeze(['role', 'content', 'name']),
  developer: Object.freeze(['role', 'content', 'name']),
  user: Object.freeze(['role', 'content', 'name']),
  assistant: Object.freeze(['role', 'content', 'name', 'tool_calls', 'function_call', 'reasoning_content']),
  tool: Object.freeze(['role', 'content', 'name', 'tool_call_id']),
  function: Object.freeze(['role', 'content', 'name']),
});
const QWEN_FIELDS: readonly string[] = Object.freeze(['role', 'content', 'reasoning_content', 'name', 'function_call', 'extra']);

/** OpenAI content (string, parts or null) as Qwen-Agent content; parts it has no item for are named in `lost`. */
function toQwenContent(content: unknown, at: string, lost: string[]): string | QwenAgentContentItem[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) {
    if (content !== null && content !== undefined) lost.push(`${at}.content: ${typeof content} content dropped (Qwen-Agent content is a string or a list of items)`);
    return '';
  }
  const items: QwenAgentContentItem[] = [];
  content.forEach((part: OpenAIContentPart, k) => {
    const extra = isObj(part) ? Object.keys(part).filter((key) => !['type', 'text', 'image_url'].includes(key)) : [];
    if (isObj(part) && part.type === 'text' && typeof part.text === 'string') items.push({ text: part.text });
    else if (isObj(part) && part.type === 'image_url') {
      const image = part.image_url;
      const url = typeof image === 'string' ? image : isObj(image) && typeof image.url === 'string' ? image.url : undefined;
      if (url === undefined) {
        lost.push(`${at}.content[${k}]: image part without a url dropped`);
        return;
      }
      items.push({ image: url });
      if (typeof image === 'string' || (isObj(image) && Object.keys(image).some((key) => key !== 'url'))) lost.push(`${at}.content[${k}].image_url: only the url is kept (Qwen-Agent image items have no detail)`);
    } else {
      lost.push(`${at}.content[${k}]: part of type ${isObj(part) ? String(part.type) : typeof part} dropped (Qwen-Agent items are text, image, file, audio, video by url)`);
      return;
    }
    if (extra.length > 0) lost.push(`${at}.content[${k}]: ${extra.join(', ')} dropped`);
  });
  return items;
}

/** Qwen-Agent content as OpenAI content: a string stays a string, items become text and image parts. */
function toOpenAIContent(content: unknown, at: string, lost: string[]): string | OpenAIContentPart[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: OpenAIContentPart[] = [];
  content.forEach((item: QwenAgentContentItem, k) => {
    if (typeof item?.text === 'string') parts.push({ type: 'text', text: item.text });
    else if (typeof item?.image === 'string') parts.push({ type: 'image_url', image_url: { url: item.image } });
    else lost.push(`${at}.content[${k}]: ${Object.keys(item ?? {}).join(', ') || 'empty'} item dropped (OpenAI Chat has no part for it)`);
  });
  return parts;
}

const isEmpty = (content: string | unknown[]) => content.length === 0;
const emptyContent = (content: unknown) => content === null || content === undefined || ((typeof content === 'string' || Array.isArray(content)) && content.length === 0);

function unknownFields(m: Obj, known: readonly string[], at: string, lost: string[], target: string) {
  for (const key of Object.keys(m)) if (!known.includes(key)) lost.push(`${at}.${key} dropped (${target} has no such field)`);
}

/** The name of the call `id` among the calls of the latest assistant message with tool_calls, if it is there. */
function callNameFor(calls: readonly OpenAIToolCall[], id: unknown): string | undefined {
  const call = calls.find((c) => c?.id === id);
  return typeof call?.function?.name === 'string' ? call.function.name : undefined;
}

/** Converts one tool message (answering a call of `calls`, if any) to a function message; what it cannot carry goes to `lost`. */
function toFunctionMessage(m: OpenAIChatMessage, at: string, calls: readonly OpenAIToolCall[], lost: string[]): QwenAgentMessage {
  const id = m.tool_call_id;
  const name = callNameFor(calls, id);
  if (name === undefined) lost.push(`${at}: tool result ${String(id)} answers no call of the assistant message before it; named ${JSON.stringify(m.name ?? '')}`);
  else if (m.name === undefined) lost.push(`${at}.name: the function message is named after its call (${name}), a name the tool message did not have`);
  else if (m.name !== name) lost.push(`${at}.name: ${JSON.stringify(m.name)} replaced by the call's function name ${JSON.stringify(name)}`);
  if (typeof id !== 'string') lost.push(`${at}.tool_call_id: non-string id dropped`);
  if (m.content === null || m.content === undefined) lost.push(`${at}.content: null became ""`);
  return {
    role: 'function',
    name: name ?? (typeof m.name === 'string' ? m.name : ''),
    content: toQwenContent(m.content, at, lost),
    ...(typeof id === 'string' ? { extra: { function_id: id } } : {}),
  };
}

/**
 * OpenAI Chat messages as Qwen-Agent messages. Every message of the input is carried unless named
 * in `lost` (developer messages become system messages, content parts without a Qwen-Agent item
 * are dropped, a tool message is named after its call). Tool results go in call order: Qwen-Agent
 * renders them by position.
 */
export function fromOpenAIChat(messages: readonly OpenAIChatMessage[]): Converted<QwenAgentMessage> {
  const out: QwenAgentMessage[] = [];
  const source: number[] = [];
  const lost: string[] = [];
  const emit = (m: QwenAgentMessage, from: number) => {
    out.push(m);
    source.push(from);
  };
  let openCalls: readonly OpenAIToolCall[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    const at = `messages[${i}]`;
    const role = m.role;
    unknownFields(m, OPENAI_FIELDS[role] ?? ['role', 'content'], at, lost, 'Qwen-Agent');
    const named = typeof m.name === 'string' ? { name: m.name } : {};
    if (m.name !== undefined && typeof m.name !== 'string') lost.push(`${at}.name: non-string name dropped`);
    if (role === 'system' || role === 'developer' || role === 'user') {
      if (role === 'developer') lost.push(`${at}: role "developer" became "system" (Qwen-Agent has no developer role)`);
      if (m.content === null || m.content === undefined) lost.push(`${at}.content: null became ""`);
      emit({ role: role === 'user' ? 'user' : 'system', content: toQwenContent(m.content, at, lost), ...named }, i);
      continue;
    }
    if (role === 'assistant') {
      const text = toQwenContent(m.content, at, lost);
      const calls = Array.isArray(m.tool_calls) ? m.tool_calls : [];
      const legacy = isObj(m.function_call) ? m.function_call : undefined;
      const reasoning = typeof m.reasoning_content === 'string' ? { reasoning_content: m.reasoning_content } : {};
      if (m.reasoning_content !== undefined && m.reasoning_content !== null && typeof m.reasoning_content !== 'string') lost.push(`${at}.reasoning_content: non-string reasoning dropped`);
      if (m.reasoning_content === null) lost.push(`${at}.reasoning_content: null dropped`);
      if (Array.isArray(m.tool_calls) && m.tool_calls.length === 0) lost.push(`${at}.tool_calls: empty list dropped`);
      if (m.tool_calls === null) lost.push(`${at}.tool_calls: null dropped`);
      if (m.function_call === null) lost.push(`${at}.function_call: null dropped`);
      if (calls.length === 0 && !legacy) {
        if (m.content === null || m.content === undefined) lost.push(`${at}.content: null became ""`);
        emit({ role: 'assistant', content: text, ...reasoning, ...named }, i);
        continue;
      }
      openCalls = calls;
      // Text and reasoning come first, in their own message, as Qwen-Agent's own output has them.
      if (!isEmpty(text) || 'reasoning_content' in reasoning || 'name' in named) emit({ role: 'assistant', content: text, ...reasoning, ...named }, i);
      if (isEmpty(text) && m.content !== null && m.content !== undefined) lost.push(`${at}.content: empty content of a message with calls became null`);
      calls.forEach((call, k) => {
        const fn = call?.function;
        const args = typeof fn?.arguments === 'string' ? fn.arguments : JSON.stringify(fn?.arguments ?? null);
        if (typeof fn?.arguments !== 'string') lost.push(`${at}.tool_calls[${k}].function.arguments: ${typeof fn?.arguments} arguments written as JSON text`);
        if (call?.type !== 'function') lost.push(`${at}.tool_calls[${k}].type: ${call?.type === undefined ? 'missing type' : `type ${JSON.stringify(call.type)}`} becomes "function"`);
        for (const key of Object.keys(call ?? {})) if (!['id', 'type', 'function'].includes(key)) lost.push(`${at}.tool_calls[${k}].${key} dropped`);
        emit({ role: 'assistant', content: '', function_call: { name: String(fn?.name ?? ''), arguments: args }, extra: { function_id: String(call?.id ?? '') } }, i);
      });
      if (legacy) {
        const args = typeof legacy.arguments === 'string' ? legacy.arguments : JSON.stringify(legacy.arguments ?? null);
        emit({ role: 'assistant', content: '', function_call: { name: String(legacy.name ?? ''), arguments: args } }, i);
      }
      continue;
    }
    if (role === 'tool') {
      // The run of tool messages after a call message goes in call order, then whatever answers no call.
      let j = i;
      while (j < messages.length && messages[j].role === 'tool') j++;
      const run: number[] = [];
      for (let k = i; k < j; k++) run.push(k);
      const ordered: number[] = [];
      for (const call of openCalls) {
        const k = run.find((r) => !ordered.includes(r) && messages[r].tool_call_id === call?.id);
        if (k !== undefined) ordered.push(k);
      }
      for (const k of run) if (!ordered.includes(k)) ordered.push(k);
      ordered.forEach((k, place) => {
        if (k !== i + place) lost.push(`messages[${k}]: result moved to call order (Qwen-Agent reads results by position)`);
        if (k !== i) unknownFields(messages[k], OPENAI_FIELDS.tool, `messages[${k}]`, lost, 'Qwen-Agent');
        emit(toFunctionMessage(messages[k], `messages[${k}]`, openCalls, lost), k);
      });
      i = j - 1;
      continue;
    }
    if (role === 'function') {
      emit({ role: 'function', name: typeof m.name === 'string' ? m.name : '', content: toQwenContent(m.content, at, lost) }, i);
      continue;
    }
    lost.push(`${at}: message of role ${JSON.stringify(role)} dropped (Qwen-Agent roles are system, user, assistant, function)`);
  }
  // Consecutive assistant messages read as one model response when they go reasoning, text, calls.
  for (let i = 0; i < out.length; i++) {
    if (out[i].role !== 'assistant') continue;
    const end = responseEnd(out, i);
    if (source[end - 1] !== source[i]) lost.push(`messages[${source[i]}..${source[end - 1]}]: consecutive assistant messages read back as one model response`);
    i = end - 1;
  }
  return { messages: out, lost };
}

/** 0 reasoning only, 1 text, 2 a function call: one model response goes up this order, calls last. */
function rankOf(m: QwenAgentMessage): number {
  if (isObj(m.function_call)) return 2;
  if (contentText(m.content) !== '' || (Array.isArray(m.content) && m.content.length > 0)) return 1;
  return contentText(m.reasoning_content) !== '' ? 0 : 1;
}

/** End (exclusive) of the model response starting at assistant message `i`: reasoning, then text, then calls. */
function responseEnd(messages: readonly QwenAgentMessage[], i: number): number {
  let j = i + 1;
  while (j < messages.length && messages[j].role === 'assistant') {
    const prev = rankOf(messages[j - 1]);
    const next = rankOf(messages[j]);
    if (!(next > prev || (next === 2 && prev === 2))) break;
    j++;
  }
  return j;
}

/** The OpenAI id of each call (by message index) and of each turn that goes out as a legacy function call. */
function callIds(messages: readonly QwenAgentMessage[], structure: CallStructure, lost: string[]): { ids: Map<number, string>; legacy: Set<number> } {
  const ids = new Map<number, string>();
  const legacy = new Set<number>();
  for (const turn of structure.turns) {
    const carriers: number[] = [];
    for (let i = turn.opener; i < turn.openersEnd; i++) if (isObj(messages[i].function_call)) carriers.push(i);
    if (carriers.length === 1 && turn.calls[0].id === undefined) {
      legacy.add(turn.ordinal); // one id-less call: OpenAI's legacy function calling says the same thing
      continue;
    }
    const seen = new Set<string>();
    carriers.forEach((i, k) => {
      const id = turn.calls[k].id;
      if (id !== undefined && id !== '' && !seen.has(id)) {
        ids.set(i, id);
        seen.add(id);
        return;
      }
      const minted = `call_${i}_0`;
      ids.set(i, minted);
      lost.push(`messages[${i}].extra.function_id: ${id === undefined || id === '' ? 'missing' : `${JSON.stringify(id)} repeats an id of the same turn`}; id ${minted} minted (OpenAI tool calls need unique ids)`);
    });
  }
  return { ids, legacy };
}

/**
 * Qwen-Agent messages as OpenAI Chat messages: the messages of one model response (reasoning,
 * text, consecutive function calls) become one assistant message; function messages become tool
 * messages answering the call they pair with (legacy `function` messages for a lone id-less call).
 */
export function toOpenAIChat(messages: readonly QwenAgentMessage[]): Converted<OpenAIChatMessage> {
  const out: OpenAIChatMessage[] = [];
  const lost: string[] = [];
  const structure = scanStructure(messages, qwenAgentLens);
  const { ids, legacy } = callIds(messages, structure, lost);
  const turnOfCall = new Map<number, number>();
  for (const turn of structure.turns) for (let i = turn.opener; i < turn.openersEnd; i++) turnOfCall.set(i, turn.ordinal);
  const placed = new Map(structure.results.map((p) => [p.index, p]));
  for (let i = 0; i < messages.length; ) {
    const m = messages[i];
    const at = `messages[${i}]`;
    unknownFields(m, QWEN_FIELDS, at, lost, 'OpenAI Chat');
    if (isObj(m.extra)) for (const key of Object.keys(m.extra)) if (key !== 'function_id') lost.push(`${at}.extra.${key} dropped`);
    const named = typeof m.name === 'string' && m.role !== 'function' ? { name: m.name } : {};
    if (m.role === 'assistant') {
      const end = responseEnd(messages, i);
      const group = messages.slice(i, end);
      const texts = group.filter((g) => !emptyContent(g.content));
      const toolCalls: OpenAIToolCall[] = [];
      let fnCall: { name: string; arguments: string } | undefined;
      let reasoning = '';
      let hasReasoning = false;
      let name: string | undefined;
      group.forEach((g, k) => {
        const gi = i + k;
        if (typeof g.name === 'string' && name === undefined) name = g.name;
        if (g.reasoning_content !== undefined && g.reasoning_content !== null) {
          hasReasoning = true;
          if (typeof g.reasoning_content !== 'string') lost.push(`messages[${gi}].reasoning_content: items joined into text`);
          reasoning += contentText(g.reasoning_content);
        }
        if (k > 0) unknownFields(g, QWEN_FIELDS, `messages[${gi}]`, lost, 'OpenAI Chat');
        if (k > 0 && isObj(g.extra)) for (const key of Object.keys(g.extra)) if (key !== 'function_id') lost.push(`messages[${gi}].extra.${key} dropped`);
        const fc = g.function_call;
        if (!isObj(fc)) return;
        if (legacy.has(turnOfCall.get(gi) ?? -1)) fnCall = { name: fc.name, arguments: fc.arguments };
        else toolCalls.push({ id: ids.get(gi) ?? `call_${gi}_0`, type: 'function', function: { name: fc.name, arguments: fc.arguments } });
      });
      const contents = texts.map((g) => toOpenAIContent(g.content, `messages[${i + group.indexOf(g)}]`, lost));
      const calls = toolCalls.length > 0 || fnCall !== undefined;
      let content: OpenAIChatMessage['content'];
      if (contents.length === 0) content = calls ? null : toOpenAIContent(group[group.length - 1].content, at, lost);
      else if (contents.length === 1) content = contents[0];
      else if (contents.every((c) => typeof c === 'string')) content = contents.join('');
      else content = contents.flatMap((c) => (typeof c === 'string' ? [{ type: 'text', text: c }] : c));
      const msg: OpenAIChatMessage = { role: 'assistant', content };
      if (name !== undefined) msg.name = name;
      if (hasReasoning) msg.reasoning_content = reasoning;
      if (toolCalls.length > 0) msg.tool_calls = toolCalls;
      if (fnCall) msg.function_call = fnCall;
      out.push(msg);
      i = end;
      continue;
    }
    if (m.role === 'function') {
      const p = placed.get(i);
      const turn = p && p.turn >= 0 ? structure.turns[p.turn] : undefined;
      const content = toOpenAIContent(m.content, at, lost) || '';
      if (turn && p!.call >= 0 && legacy.has(turn.ordinal)) {
        out.push({ role: 'function', name: typeof m.name === 'string' ? m.name : turn.calls[0].name, content });
      } else {
        let id: string;
        if (turn && p!.call >= 0) {
          let carrier = -1;
          for (let c = turn.opener, k = 0; c < turn.openersEnd; c++) if (isObj(messages[c].function_call) && k++ === p!.call) carrier = c;
          id = ids.get(carrier) ?? `call_${carrier}_0`;
        } else {
          id = functionIdOf(m) ?? `call_${i}_0`;
          lost.push(`${at}: function result answers no call; sent as tool result ${id}`);
        }
        const msg: OpenAIChatMessage = { role: 'tool', tool_call_id: id, content };
        if (typeof m.name === 'string' && m.name !== '') msg.name = m.name;
        out.push(msg);
      }
      i++;
      continue;
    }
    out.push({ role: m.role, content: m.content === null ? '' : toOpenAIContent(m.content, at, lost), ...named });
    i++;
  }
  return { messages: out, lost };
}
