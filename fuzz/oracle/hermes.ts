/**
 * An independent checker of Hermes text histories (Nous / Qwen chat-template tool calling),
 * written from the Qwen3 chat template and Qwen-Agent's Nous prompt. It shares no code with src:
 * it finds the tags with its own regular expressions.
 *
 * Rules: messages are system / user / assistant with string content; an assistant message with
 * N `<tool_call>` blocks (each a JSON object with a string "name") is followed right away by one
 * user message with exactly N `<tool_response>` blocks; a user message with `<tool_response>`
 * blocks follows such an assistant message; and at least one user message is a query, i.e. not
 * (once trimmed) starting with `<tool_response>` and ending with `</tool_response>` — the template
 * raises "No user query found in messages." otherwise.
 */

export interface HermesProblem {
  readonly index: number;
  readonly what: 'count' | 'orphan' | 'malformed' | 'shape' | 'no-query';
  readonly detail: string;
}

type Msg = { role?: unknown; content?: unknown };

const CALLS = /<tool_call>([\s\S]*?)<\/tool_call>/g;
const RESPONSES = /<tool_response>[\s\S]*?<\/tool_response>/g;

function callCount(text: string, index: number, out: HermesProblem[]): number {
  let n = 0;
  for (const match of text.matchAll(CALLS)) {
    n++;
    try {
      const value = JSON.parse(match[1].trim()) as { name?: unknown };
      if (typeof value?.name !== 'string') out.push({ index, what: 'malformed', detail: `<tool_call> ${n} has no name` });
    } catch {
      out.push({ index, what: 'malformed', detail: `<tool_call> ${n} is not JSON` });
    }
  }
  const opened = text.split('<tool_call>').length - 1;
  if (opened !== n) out.push({ index, what: 'malformed', detail: `${opened} <tool_call> tags opened, ${n} blocks closed` });
  return n;
}

const responseCount = (text: string) => [...text.matchAll(RESPONSES)].length;

/** Every problem of a Hermes message list; empty when the Qwen template renders it with every call answered. */
export function checkHermes(messages: readonly unknown[]): HermesProblem[] {
  const out: HermesProblem[] = [];
  let query = false;
  let pending: { index: number; calls: number } | undefined;
  messages.forEach((raw, index) => {
    const m = raw as Msg;
    if (typeof m !== 'object' || m === null || !['system', 'user', 'assistant'].includes(m.role as string) || typeof m.content !== 'string') {
      out.push({ index, what: 'shape', detail: 'not a Hermes message' });
      return;
    }
    const text = m.content;
    const responses = m.role === 'user' ? responseCount(text) : 0;
    if (pending !== undefined) {
      if (m.role !== 'user' || responses === 0) out.push({ index: pending.index, what: 'count', detail: `${pending.calls} <tool_call> block(s), no <tool_response> message after them` });
      else if (responses !== pending.calls) out.push({ index, what: 'count', detail: `${pending.calls} <tool_call> block(s), ${responses} <tool_response> block(s)` });
    } else if (responses > 0) {
      out.push({ index, what: 'orphan', detail: `${responses} <tool_response> block(s) after no <tool_call>` });
    }
    pending = undefined;
    if (m.role === 'user') {
      const trimmed = text.trim();
      if (!(trimmed.startsWith('<tool_response>') && trimmed.endsWith('</tool_response>'))) query = true;
    }
    if (m.role === 'assistant') {
      const n = callCount(text, index, out);
      if (n > 0) pending = { index, calls: n };
    }
  });
  if (pending !== undefined) out.push({ index: pending.index, what: 'count', detail: `${pending.calls} <tool_call> block(s) at the end, unanswered` });
  if (!query) out.push({ index: 0, what: 'no-query', detail: 'No user query found in messages.' });
  return out;
}
