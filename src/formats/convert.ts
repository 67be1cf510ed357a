import { InputError } from '../errors.js';
import * as aiSdk from './ai-sdk/convert.js';
import * as anthropic from './anthropic/convert.js';
import * as gemini from './gemini/convert.js';
import * as hermes from './hermes/convert.js';
import type { FormatName } from './lens.js';
import type { OpenAIChatMessage } from './openai-chat/types.js';
import * as responses from './openai-responses/convert.js';
import * as qwenAgent from './qwen-agent/convert.js';
import { SUPPORTED_FORMATS } from './registry.js';

/** Options of `convertMessages`. */
export interface ConvertOptions {
  readonly from: FormatName;
  readonly to: FormatName;
  /**
   * The source request's instructions outside its list (Anthropic `system`, Gemini
   * `systemInstruction`, Responses `instructions`): carried into the target.
   */
  readonly instructions?: unknown;
}

/** A converted history: the target's list, its out-of-list instructions where it has them, and what could not be carried. */
export interface ConvertResult {
  readonly messages: unknown[];
  /** For Anthropic `system`, for Gemini `systemInstruction`, for Responses `instructions`; absent when none. */
  readonly instructions?: unknown;
  /** What the target cannot carry, each naming the source message (empty: nothing was lost). */
  readonly lost: string[];
}

type ToChat = (messages: readonly unknown[], instructions: unknown) => { messages: OpenAIChatMessage[]; lost: string[] };
type FromChat = (messages: readonly OpenAIChatMessage[]) => { messages: unknown[]; lost: string[]; instructions?: unknown };

/** Each format's converters to and from OpenAI Chat, the hub every conversion goes through. */
const TO_CHAT: Readonly<Record<FormatName, ToChat>> = Object.freeze({
  openai: (m: readonly unknown[]) => ({ messages: m as OpenAIChatMessage[], lost: [] }),
  anthropic: (m: readonly unknown[], i: unknown) => anthropic.toOpenAIChat(m as never, { system: i as never, toolNames: true }),
  gemini: (m: readonly unknown[], i: unknown) => gemini.toOpenAIChat(m as never, i as never),
  'openai-responses': (m: readonly unknown[], i: unknown) => responses.toOpenAIChat(m as never, { instructions: i as never, toolNames: true }),
  'ai-sdk': (m: readonly unknown[]) => aiSdk.toOpenAIChat(m as never),
  'qwen-agent': (m: readonly unknown[]) => qwenAgent.toOpenAIChat(m as never),
  hermes: (m: readonly unknown[]) => hermes.toOpenAIChat(m as never),
});

const FROM_CHAT: Readonly<Record<FormatName, FromChat>> = Object.freeze({
  openai: (m: readonly OpenAIChatMessage[]) => ({ messages: m.slice(), lost: [] }),
  anthropic: (m: readonly OpenAIChatMessage[]) => {
    const r = anthropic.fromOpenAIChat(m);
    return { messages: r.messages, lost: r.lost, instructions: r.system };
  },
  gemini: (m: readonly OpenAIChatMessage[]) => {
    const r = gemini.fromOpenAIChat(m);
    return { messages: r.messages, lost: r.lost, instructions: r.systemInstruction };
  },
  'openai-responses': (m: readonly OpenAIChatMessage[]) => responses.fromOpenAIChat(m),
  'ai-sdk': (m: readonly OpenAIChatMessage[]) => aiSdk.fromOpenAIChat(m),
  'qwen-agent': (m: readonly OpenAIChatMessage[]) => qwenAgent.fromOpenAIChat(m),
  hermes: (m: readonly OpenAIChatMessage[]) => hermes.fromOpenAIChat(m),
});

/**
 * Converts a history between wire formats (through OpenAI Chat), for migrating stored chats or
 * testing one history in every format. Lossless where both formats can carry everything: `lost`
 * lists each thing the target cannot carry (ids Hermes text has no place for, re-serialized
 * arguments, dropped media...), naming the source message. The input is never changed.
 */
export function convertMessages(messages: readonly unknown[], options: ConvertOptions): ConvertResult {
  for (const key of ['from', 'to'] as const) {
    if (!SUPPORTED_FORMATS.includes(options[key])) throw new InputError(`options.${key}`, `must be one of ${SUPPORTED_FORMATS.join(', ')}, got ${JSON.stringify(options[key])}`);
  }
  if (!Array.isArray(messages)) throw new InputError('messages', `must be an array of messages, got ${messages === null ? 'null' : typeof messages}`);
  if (options.from === options.to) return { messages: messages.slice(), ...(options.instructions === undefined ? {} : { instructions: options.instructions }), lost: [] };
  const chat = TO_CHAT[options.from](messages, options.instructions);
  if (options.to === 'openai') return { messages: chat.messages, lost: chat.lost };
  const out = FROM_CHAT[options.to](chat.messages);
  const lost = [...chat.lost, ...out.lost];
  return out.instructions === undefined ? { messages: out.messages, lost } : { messages: out.messages, instructions: out.instructions, lost };
}
