import { callIdsUnique, type Rule, type Violation } from '../../core/validate/rules.js';
import { toolMessageHasId } from '../openai-chat/rules.js';
import type { Reading } from '../lens.js';
import type { OpenAIChatMessage } from '../openai-chat/types.js';
import { mistralRole, mistralSegments, type MistralRole } from './mistral-segments.js';
import { reworded } from './reworded.js';

/**
 * The rules of mistral_common's request validator (validator.py, V3 ids, V5 content, V13 id
 * matching, serving mode) as rule units over OpenAI-shaped messages, each worded with its own
 * exception text. mistral_common stops at the first error; these report every one.
 */

/** mistral_common's exception texts, index-free; each violation prefixes `messages[N]: `. */
export const MISTRAL_TEXT = Object.freeze({
  order: (current: string, previous: string) => `Unexpected role '${current}' after role '${previous}'`,
  count: 'Not the same number of function calls and responses',
  resultDuplicate: (id: string) => `Duplicate tool call id ${id} in tool results`,
  resultUnexpected: (id: string) => `Unexpected tool call id ${id} in tool results`,
  callDuplicate: (id: string) => `Duplicate tool call id ${id} in assistant message`,
  idFormat: (id: string) => `Tool call id was ${id} but must be a-z, A-Z, 0-9, with a length of 9.`,
  idMissing: 'Tool call id has to be defined.',
  functionName: (name: string) => `Function name was ${name} but must be a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64.`,
  start: 'Conversation must start with a user message or system message',
  empty: 'Conversation must have at least one message',
  last: (role: string) => `Expected last role User or Tool (or Assistant with prefix or continue_final_message set to True) for serving but got ${role}`,
});

/** The roles mistral_common allows right after each role (`_validate_message_order`). */
const ALLOWED_AFTER: Readonly<Record<MistralRole, readonly MistralRole[]>> = Object.freeze({
  system: Object.freeze(['user', 'assistant', 'system'] as const),
  user: Object.freeze(['assistant', 'system', 'user'] as const),
  assistant: Object.freeze(['assistant', 'user', 'tool'] as const),
  tool: Object.freeze(['assistant', 'tool'] as const),
});

/** mistral_common's tool call id pattern (V3 and later). */
const MISTRAL_ID = /^[a-zA-Z0-9]{9}$/;
/** mistral_common's function name pattern. */
const MISTRAL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const toolCallId = (m: OpenAIChatMessage): string | undefined => (m.role === 'tool' && typeof m.tool_call_id === 'string' ? m.tool_call_id : undefined);
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** What to do about a forbidden pair, where there is one usual fix. */
function orderHint(previous: MistralRole, current: MistralRole): string {
  if (previous === 'tool') return ' (after tool results Mistral wants the assistant message that reads them before any other message)';
  if (current === 'tool') return ' (a tool message must follow the assistant message that made the call, or another tool message)';
  return '';
}

/** I3/I8: each message's role is one mistral_common allows after the role before it. Reported at the later message. */
export const mistralRoleOrder = Object.freeze<Rule<OpenAIChatMessage>>({
  id: 'role-order',
  check({ messages }) {
    const out: Violation[] = [];
    for (let i = 1; i < messages.length; i++) {
      const previous = mistralRole(messages[i - 1].role);
      const current = mistralRole(messages[i].role);
      if (ALLOWED_AFTER[previous].includes(current)) continue;
      out.push({ index: i, rule: 'role-order', id: toolCallId(messages[i]), message: `messages[${i}]: ${MISTRAL_TEXT.order(messages[i].role, messages[i - 1].role)}${orderHint(previous, current)}` });
    }
    return out;
  },
});

/**
 * I1 as mistral_common counts it: the tool messages between an assistant message and the next one
 * (or the end: serving mode) are as many as its calls. Reported at the assistant message, or at the
 * first tool message when the stretch has no calls (tool messages after the start or after an
 * assistant message without calls). mistral_common skips the first message in this count; the
 * `first-role` rule already rejects a history that starts with an assistant or tool message.
 */
export const mistralCallCount = Object.freeze<Rule<OpenAIChatMessage>>({
  id: 'result-count',
  check({ messages, lens }) {
    const out: Violation[] = [];
    for (const s of mistralSegments(messages, lens.read)) {
      const calls = s.calls.length;
      const responses = s.responses.length;
      if (calls === responses) continue;
      if (calls === 0) {
        const at = s.responses[0];
        const after = s.opener < 0 ? 'the start of the conversation' : `messages[${s.opener}], which makes no tool call`;
        out.push({ index: at, rule: 'result-count', id: toolCallId(messages[at]), message: `messages[${at}]: ${MISTRAL_TEXT.count} (${plural(responses, 'tool message')} after ${after})` });
        continue;
      }
      const answered = new Set(s.responses.map((i) => toolCallId(messages[i])));
      const id = responses < calls
        ? (s.calls.find((c) => c.id === undefined || !answered.has(c.id)) ?? s.calls[responses]).id
        : toolCallId(messages[s.responses[calls]]);
      const until = s.end < messages.length ? `before the next assistant message, messages[${s.end}]` : 'before the end of the conversation';
      out.push({
        index: s.opener,
        rule: 'result-count',
        id,
        message: `messages[${s.opener}]: ${MISTRAL_TEXT.count} (${plural(calls, 'tool call')}: ${s.calls.map((c) => c.id ?? c.name).join(', ')}; ${plural(responses, 'tool message')} ${until})`,
      });
    }
    return out;
  },
});

/** The tool messages of each stretch that carry an id, with the ids of the stretch's calls. */
function stretchResults(messages: readonly OpenAIChatMessage[], read: (m: OpenAIChatMessage) => Reading): { expected: Set<string | undefined>; results: { index: number; id: string }[] }[] {
  return mistralSegments(messages, read).map((s) => ({
    expected: new Set(s.calls.map((c) => c.id)),
    results: s.responses.flatMap((index) => { const id = toolCallId(messages[index]); return id === undefined ? [] : [{ index, id }]; }),
  }));
}

/**
 * I2 (V13): each tool message's tool_call_id is one of the calls of its stretch's assistant
 * message (tool messages without an id are left to `result-missing-id`). At the tool message.
 */
export const mistralResultsExpected = Object.freeze<Rule<OpenAIChatMessage>>({
  id: 'result-orphan',
  check({ messages, lens }) {
    const out: Violation[] = [];
    for (const { expected, results } of stretchResults(messages, lens.read)) {
      for (const { index, id } of results) {
        if (!expected.has(id)) out.push({ index, rule: 'result-orphan', id, message: `messages[${index}]: ${MISTRAL_TEXT.resultUnexpected(id)}` });
      }
    }
    return out;
  },
});

/** I4 (V13): no call of a stretch is answered twice in it. At the second tool message. */
export const mistralResultsUnique = Object.freeze<Rule<OpenAIChatMessage>>({
  id: 'result-duplicate',
  check({ messages, lens }) {
    const out: Violation[] = [];
    for (const { expected, results } of stretchResults(messages, lens.read)) {
      const seen = new Set<string>();
      for (const { index, id } of results) {
        if (!expected.has(id)) continue;
        if (seen.has(id)) out.push({ index, rule: 'result-duplicate', id, message: `messages[${index}]: ${MISTRAL_TEXT.resultDuplicate(id)}` });
        seen.add(id);
      }
    }
    return out;
  },
});

/** I4 (V13): call ids are distinct within one assistant message, in mistral_common's words. */
export const mistralCallIdsUnique: Rule<OpenAIChatMessage> = reworded(callIdsUnique, (v) => `messages[${v.index}]: ${MISTRAL_TEXT.callDuplicate(v.id ?? '')}`);

/** V3: a tool message names the call it answers, in mistral_common's words. */
export const mistralResultHasId: Rule<OpenAIChatMessage> = reworded(toolMessageHasId, (v) => `messages[${v.index}]: ${MISTRAL_TEXT.idMissing}`);

/**
 * I11 (V3): every tool call id, in an assistant's tool_calls and in a tool message's tool_call_id,
 * is 9 characters of a-z, A-Z, 0-9. Ids from other providers (`call_...`, `toolu_...`) do not fit:
 * they must be mapped, the same way in a call and its results.
 */
export const mistralIdFormat = Object.freeze<Rule<OpenAIChatMessage>>({
  id: 'call-id-format',
  check({ messages, lens }) {
    const out: Violation[] = [];
    messages.forEach((m, i) => {
      const ids = m.role === 'assistant' ? lens.read(m).calls.map((c) => c.id) : [toolCallId(m)];
      for (const id of ids) {
        if (id !== undefined && !MISTRAL_ID.test(id)) out.push({ index: i, rule: 'call-id-format', id, message: `messages[${i}]: ${MISTRAL_TEXT.idFormat(id)}` });
      }
    });
    return out;
  },
});

/** I11: every function name, in a call and in a tool message's optional `name`, matches `^[a-zA-Z0-9_-]{1,64}$`. */
export const mistralFunctionNames = Object.freeze<Rule<OpenAIChatMessage>>({
  id: 'function-name-invalid',
  check({ messages, lens }) {
    const out: Violation[] = [];
    messages.forEach((m, i) => {
      const named = m.role === 'assistant' ? lens.read(m).calls.map((c) => ({ id: c.id, name: c.name })) : m.role === 'tool' && typeof m.name === 'string' ? [{ id: toolCallId(m), name: m.name }] : [];
      for (const { id, name } of named) {
        if (!MISTRAL_NAME.test(name)) out.push({ index: i, rule: 'function-name-invalid', id, message: `messages[${i}]: ${MISTRAL_TEXT.functionName(name)}` });
      }
    });
    return out;
  },
});

/**
 * I7: a conversation has a message and starts with a user or system message. (mistral_common
 * itself checks the first role only for a one-message conversation; the profile asks it of every
 * view, as Mistral's chat templates and most OpenAI-compatible servers in front of them do.)
 */
export const mistralFirstRole = Object.freeze<Rule<OpenAIChatMessage>>({
  id: 'first-role',
  check({ messages }) {
    if (messages.length === 0) return [{ index: 0, rule: 'first-role', message: `messages: ${MISTRAL_TEXT.empty}` }];
    const role = mistralRole(messages[0].role);
    if (role === 'user' || role === 'system') return [];
    return [{ index: 0, rule: 'first-role', id: toolCallId(messages[0]), message: `messages[0]: ${MISTRAL_TEXT.start} (it starts with role '${messages[0].role}')` }];
  },
});

/**
 * I9 (serving): a conversation of more than one message does not end with an assistant message,
 * unless that message sets `prefix: true` (continue_final_message is a request option, outside the
 * messages). A view is what gets served, so the profile checks it.
 */
export const mistralLastRole = Object.freeze<Rule<OpenAIChatMessage>>({
  id: 'last-role',
  check({ messages }) {
    const at = messages.length - 1;
    if (at < 1 || messages[at].role !== 'assistant' || messages[at].prefix === true) return [];
    return [{ index: at, rule: 'last-role', message: `messages[${at}]: ${MISTRAL_TEXT.last('assistant')}` }];
  },
});

/**
 * Shapes Mistral does not take: roles other than system/user/assistant/tool (`developer`, the
 * legacy `function`) and the legacy `function_call` field. Each names what to send instead.
 */
export const mistralRolesKnown = Object.freeze<Rule<OpenAIChatMessage>>({
  id: 'role-unsupported',
  check({ messages }) {
    const out: Violation[] = [];
    messages.forEach((m, i) => {
      const say = (what: string) => out.push({ index: i, rule: 'role-unsupported', message: `messages[${i}]: ${what}` });
      if (m.role === 'developer') say("role 'developer' is not a Mistral role (system, user, assistant, tool): send it as 'system'");
      if (m.role === 'function') say("role 'function' is not a Mistral role (system, user, assistant, tool): send the result as role 'tool' with the call's tool_call_id");
      if (m.role === 'assistant' && m.function_call) say('function_call is not a Mistral field: send the call in tool_calls, with an id');
    });
    return out;
  },
});
