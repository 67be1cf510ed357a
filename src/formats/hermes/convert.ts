import { scanStructure } from '../../core/structure.js';
import type { Converted } from '../convert-types.js';
import type { OpenAIChatMessage, OpenAIToolCall } from '../openai-chat/types.js';
import { CALL_CLOSE, CALL_OPEN, callBlock, isBlockError, readCallBlocks, readResponseBlocks, RESPONSE_CLOSE, RESPONSE_OPEN, responseBlock } from './blocks.js';
import { hermesLens } from './lens.js';
import type { HermesMessage } from './types.js';
import { chatFields } from '../openai-chat/fields.js';

/**
 * OpenAI Chat Completions <-> Hermes text, laid out as the Qwen chat template renders it: an
 * assistant's `tool_calls` become `<tool_call>` blocks after its text (one newline before each),
 * its `reasoning_content` a `<think>` block before it; a run of tool messages becomes one user
 * message of `<tool_response>` blocks in call order. Hermes has no call ids: they are named in
 * `lost`, and reading back mints `call_<messageIndex>_<k>` (k: the block's place in the message).
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const THINK_OPEN = '<think>\n';
const THINK_CLOSE = '\n</think>\n\n';

const KNOWN = chatFields(['reasoning_content']);

/** The text of OpenAI content; parts other than text are named in `lost`, and so is a part list (it comes back as a string). */
function textOf(content: unknown, at: string, lost: string[]): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  if (!Array.isArray(content)) {
    lost.push(`${at}.content: ${typeof content} content dropped`);
    return '';
  }
  lost.push(`${at}.content: parts joined into one text (Hermes messages are text)`);
  let out = '';
  content.forEach((part: unknown, k) => {
    if (isObj(part) && typeof part.text === 'string') out += part.text;
    else lost.push(`${at}.content[${k}]: ${isObj(part) ? `part of type ${String(part.type)}` : typeof part} dropped (Hermes text has no images, audio or files)`);
  });
  return out;
}

function noteTags(text: string, at: string, tags: readonly string[], lost: string[]) {
  for (const tag of tags) if (text.includes(tag)) lost.push(`${at}: the text contains ${tag}, which Hermes reads as a tag`);
}

/**
 * OpenAI Chat messages as Hermes text. Call ids, tool message ids and anything without a place in
 * text (images, refusals, unknown fields) are named in `lost`; tool results go in call order.
 */
export function fromOpenAIChat(messages: readonly OpenAIChatMessage[]): Converted<HermesMessage> {
  const out: HermesMessage[] = [];
  const lost: string[] = [];
  let calls: readonly { id?: string; name: string }[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    const at = `messages[${i}]`;
    for (const key of Object.keys(m)) if (!(KNOWN[m.role] ?? ['role', 'content']).includes(key)) lost.push(`${at}.${key} dropped (Hermes messages are role and text)`);
    if (m.role === 'system' || m.role === 'developer' || m.role === 'user') {
      if (m.role === 'developer') lost.push(`${at}: role "developer" became "system"`);
      if (m.content === null || m.content === undefined) lost.push(`${at}.content: null became ""`);
      const text = textOf(m.content, at, lost);
      noteTags(text, at, m.role === 'user' ? [RESPONSE_OPEN] : [], lost);
      out.push({ role: m.role === 'user' ? 'user' : 'system', content: text });
      continue;
    }
    if (m.role === 'assistant') {
      const text = textOf(m.content, at, lost);
      noteTags(text, at, [CALL_OPEN, '<think>'], lost);
      const made: { id?: string; name: string; arguments: string }[] = [];
      (Array.isArray(m.tool_calls) ? m.tool_calls : []).forEach((call: OpenAIToolCall, k) => {
        const fn = call?.function;
        const args = typeof fn?.arguments === 'string' ? fn.arguments : JSON.stringify(fn?.arguments ?? {});
        if (typeof fn?.arguments !== 'string') lost.push(`${at}.tool_calls[${k}].function.arguments: ${typeof fn?.arguments} arguments written as JSON text`);
        lost.push(`${at}.tool_calls[${k}].id: ${String(call?.id)} dropped (Hermes pairs calls and results by position)`);
        if (call?.type !== 'function') lost.push(`${at}.tool_calls[${k}].type: ${call?.type === undefined ? 'missing type' : JSON.stringify(call.type)} becomes "function"`);
        for (const key of Object.keys(call ?? {})) if (!['id', 'type', 'function'].includes(key)) lost.push(`${at}.tool_calls[${k}].${key} dropped`);
        if (args.includes(CALL_OPEN) || args.includes(CALL_CLOSE)) lost.push(`${at}.tool_calls[${k}].function.arguments: tags inside are escaped`);
        made.push({ id: call?.id, name: String(fn?.name ?? ''), arguments: args });
      });
      if (Array.isArray(m.tool_calls) && m.tool_calls.length === 0) lost.push(`${at}.tool_calls: empty list dropped`);
      if (isObj(m.function_call)) {
        const fc = m.function_call;
        lost.push(`${at}.function_call: a legacy function call becomes a <tool_call> block (back, a tool call)`);
        made.push({ name: String(fc.name ?? ''), arguments: typeof fc.arguments === 'string' ? fc.arguments : JSON.stringify(fc.arguments ?? {}) });
      }
      if (made.length > 0) {
        calls = made;
        if (text === '' && m.content !== null && m.content !== undefined) lost.push(`${at}.content: empty content of a message with calls becomes null`);
      } else if (m.content === null || m.content === undefined) lost.push(`${at}.content: null became ""`);
      let content = text;
      if (made.length > 0) content += `${text !== '' ? '\n' : ''}${made.map((c) => callBlock(c.name, c.arguments)).join('\n')}`;
      if (typeof m.reasoning_content === 'string') {
        if (m.reasoning_content.includes(THINK_CLOSE)) lost.push(`${at}.reasoning_content: contains the end of a <think> block`);
        content = `${THINK_OPEN}${m.reasoning_content}${THINK_CLOSE}${content}`;
      } else if (m.reasoning_content !== undefined) lost.push(`${at}.reasoning_content: non-string reasoning dropped`);
      out.push({ role: 'assistant', content });
      continue;
    }
    if (m.role === 'tool' || m.role === 'function') {
      // The run of results after a call message: one user message, blocks in call order.
      let j = i;
      while (j < messages.length && (messages[j].role === 'tool' || messages[j].role === 'function')) j++;
      const run = messages.slice(i, j).map((r, k) => ({ r, index: i + k }));
      const taken = new Set<number>();
      const ordered: { r: OpenAIChatMessage; index: number; call?: { id?: string; name: string } }[] = [];
      calls.forEach((call, k) => {
        const found = run.find(({ r, index }) => !taken.has(index) && (call.id !== undefined ? r.tool_call_id === call.id : r.role === 'function' && r.name === call.name));
        if (found === undefined) {
          lost.push(`messages[${i}]: call ${call.id ?? call.name} (${call.name}) has no result in this run of results`);
          return;
        }
        taken.add(found.index);
        ordered.push({ ...found, call });
        if (found.index !== i + ordered.length - 1) lost.push(`messages[${found.index}]: result moved to call order (place ${k + 1})`);
      });
      for (const entry of run) {
        if (taken.has(entry.index)) continue;
        ordered.push(entry);
        lost.push(`messages[${entry.index}]: result answers no call of the assistant message before it`);
      }
      for (const { r, index, call } of ordered) {
        const rat = `messages[${index}]`;
        if (index !== i) for (const key of Object.keys(r)) if (!(KNOWN[r.role] ?? []).includes(key)) lost.push(`${rat}.${key} dropped (Hermes messages are role and text)`);
        if (r.role === 'tool') lost.push(`${rat}.tool_call_id: ${String(r.tool_call_id)} dropped (Hermes pairs calls and results by position)`);
        if (r.role === 'tool' && call !== undefined && r.name !== call.name) lost.push(`${rat}.name: ${r.name === undefined ? 'the tool message had no name; back, it is named after its call' : `${JSON.stringify(r.name)} becomes the call's name`}`);
        if (r.content === null || r.content === undefined) lost.push(`${rat}.content: null became ""`);
      }
      const texts = ordered.map(({ r, index }) => textOf(r.content, `messages[${index}]`, lost));
      texts.forEach((t, k) => noteTags(t, `messages[${ordered[k].index}]`, [RESPONSE_CLOSE], lost));
      out.push({ role: 'user', content: texts.map(responseBlock).join('\n') });
      calls = [];
      i = j - 1;
      continue;
    }
    lost.push(`${at}: message of role ${JSON.stringify(m.role)} dropped (Hermes roles are system, user, assistant)`);
  }
  return { messages: out, lost };
}

/** The reasoning and the rest of assistant text laid out as `<think>\n...\n</think>\n\n...`. */
function splitThink(text: string): { reasoning?: string; rest: string } {
  if (!text.startsWith(THINK_OPEN)) return { rest: text };
  const end = text.indexOf(THINK_CLOSE, THINK_OPEN.length - 1);
  if (end < 0) return { rest: text };
  return { reasoning: text.slice(THINK_OPEN.length, end), rest: text.slice(end + THINK_CLOSE.length) };
}

/**
 * Hermes text as OpenAI Chat messages: `<tool_call>` blocks become `tool_calls` with ids
 * `call_<messageIndex>_<k>`, each `<tool_response>` block a tool message answering the call at its
 * position; a user's text beside results becomes a user message after them.
 */
export function toOpenAIChat(messages: readonly HermesMessage[]): Converted<OpenAIChatMessage> {
  const out: OpenAIChatMessage[] = [];
  const lost: string[] = [];
  const structure = scanStructure(messages, hermesLens);
  const placed = new Map<string, { opener: number; call: number; name: string }>();
  for (const p of structure.results) {
    if (p.turn < 0 || p.call < 0 || p.pairing !== 'answer') continue;
    const turn = structure.turns[p.turn];
    placed.set(`${p.index}:${p.slot}`, { opener: turn.opener, call: p.call, name: turn.calls[p.call].name });
  }
  messages.forEach((m, i) => {
    const at = `messages[${i}]`;
    const content = typeof m.content === 'string' ? m.content : '';
    for (const key of Object.keys(m)) if (key !== 'role' && key !== 'content') lost.push(`${at}.${key} dropped`);
    if (m.role === 'assistant') {
      const { reasoning, rest } = splitThink(content);
      const read = readCallBlocks(rest);
      const msg: OpenAIChatMessage = { role: 'assistant', content: rest };
      if (reasoning !== undefined) msg.reasoning_content = reasoning;
      if (isBlockError(read)) lost.push(`${at}.content: malformed <tool_call> block at character ${read.offset} kept as text`);
      else if (read.blocks.length > 0) {
        const { blocks } = read;
        const pre = rest.slice(0, blocks[0].start);
        const layout = blocks.every((b, k) => rest.slice(b.end, k + 1 < blocks.length ? blocks[k + 1].start : rest.length) === (k + 1 < blocks.length ? '\n' : ''));
        if (pre === '') msg.content = null;
        else if (layout && pre.endsWith('\n')) msg.content = pre.slice(0, -1);
        else {
          msg.content = read.outside.trim();
          lost.push(`${at}.content: text around the <tool_call> blocks joined`);
        }
        msg.tool_calls = blocks.map((b, k) => ({ id: `call_${i}_${k}`, type: 'function', function: { name: b.name, arguments: b.arguments === '' ? '{}' : b.arguments } }));
      }
      out.push(msg);
      return;
    }
    if (m.role === 'user') {
      const read = readResponseBlocks(content);
      if (isBlockError(read) || read.blocks.length === 0) {
        if (isBlockError(read)) lost.push(`${at}.content: malformed <tool_response> block at character ${read.offset} kept as text`);
        out.push({ role: 'user', content });
        return;
      }
      read.blocks.forEach((b, k) => {
        const pair = placed.get(`${i}:${k}`);
        if (pair === undefined) {
          lost.push(`${at}: <tool_response> block ${k + 1} answers no call; sent as tool result call_${i}_r${k}`);
          out.push({ role: 'tool', tool_call_id: `call_${i}_r${k}`, content: b.content });
          return;
        }
        out.push({ role: 'tool', tool_call_id: `call_${pair.opener}_${pair.call}`, name: pair.name, content: b.content });
      });
      const text = read.outside.trim();
      if (text !== '') {
        lost.push(`${at}: the user's text beside the results goes in a user message after them`);
        out.push({ role: 'user', content: text });
      }
      return;
    }
    out.push({ role: m.role, content });
  });
  return { messages: out, lost };
}
