/**
 * An oracle for OpenAI Chat histories, written apart from the code it judges: it imports nothing
 * from src/ but types, and shares no pairing, grouping or repair code with the project. If the
 * project's pairing is wrong, this and the project disagree, and the tests say so.
 *
 * The rules (OpenAI Chat Completions): an assistant message that makes calls (`tool_calls`, or a
 * legacy `function_call`) must be followed at once by one `tool` message per call id (any order) or
 * one `function` message with the call's name; no tool or function message may stand anywhere else;
 * none may answer a call twice. `shapeProblems` adds the rules of each message's own shape.
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

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool', 'function'];
const isList = (v: unknown): v is unknown[] => Array.isArray(v);

/**
 * The rules of each message's own shape (provider notes, "OpenAI misc" and "legacy"): a known
 * role; content a string or a list of parts, and null or absent only on an assistant message that
 * makes calls ("Invalid value for 'content': expected a string, got null."); `tool_calls` and
 * `function_call` only on assistant messages ("only messages with role 'assistant' can have a
 * function call."); a tool message has a string `tool_call_id`, a function message a `name`.
 */
export function shapeProblems(messages: readonly unknown[]): string[] {
  const problems: string[] = [];
  messages.forEach((raw, i) => {
    if (typeof raw !== 'object' || raw === null || isList(raw)) {
      problems.push(`messages[${i}]: not a message object`);
      return;
    }
    const m = raw as Record<string, unknown>;
    if (!ROLES.includes(m.role as string)) problems.push(`messages[${i}]: unknown role ${String(m.role)}`);
    const calls = (isList(m.tool_calls) && m.tool_calls.length > 0) || (typeof m.function_call === 'object' && m.function_call !== null);
    if (calls && m.role !== 'assistant') problems.push(`messages[${i}]: a ${String(m.role)} message makes calls`);
    if (m.content === null || m.content === undefined) {
      if (!(m.role === 'assistant' && calls)) problems.push(`messages[${i}]: content is null`);
    } else if (typeof m.content !== 'string' && !isList(m.content)) problems.push(`messages[${i}]: content is neither a string nor a list`);
    if (m.role === 'tool' && typeof m.tool_call_id !== 'string') problems.push(`messages[${i}]: a tool message without a string tool_call_id`);
    if (m.role === 'function' && (typeof m.name !== 'string' || m.name === '')) problems.push(`messages[${i}]: a function message without a name`);
  });
  return problems;
}

/** Every rule of OpenAI Chat Completions a history breaks, shape first: empty when the provider accepts it. */
export function openaiChatProblems(messages: readonly OpenAIChatMessage[]): string[] {
  const shape = shapeProblems(messages);
  return shape.length > 0 ? shape : pairingProblems(messages);
}

/** The synthetic result a repair adds for a call with none (content starts with "Error:"). */
const isSynthetic = (m: OpenAIChatMessage) => (m.role === 'tool' || m.role === 'function') && typeof m.content === 'string' && m.content.startsWith('Error: this tool call produced no result');

/** A result message re-keyed to answer call `id` (a legacy `function` result becomes a `tool` message). */
function rekeyed(m: OpenAIChatMessage, id: string): OpenAIChatMessage {
  if (m.role === 'function') {
    const { name: _name, ...rest } = m;
    return { ...rest, role: 'tool', tool_call_id: id };
  }
  return { ...m, tool_call_id: id };
}

/** The id a tool message was given, as text: a string as it is, a finite number written out. */
const writtenId = (m: OpenAIChatMessage): string | undefined => {
  const raw = m.tool_call_id as unknown;
  return typeof raw === 'string' ? raw : typeof raw === 'number' && Number.isFinite(raw) ? String(raw) : undefined;
};

/** Ids answered by string-id tool messages in the run of results that starts at `start`. */
function answeredInRun(messages: readonly OpenAIChatMessage[], start: number): string[] {
  const ids: string[] = [];
  for (let j = start; j < messages.length && (messages[j].role === 'tool' || messages[j].role === 'function'); j++) {
    if (messages[j].role === 'tool' && typeof messages[j].tool_call_id === 'string') ids.push(messages[j].tool_call_id as string);
  }
  return ids;
}

/** `ids` less one occurrence of each of `taken`. */
function without(ids: readonly string[], taken: readonly string[]): string[] {
  const left = [...ids];
  for (const t of taken) if (left.includes(t)) left.splice(left.indexOf(t), 1);
  return left;
}

/**
 * Step one of a repair: real results put back where only one call can be meant. Walking forward,
 * with `free` the calls of the last call turn that no string-id result of its run answers:
 * in the run, a tool message whose id is missing (when one call is free) or numeric (naming a free
 * call), or a `function` message naming exactly one free call, is re-keyed; a tool message after
 * the run, separated from it only by assistant text, system or user messages, goes back to the
 * end of the run; a `function` message right after the one user message that followed a legacy
 * `function_call` (nothing between the call and that user message), naming that function or
 * nameless, goes back right after the call (no ids: by position); a tool message right before
 * the call turn that names it (as a free call) goes after the call.
 */
function reattached(messages: readonly OpenAIChatMessage[]): { messages: OpenAIChatMessage[]; from: number[] } {
  const out: OpenAIChatMessage[] = [];
  const from: number[] = [];
  const put = (m: OpenAIChatMessage, i: number, at = out.length) => { out.splice(at, 0, m); from.splice(at, 0, i); };
  let free: string[] = [];
  let names = new Map<string, string>();
  let state: 'run' | 'bystanders' | 'closed' = 'closed';
  let runEnd = 0;
  const early = new Map<number, number[]>(); // call-turn index -> tool messages that go right after it
  const moved = new Set<number>();
  messages.forEach((m, i) => {
    if (moved.has(i)) return;
    if (m.role === 'tool' || m.role === 'function') {
      const id = m.role === 'tool' ? writtenId(m) : undefined;
      if (state === 'run') {
        const named = m.role === 'tool' && typeof m.tool_call_id === 'string';
        const fits = named ? [] : m.role === 'function' ? free.filter((c) => names.get(c) === m.name) : id !== undefined ? free.filter((c) => c === id) : free;
        if (fits.length === 1) {
          free = without(free, fits);
          put(rekeyed(m, fits[0]), i);
        } else put(m, i);
        runEnd = out.length;
        return;
      }
      if (state === 'bystanders' && m.role === 'tool' && id !== undefined && free.includes(id)) {
        free = without(free, [id]);
        put(m.tool_call_id === id ? m : rekeyed(m, id), i, runEnd);
        runEnd++;
        return;
      }
      // No ids on either side (a legacy `function_call`, its `function` message): right after the
      // one user message that followed the call, naming it or nameless, it goes back after the call.
      const caller = messages[i - 2];
      if (m.role === 'function' && i >= 2 && messages[i - 1].role === 'user' && out[out.length - 1] === messages[i - 1] && out[out.length - 2] === caller
        && callIds(caller).length === 0 && functionName(caller) !== undefined && (m.name === undefined || m.name === functionName(caller))) {
        put(m, i, out.length - 1);
        free = [];
        return;
      }
      // Right before its call turn: only other results between it and the turn.
      let j = i + 1;
      while (j < messages.length && (messages[j].role === 'tool' || messages[j].role === 'function')) j++;
      if (m.role === 'tool' && id !== undefined && j < messages.length && makesCalls(messages[j])) {
        const taken = early.get(j) ?? [];
        const freeThere = without(without(callIds(messages[j]), answeredInRun(messages, j + 1)), taken.map((k) => writtenId(messages[k])!));
        if (freeThere.filter((c) => c === id).length === 1) {
          early.set(j, [...taken, i]);
          moved.add(i);
          return;
        }
      }
      put(m, i);
      state = 'closed';
      return;
    }
    if (makesCalls(m)) {
      free = without(callIds(m), answeredInRun(messages, i + 1));
      names = new Map((m.tool_calls ?? []).map((c) => [c.id, c.function.name]));
      put(m, i);
      for (const k of early.get(i) ?? []) {
        const r = messages[k];
        const id = writtenId(r)!;
        free = without(free, [id]);
        put(r.tool_call_id === id ? r : rekeyed(r, id), k);
      }
      state = 'run';
      runEnd = out.length;
      return;
    }
    state = state !== 'closed' && (m.role === 'assistant' || m.role === 'system' || m.role === 'developer' || m.role === 'user') ? 'bystanders' : 'closed';
    put(m, i);
  });
  return { messages: out, from };
}

/**
 * What a repaired history must be: first real results re-attached (`reattached`), then tool and
 * function messages that answer no open call are gone, and every call left unanswered gets one
 * result right after its run of answers, in call order. Returns the history and, for each output
 * position, the input index (-1 for an added result).
 */
export function expectedRepair(input: readonly OpenAIChatMessage[]): { messages: OpenAIChatMessage[]; from: number[] } {
  const first = reattached(input);
  const messages = first.messages;
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
  messages.forEach((m, k) => {
    const i = first.from[k];
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
