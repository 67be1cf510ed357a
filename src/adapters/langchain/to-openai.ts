import type { BaseMessage } from '@langchain/core/messages';
import { InputError } from '../../errors.js';
import type { OpenAIChatMessage, OpenAIContentPart, OpenAIToolCall } from '../../formats/openai-chat/types.js';

/**
 * LangChain messages read as OpenAI Chat messages, for the compressor only: nothing converted
 * here is ever sent. Each LangChain message gets one plain object, made once and remembered in a
 * weak map (so the same message is the same object on every request, and a chat's next request
 * reuses its counts), and each object maps back to its message. LangChain's own messages are
 * never written to.
 */
export interface MessageConverter {
  /** The OpenAI Chat reading of each message, in order (a new array of remembered objects). */
  toOpenAI(messages: readonly BaseMessage[], field: string): OpenAIChatMessage[];
  /** The LangChain message an object of `toOpenAI` stands for; undefined for anything else. */
  original(message: OpenAIChatMessage): BaseMessage | undefined;
}

type Block = Record<string, unknown>;

const isBlock = (value: unknown): value is Block => typeof value === 'object' && value !== null && !Array.isArray(value);
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** An image block (`image_url`, or the standard `image` block with a url or base64 data) as OpenAI's `image_url` part. */
function imagePart(block: Block): OpenAIContentPart {
  if (block.type === 'image_url') {
    const image = block.image_url;
    return { type: 'image_url', image_url: typeof image === 'string' ? { url: image } : image };
  }
  const url = str(block.url) ?? (block.source_type === 'url' ? str(block.data) : undefined);
  if (url !== undefined) return { type: 'image_url', image_url: { url } };
  const data = str(block.data) ?? str(block.base64);
  const mime = str(block.mimeType) ?? str(block.mime_type) ?? 'image/png';
  return data !== undefined ? { type: 'image_url', image_url: { url: `data:${mime};base64,${data}` } } : { type: 'image' };
}

/** The text a reasoning or thinking block holds (it is billed as text by the providers that send it back). */
function reasoningText(block: Block): string {
  const own = str(block.thinking) ?? str(block.reasoning) ?? str(block.text);
  if (own !== undefined) return own;
  const summary = Array.isArray(block.summary) ? block.summary : [];
  return summary.map((s) => (isBlock(s) ? str(s.text) ?? '' : '')).join('\n');
}

/** Block types that restate a tool call the message's `tool_calls` already carries. */
const CALL_BLOCKS = new Set(['tool_use', 'tool_call', 'tool_call_chunk', 'function_call', 'server_tool_call']);

/**
 * LangChain content as OpenAI Chat content: a string stays a string; blocks become text parts
 * (text, reasoning), image parts (counted by OpenAI's image rule) or bare typed parts (audio,
 * files: counted as nothing, as ctxfold counts those OpenAI parts). Call blocks are left out.
 */
function contentOf(content: unknown): string | OpenAIContentPart[] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: OpenAIContentPart[] = [];
  for (const block of content) {
    if (typeof block === 'string') parts.push({ type: 'text', text: block });
    else if (!isBlock(block)) continue;
    else if (block.type === 'text') parts.push({ type: 'text', text: str(block.text) ?? '' });
    else if (block.type === 'image_url' || block.type === 'image') parts.push(imagePart(block));
    else if (block.type === 'thinking' || block.type === 'reasoning' || block.type === 'redacted_thinking') parts.push({ type: 'text', text: reasoningText(block) });
    else if (CALL_BLOCKS.has(String(block.type))) continue;
    else parts.push({ type: String(block.type ?? 'unknown') });
  }
  return parts;
}

const isEmpty = (content: string | OpenAIContentPart[]) => (typeof content === 'string' ? content === '' : content.length === 0);

function argumentsText(args: unknown): string {
  if (typeof args === 'string') return args;
  return JSON.stringify(args ?? {}) ?? '{}';
}

/** An AI message: its text, its `tool_calls` (arguments as JSON text) and a legacy `function_call`. */
function assistantOf(m: BaseMessage): OpenAIChatMessage {
  const ai = m as BaseMessage & { tool_calls?: readonly { id?: string; name: string; args: unknown }[] };
  const content = contentOf(m.content);
  const calls: OpenAIToolCall[] = (ai.tool_calls ?? []).map((c) => ({ id: c.id ?? '', type: 'function', function: { name: c.name, arguments: argumentsText(c.args) } }));
  const legacy = isBlock(m.additional_kwargs?.function_call) ? m.additional_kwargs.function_call as Block : undefined;
  const out: OpenAIChatMessage = { role: 'assistant', content: (calls.length > 0 || legacy) && isEmpty(content) ? null : content };
  if (calls.length > 0) out.tool_calls = calls;
  if (legacy) out.function_call = { name: str(legacy.name) ?? '', arguments: argumentsText(legacy.arguments) };
  return out;
}

/** The OpenAI role of a generic `ChatMessage` (an unknown role is read as the user's). */
function genericRole(role: unknown): string {
  return typeof role === 'string' && ['system', 'developer', 'user', 'assistant'].includes(role) ? role : 'user';
}

/** One LangChain message as an OpenAI Chat message. */
function convert(m: BaseMessage, path: string): OpenAIChatMessage {
  if (typeof m !== 'object' || m === null || typeof (m as { type?: unknown }).type !== 'string') {
    throw new InputError(path, `must be a LangChain message (HumanMessage, AIMessage, ToolMessage, SystemMessage...), got ${m === null ? 'null' : typeof m}`);
  }
  switch (m.type) {
    case 'human':
      return { role: 'user', content: contentOf(m.content) };
    case 'ai':
      return assistantOf(m);
    case 'tool': {
      const t = m as BaseMessage & { tool_call_id?: unknown };
      const out: OpenAIChatMessage = { role: 'tool', tool_call_id: str(t.tool_call_id) ?? '', content: contentOf(m.content) };
      if (typeof m.name === 'string' && m.name !== '') out.name = m.name;
      return out;
    }
    case 'system':
      return { role: 'system', content: contentOf(m.content) };
    case 'developer':
      return { role: 'developer', content: contentOf(m.content) };
    case 'function':
      return { role: 'function', name: m.name ?? '', content: contentOf(m.content) };
    case 'generic': {
      const role = genericRole((m as BaseMessage & { role?: unknown }).role);
      return role === 'assistant' ? assistantOf(m) : { role, content: contentOf(m.content) };
    }
    default:
      throw new InputError(`${path}.type`, `a ${JSON.stringify(m.type)} message cannot be sent to a model`);
  }
}

/** Creates a converter whose memory lasts as long as the messages it has seen (weak maps). */
export function createMessageConverter(): MessageConverter {
  const forward = new WeakMap<BaseMessage, OpenAIChatMessage>();
  const back = new WeakMap<OpenAIChatMessage, BaseMessage>();
  return {
    toOpenAI(messages, field) {
      const out = new Array<OpenAIChatMessage>(messages.length);
      for (let i = 0; i < messages.length; i++) {
        const m = messages[i];
        let converted = typeof m === 'object' && m !== null ? forward.get(m) : undefined;
        if (converted === undefined) {
          converted = convert(m, `${field}[${i}]`);
          forward.set(m, converted);
          back.set(converted, m);
        }
        out[i] = converted;
      }
      return out;
    },
    original: (message) => back.get(message),
  };
}
