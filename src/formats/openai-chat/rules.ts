import type { CallRef } from '../lens.js';
import { eachMessage, type MessageRule, type Rule, type Violation } from '../../core/validate/rules.js';
import type { OpenAIChatMessage } from './types.js';

/** Rules of OpenAI Chat Completions that only its message shape has (the shared ones live in core/validate/rules.ts). */

/** What OpenAI answers for calls on another role, and for null content. */
const NOT_ASSISTANT_TEXT = "Invalid parameter: only messages with role 'assistant' can have a function call.";
const CONTENT_NULL_TEXT = "Invalid value for 'content': expected a string, got null.";

const makesCalls = (m: OpenAIChatMessage) => (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) || !!m.function_call;

/** OpenAI: a tool message names the call it answers (repair re-keys or removes one that does not). */
export const toolMessageHasId: Rule<OpenAIChatMessage> = eachMessage<OpenAIChatMessage>({
  id: 'result-missing-id',
  fault: (m) => (m.role === 'tool' && typeof m.tool_call_id !== 'string' ? { field: '.tool_call_id', message: "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'." } : undefined),
});

/** OpenAI legacy: a function message names its function (repair names it after its call, or removes it). */
export const functionHasName: Rule<OpenAIChatMessage> = eachMessage<OpenAIChatMessage>({
  id: 'function-missing-name',
  fault: (m) => (m.role === 'function' && (typeof m.name !== 'string' || m.name === '') ? { field: '.name', message: "Missing parameter 'name': messages with role 'function' must have a 'name'." } : undefined),
});

/**
 * OpenAI: only assistant messages make calls (`tool_calls`, a legacy `function_call`). Who made
 * calls found on another role cannot be told, so repair refuses them rather than guess.
 */
export const callsFromAssistant: MessageRule<OpenAIChatMessage> = {
  id: 'function-call-not-assistant',
  fault(m) {
    if (m.role === 'assistant') return undefined;
    if (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) return { field: '.tool_calls', message: NOT_ASSISTANT_TEXT };
    return m.function_call ? { field: '.function_call', message: NOT_ASSISTANT_TEXT } : undefined;
  },
  repair: { advice: 'move the calls to the assistant message that made them, or remove them (ctxfold does not guess who made a call)' },
};

/**
 * OpenAI: content may be null (or absent) only on an assistant message that makes calls. Repair
 * sends it as '': an empty text says what null did.
 */
export const contentNotNull: MessageRule<OpenAIChatMessage> = {
  id: 'content-null',
  fault: (m) => ((m.content === null || m.content === undefined) && !(m.role === 'assistant' && makesCalls(m)) ? { field: '.content', message: CONTENT_NULL_TEXT } : undefined),
  repair: { fix: (m) => ({ ...m, content: '' }), done: "sent as '' (an empty text)" },
};

/** The profile rules of the two message rules above. */
export const callsOnAssistant: Rule<OpenAIChatMessage> = eachMessage(callsFromAssistant);
export const contentPresent: Rule<OpenAIChatMessage> = eachMessage(contentNotNull);

/** Shortest call id searched for in user text: shorter ids would match ordinary words. */
const MIN_ID_IN_TEXT = 6;

/**
 * The open call (index into `calls`, among `open`) whose output `text` looks like, or -1. The test is
 * general and cheap, in order: the text names an open call's id (ids of 6+ characters are opaque
 * tokens a person does not type); it starts with an open call's name followed by a non-word
 * character or nothing (`name: ...`, `name returned ...`); it is a JSON object or array as a whole
 * (a person does not type JSON), which is taken as the output of the first open call. A short human
 * interjection ("wait", "stop") matches none of these and stays an ordinary user message.
 */
function outputOf(text: string, calls: readonly CallRef[], open: readonly number[]): number {
  const t = text.trim();
  if (t === '') return -1;
  const byId = open.find((k) => { const id = calls[k].id; return id !== undefined && id.length >= MIN_ID_IN_TEXT && t.includes(id); });
  if (byId !== undefined) return byId;
  const byName = open.find((k) => { const n = calls[k].name; return n !== '' && t.startsWith(n) && !/^[A-Za-z0-9_]/.test(t.slice(n.length)); });
  if (byName !== undefined) return byName;
  if ((t[0] === '{' && t.endsWith('}')) || (t[0] === '[' && t.endsWith(']'))) {
    try {
      JSON.parse(t);
      return open[0];
    } catch {
      return -1;
    }
  }
  return -1;
}

/**
 * Diagnosis (OpenAI Chat and every OpenAI-compatible API): the user messages right after a call turn
 * whose calls are not all answered, each of which looks like the output of one still-open call
 * (see `outputOf`), are tool results sent with the wrong role (a client that turns results into
 * user text). Reported besides `call-unanswered`, with the fix: a model shown its own tool output
 * as user text tends to call the tool again. Stops at the first user message that does not match.
 */
export const resultSentAsUser: Rule<OpenAIChatMessage> = {
  id: 'result-as-user',
  check({ messages, lens, structure }) {
    const out: Violation[] = [];
    for (const turn of structure.turns) {
      const open = turn.calls.map((_, k) => k).filter((k) => turn.answers[k] === undefined);
      for (let i = turn.runEnd; i < messages.length && open.length > 0 && messages[i].role === 'user'; i++) {
        const k = outputOf(lens.read(messages[i]).text, turn.calls, open);
        if (k < 0) break;
        open.splice(open.indexOf(k), 1);
        const call = turn.calls[k];
        out.push({
          index: i,
          rule: 'result-as-user',
          id: call.id,
          message: call.id !== undefined
            ? `messages[${i}]: this user message looks like the output of tool call ${call.id} (${call.name}) sent as a user message; send it as role \`tool\` with \`tool_call_id\` ${call.id} (a model shown tool output as user text tends to call the tool again)`
            : `messages[${i}]: this user message looks like the output of function call ${call.name} sent as a user message; send it as role \`function\` with \`name\` ${call.name} (a model shown tool output as user text tends to call the tool again)`,
        });
      }
    }
    return out;
  },
};
