/**
 * An independent checker of Qwen-Agent histories, written from Qwen-Agent's own rules
 * (`validate_num_fncall_results` in qwen_agent/llm/function_calling.py, the Nous prompt that
 * renders results by position) and the project's provider notes. It shares no code with src:
 * it walks the raw messages itself.
 *
 * Rules: a model turn is a run of consecutive assistant messages (the Nous prompt renders it as
 * one assistant turn, its calls as `<tool_call>` blocks in order, text and reasoning messages
 * between them included; the stricter tail check `validate_num_fncall_results`, which wanted the
 * calls in consecutive `function_call` messages, is commented out in current Qwen-Agent). The
 * calls of a turn are followed right away by exactly as many `function` messages, in call order,
 * each naming the function of its call and, when both carry one, the same `extra.function_id`; a
 * `function` message anywhere else is an orphan; a `function_call` on any message but an
 * assistant's is a shape fault.
 */

export interface QwenProblem {
  readonly index: number;
  readonly what: 'count' | 'order' | 'orphan' | 'shape';
  readonly detail: string;
}

type Msg = Record<string, unknown>;

const isObj = (v: unknown): v is Msg => typeof v === 'object' && v !== null && !Array.isArray(v);
const hasCall = (m: Msg) => m.role === 'assistant' && isObj(m.function_call);
const idOf = (m: Msg): string | undefined => (isObj(m.extra) && typeof m.extra.function_id === 'string' ? m.extra.function_id : undefined);

/** Every problem of a Qwen-Agent message list; empty when Qwen-Agent (and a backend it feeds) accepts it. */
export function checkQwenAgent(messages: readonly unknown[]): QwenProblem[] {
  const out: QwenProblem[] = [];
  let i = 0;
  while (i < messages.length) {
    const m = messages[i] as Msg;
    if (!isObj(m) || !['system', 'user', 'assistant', 'function'].includes(m.role as string)) {
      out.push({ index: i, what: 'shape', detail: `not a Qwen-Agent message: ${JSON.stringify(m).slice(0, 80)}` });
      i++;
      continue;
    }
    // Only the model calls functions (Qwen-Agent's prompts render a call only on an assistant message).
    if (m.function_call !== undefined && m.function_call !== null && m.role !== 'assistant') {
      out.push({ index: i, what: 'shape', detail: `a ${String(m.role)} message carries a function_call` });
      i++;
      continue;
    }
    if (m.role === 'function') {
      out.push({ index: i, what: 'orphan', detail: `function message ${String(m.name)} follows no function_call` });
      i++;
      continue;
    }
    if (m.role !== 'assistant') {
      i++;
      continue;
    }
    const calls: { index: number; name: string; id?: string }[] = [];
    while (i < messages.length && isObj(messages[i]) && (messages[i] as Msg).role === 'assistant') {
      const c = messages[i] as Msg;
      if (hasCall(c)) calls.push({ index: i, name: String((c.function_call as Msg).name), id: idOf(c) });
      i++;
    }
    if (calls.length === 0) continue;
    const results: { index: number; name?: string; id?: string }[] = [];
    while (i < messages.length && (messages[i] as Msg).role === 'function') {
      const r = messages[i] as Msg;
      results.push({ index: i, name: typeof r.name === 'string' && r.name !== '' ? r.name : undefined, id: idOf(r) });
      i++;
    }
    if (results.length !== calls.length) {
      out.push({ index: calls[0].index, what: 'count', detail: `${calls.length} function_call message(s), ${results.length} function message(s) after them` });
    }
    for (let k = 0; k < Math.min(calls.length, results.length); k++) {
      const c = calls[k];
      const r = results[k];
      if (r.name !== undefined && r.name !== c.name) out.push({ index: r.index, what: 'order', detail: `result ${k + 1} is named ${r.name}, call ${k + 1} is ${c.name}` });
      else if (r.id !== undefined && c.id !== undefined && r.id !== c.id) out.push({ index: r.index, what: 'order', detail: `result ${k + 1} has function_id ${r.id}, call ${k + 1} has ${c.id}` });
    }
  }
  return out;
}
