/**
 * An oracle for OpenAI Chat histories, written apart from the code it judges: it imports nothing
 * from src/ but types, and shares no pairing, grouping or repair code with the project. If the
 * project's pairing is wrong, this and the project disagree, and the tests say so.
 *
 * The rules (OpenAI Chat Completions): an assistant message that makes calls (`tool_calls`, or a
 * legacy `function_call`) must be followed at once by one `tool` message per call id (any order) or
 * one `function` message with the call's name; no tool or function message may stand anywhere else;
 * none may answer a call twice.
 */
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';

const callIds = (m: OpenAIChatMessage): string[] =>
  m.role === 'assistant' && Array.isArray(m.tool_calls) ? m.tool_calls.map((c) => c.id) : [];
const functionName = (m: OpenAIChatMessage): string | undefined =>
  m.role === 'assistant' && m.function_call ? String(m.function_call.name) : undefined;
const makesCalls = (m: OpenAIChatMessage): boolean => callIds(m).length > 0 || functionName(m) !== undefined;

/** Every tool-pairing rule a history breaks, one line each; empty when the provider accepts it. */
export function pairingProblems(messages: readonly OpenAIChatMessage[]): string[] {
  const problems: string[] = [];
  let open = new Set<string>();
  let openFunction: string | undefined;
  const close = (at: number) => {
    for (const id of open) problems.push(`messages[${at}]: call ${id} was never answered`);
    if (openFunction !== undefined) problems.push(`messages[${at}]: function ${openFunction} was never answered`);
    open = new Set();
    openFunction = undefined;
  };
  messages.forEach((m, i) => {
    if (m.role === 'tool') {
      if (typeof m.tool_call_id === 'string' && open.delete(m.tool_call_id)) return;
      problems.push(`messages[${i}]: tool message ${String(m.tool_call_id)} answers no open call`);
      return;
    }
    if (m.role === 'function') {
      if (openFunction !== undefined && m.name === openFunction) {
        openFunction = undefined;
        return;
      }
      problems.push(`messages[${i}]: function message ${String(m.name)} answers no open call`);
      return;
    }
    close(i);
    const ids = callIds(m);
    if (new Set(ids).size !== ids.length) problems.push(`messages[${i}]: repeated call id in one turn`);
    open = new Set(ids);
    openFunction = functionName(m);
  });
  close(messages.length);
  return problems;
}

/** The synthetic result a repair adds for a call with none (content starts with "Error:"). */
const isSynthetic = (m: OpenAIChatMessage) => (m.role === 'tool' || m.role === 'function') && typeof m.content === 'string' && m.content.startsWith('Error: this tool call produced no result');

/**
 * What a repaired history must be: tool and function messages that answer no open call are gone,
 * and every call left unanswered gets one result right after its run of answers, in call order.
 * Returns the history and, for each output position, the input index (-1 for an added result).
 */
export function expectedRepair(messages: readonly OpenAIChatMessage[]): { messages: OpenAIChatMessage[]; from: number[] } {
  const out: OpenAIChatMessage[] = [];
  const from: number[] = [];
  let open: string[] = [];
  let openFunction: string | undefined;
  const flush = () => {
    for (const id of open) { out.push({ role: 'tool', tool_call_id: id, content: 'Error:' }); from.push(-1); }
    if (openFunction !== undefined) { out.push({ role: 'function', name: openFunction, content: 'Error:' }); from.push(-1); }
    open = [];
    openFunction = undefined;
  };
  messages.forEach((m, i) => {
    if (m.role === 'tool' || m.role === 'function') {
      const answers = m.role === 'tool' ? typeof m.tool_call_id === 'string' && open.includes(m.tool_call_id) : openFunction !== undefined && m.name === openFunction;
      if (!answers) return;
      if (m.role === 'tool') open.splice(open.indexOf(m.tool_call_id!), 1);
      else openFunction = undefined;
      out.push(m);
      from.push(i);
      return;
    }
    flush();
    open = callIds(m);
    openFunction = functionName(m);
    out.push(m);
    from.push(i);
  });
  flush();
  return { messages: out, from };
}

/** True when `out` is the synthetic result `expectedRepair` stands for at a position it marked -1. */
export function matchesAddedResult(out: OpenAIChatMessage, expected: OpenAIChatMessage): boolean {
  return isSynthetic(out) && out.role === expected.role && (out.role === 'tool' ? out.tool_call_id === expected.tool_call_id : out.name === expected.name);
}

/**
 * Where the atomic units of a valid history start: a message making calls starts a unit that
 * holds its answers and, once all are answered, the assistant reply right after them that makes
 * no call; every other message is a unit of its own.
 */
export function unitStarts(messages: readonly OpenAIChatMessage[]): number[] {
  const starts: number[] = [];
  let i = 0;
  while (i < messages.length) {
    starts.push(i);
    const m = messages[i];
    i++;
    if (!makesCalls(m)) continue;
    const open = callIds(m);
    let fn = functionName(m);
    for (; i < messages.length; i++) {
      const r = messages[i];
      const at = r.role === 'tool' ? open.indexOf(r.tool_call_id as string) : -1;
      if (at >= 0) { open.splice(at, 1); continue; }
      if (r.role === 'function' && fn !== undefined && r.name === fn) { fn = undefined; continue; }
      break;
    }
    if (open.length === 0 && fn === undefined && i < messages.length && messages[i].role === 'assistant' && !makesCalls(messages[i])) i++;
  }
  return starts;
}
