import type { BaseMessage } from '@langchain/core/messages';
import { contentText } from '../../formats/openai-chat/lens.js';
import type { OpenAIChatMessage } from '../../formats/openai-chat/types.js';
import type { LangchainSdk } from './sdk.js';

function parseArgs(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? value as Record<string, unknown> : { value };
  } catch {
    return { input: text };
  }
}

/**
 * A message the compressor wrote (a summary or note, a tool result cleared or added by repair)
 * as the LangChain message of its role: system → `SystemMessage`, user → `HumanMessage`, tool →
 * `ToolMessage` with the same `tool_call_id` (and name), function → `FunctionMessage`,
 * assistant → `AIMessage` with its calls.
 */
function written(m: OpenAIChatMessage, sdk: LangchainSdk): BaseMessage {
  const { AIMessage, FunctionMessage, HumanMessage, SystemMessage, ToolMessage } = sdk.messages;
  const content = contentText(m.content);
  switch (m.role) {
    case 'system':
    case 'developer':
      return new SystemMessage({ content });
    case 'tool':
      return new ToolMessage({ content, tool_call_id: typeof m.tool_call_id === 'string' ? m.tool_call_id : '', ...(typeof m.name === 'string' ? { name: m.name } : {}) });
    case 'function':
      return new FunctionMessage({ content, name: typeof m.name === 'string' ? m.name : '' });
    case 'assistant':
      return new AIMessage({
        content,
        tool_calls: (m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, args: parseArgs(c.function.arguments), type: 'tool_call' as const })),
      });
    default:
      return new HumanMessage({ content });
  }
}

/**
 * The compressor's view as LangChain messages, in the view's order: every kept message is the
 * caller's own `BaseMessage` object (`original` finds it), every message the compressor wrote is
 * a new one of its role (see `written`).
 */
export function viewToLangChain(
  view: readonly OpenAIChatMessage[],
  original: (m: OpenAIChatMessage) => BaseMessage | undefined,
  sdk: LangchainSdk,
): BaseMessage[] {
  return view.map((m) => original(m) ?? written(m, sdk));
}
