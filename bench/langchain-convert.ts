/**
 * OpenAI Chat messages to LangChain messages and back, for running `trimMessages` on the same
 * histories. Conversion is not part of the timed call. Arguments are parsed to objects going in
 * (LangChain keeps `args` as objects) and re-serialized with JSON.stringify coming out.
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import type { OpenAIChatMessage } from '../src/index.js';

function text(content: OpenAIChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (typeof p.text === 'string' ? p.text : '')).join('');
}

function parseArgs(args: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(args);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
  } catch {
    return { raw: args };
  }
}

/** One LangChain message per OpenAI message, in order. */
export function toLangChain(messages: readonly OpenAIChatMessage[]): BaseMessage[] {
  return messages.map((m) => {
    switch (m.role) {
      case 'system':
      case 'developer':
        return new SystemMessage(text(m.content));
      case 'user':
        return new HumanMessage(text(m.content));
      case 'tool':
        return new ToolMessage({ content: text(m.content), tool_call_id: m.tool_call_id ?? '' });
      default: {
        const calls = (m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, args: parseArgs(c.function.arguments), type: 'tool_call' as const }));
        return new AIMessage({ content: text(m.content), tool_calls: calls });
      }
    }
  });
}

/** Back to OpenAI Chat shape (assistant content null when it only makes calls). */
export function fromLangChain(messages: readonly BaseMessage[]): OpenAIChatMessage[] {
  return messages.map((m, i) => {
    if (!m) throw new Error(`output[${i}] is ${String(m)}, not a message`);
    const content = typeof m.content === 'string' ? m.content : m.content.map((p) => ('text' in p && typeof p.text === 'string' ? p.text : '')).join('');
    if (ToolMessage.isInstance(m)) return { role: 'tool', tool_call_id: m.tool_call_id, content };
    if (AIMessage.isInstance(m)) {
      const calls = m.tool_calls ?? [];
      if (calls.length === 0) return { role: 'assistant', content };
      return {
        role: 'assistant',
        content: content === '' ? null : content,
        tool_calls: calls.map((c) => ({ id: c.id ?? '', type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } })),
      };
    }
    return { role: m.getType() === 'system' ? 'system' : 'user', content };
  });
}
