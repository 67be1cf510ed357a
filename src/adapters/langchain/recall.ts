import type { AIMessage } from '@langchain/core/messages';
import { isFields, type Fields } from '../../recall/dialect.js';
import { RECALL_TOOL_NAME } from '../../recall/tool-definition.js';
import { addUsage } from '../../recall/usage-sum.js';
import type { LangchainSdk } from './sdk.js';

/**
 * Recall on a LangChain model call: the model's reply is an `AIMessage` (its `tool_calls` parsed
 * by LangChain: `{ id, name, args }`), read for the rounds as the Chat Completions response it
 * stands for, and given to the agent without its recall calls when they cannot be answered.
 */

type Call = { readonly id?: string; readonly name?: string; readonly args?: unknown };
type Reply = { readonly content?: unknown; readonly tool_calls?: readonly Call[] };

const isReply = (v: unknown): v is Reply => typeof v === 'object' && v !== null && Array.isArray((v as Reply).tool_calls);
const textOf = (content: unknown): string => (typeof content === 'string'
  ? content
  : Array.isArray(content) ? content.map((b) => (typeof b === 'object' && b !== null && typeof (b as { text?: unknown }).text === 'string' ? (b as { text: string }).text : '')).join('') : '');

/**
 * The Chat Completions response an `AIMessage` stands for (one choice: its text and its calls,
 * arguments as JSON text), for `CHAT_RECALL`; undefined for anything else the handler returned.
 */
export function completionOf(reply: unknown): Record<string, unknown> | undefined {
  if (!isReply(reply)) return undefined;
  const calls = reply.tool_calls!.map((c) => ({ id: c.id ?? '', type: 'function', function: { name: c.name ?? '', arguments: JSON.stringify(c.args ?? {}) } }));
  const text = textOf(reply.content);
  return { choices: [{ index: 0, message: { role: 'assistant', content: text === '' ? null : text, ...(calls.length > 0 ? { tool_calls: calls } : {}) }, finish_reason: calls.length > 0 ? 'tool_calls' : 'stop' }] };
}

/**
 * The reply without its `ctxfold_recall` calls: a new `AIMessage` with the same content, id and
 * metadata, its `tool_calls` (and the provider's raw `additional_kwargs.tool_calls`) filtered.
 * Invariant: a reply without recall calls is returned as is (the same object).
 */
export function withoutRecallToolCalls<T>(reply: T, sdk: LangchainSdk): T {
  if (!isReply(reply) || !reply.tool_calls!.some((c) => c.name === RECALL_TOOL_NAME)) return reply;
  const ai = reply as unknown as AIMessage;
  const raw = ai.additional_kwargs?.tool_calls;
  const additional = Array.isArray(raw)
    ? { ...ai.additional_kwargs, tool_calls: raw.filter((c) => c?.function?.name !== RECALL_TOOL_NAME) }
    : ai.additional_kwargs;
  return new sdk.messages.AIMessage({
    content: ai.content,
    id: ai.id,
    name: ai.name,
    tool_calls: ai.tool_calls!.filter((c) => c.name !== RECALL_TOOL_NAME),
    invalid_tool_calls: ai.invalid_tool_calls,
    additional_kwargs: additional,
    response_metadata: ai.response_metadata,
    usage_metadata: ai.usage_metadata,
  }) as unknown as T;
}

/** The `usage_metadata` a reply carries, or undefined. */
export function usageMetadataOf(reply: unknown): Fields | undefined {
  const usage = isFields(reply) ? reply.usage_metadata : undefined;
  return isFields(usage) ? usage : undefined;
}

/**
 * The reply with `earlier` (the usage of the calls made before it for the same model call, added
 * up) added to its `usage_metadata`: a new `AIMessage`, its other fields as they were. Invariant:
 * a reply without usage, or with nothing earlier, is returned as is (the same object).
 */
export function withEarlierUsageMetadata<T>(reply: T, earlier: Fields | undefined, sdk: LangchainSdk): T {
  const own = usageMetadataOf(reply);
  if (earlier === undefined || own === undefined) return reply;
  const ai = reply as unknown as AIMessage;
  return new sdk.messages.AIMessage({
    content: ai.content,
    id: ai.id,
    name: ai.name,
    tool_calls: ai.tool_calls,
    invalid_tool_calls: ai.invalid_tool_calls,
    additional_kwargs: ai.additional_kwargs,
    response_metadata: ai.response_metadata,
    usage_metadata: addUsage(earlier, own) as unknown as AIMessage['usage_metadata'],
  }) as unknown as T;
}
