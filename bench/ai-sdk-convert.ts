/**
 * OpenAI Chat messages to Vercel AI SDK `ModelMessage`s and back, for running `pruneMessages` on
 * the same histories. Conversion is not part of the timed call. Going in, an assistant message
 * with calls becomes text + `tool-call` parts, and a run of `tool` messages becomes one `tool`
 * message with a `tool-result` part each (as the SDK itself builds them); coming out, each
 * `tool-result` part is one OpenAI `tool` message again.
 */
import type { ModelMessage } from 'ai';
import type { OpenAIChatMessage } from '../src/index.js';

type ToolResultPart = { type: 'tool-result'; toolCallId: string; toolName: string; output: { type: 'text'; value: string } };

function text(content: OpenAIChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (typeof p.text === 'string' ? p.text : '')).join('');
}

function parseArgs(args: string): unknown {
  try {
    return JSON.parse(args);
  } catch {
    return { raw: args };
  }
}

/** Converts a history; tool results take their tool name from the call they answer in the turn. */
export function toModelMessages(messages: readonly OpenAIChatMessage[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  let names = new Map<string, string>();
  for (const m of messages) {
    if (m.role === 'tool') {
      const part: ToolResultPart = { type: 'tool-result', toolCallId: m.tool_call_id ?? '', toolName: names.get(m.tool_call_id ?? '') ?? 'unknown', output: { type: 'text', value: text(m.content) } };
      const last = out[out.length - 1];
      if (last && last.role === 'tool') last.content.push(part);
      else out.push({ role: 'tool', content: [part] });
      continue;
    }
    if (m.role === 'assistant') {
      const calls = m.tool_calls ?? [];
      if (calls.length === 0) {
        out.push({ role: 'assistant', content: text(m.content) });
        continue;
      }
      names = new Map(calls.map((c) => [c.id, c.function.name]));
      const t = text(m.content);
      out.push({
        role: 'assistant',
        content: [
          ...(t ? [{ type: 'text' as const, text: t }] : []),
          ...calls.map((c) => ({ type: 'tool-call' as const, toolCallId: c.id, toolName: c.function.name, input: parseArgs(c.function.arguments) })),
        ],
      });
      continue;
    }
    out.push(m.role === 'system' || m.role === 'developer' ? { role: 'system', content: text(m.content) } : { role: 'user', content: text(m.content) });
  }
  return out;
}

/** Back to OpenAI Chat shape. */
export function fromModelMessages(messages: readonly ModelMessage[]): OpenAIChatMessage[] {
  const out: OpenAIChatMessage[] = [];
  for (const m of messages) {
    if (m.role === 'tool') {
      for (const p of m.content) {
        if (p.type !== 'tool-result') continue;
        const value = p.output.type === 'text' ? p.output.value : JSON.stringify('value' in p.output ? p.output.value : p.output);
        out.push({ role: 'tool', tool_call_id: p.toolCallId, content: value });
      }
      continue;
    }
    if (typeof m.content === 'string') {
      out.push({ role: m.role, content: m.content });
      continue;
    }
    let t = '';
    const calls: NonNullable<OpenAIChatMessage['tool_calls']> = [];
    for (const p of m.content) {
      if (p.type === 'text') t += p.text;
      else if (p.type === 'tool-call') calls.push({ id: p.toolCallId, type: 'function', function: { name: p.toolName, arguments: JSON.stringify(p.input) } });
    }
    out.push(calls.length > 0 ? { role: 'assistant', content: t === '' ? null : t, tool_calls: calls } : { role: m.role, content: t });
  }
  return out;
}
