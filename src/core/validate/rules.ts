import type { MessageLens } from '../../formats/lens.js';
import type { OpenAIChatMessage } from '../../formats/openai-chat/lens.js';
import { pairTurn, type CallStructure, type PlacedResult } from '../turns.js';

/** Names of the rules a history can break (I1–I12 in the provider notes map onto these). */
export type RuleId =
  | 'call-unanswered'
  | 'result-orphan'
  | 'result-duplicate'
  | 'call-id-duplicate'
  | 'result-missing-id'
  | 'function-missing-name'
  | 'function-call-not-assistant'
  | 'content-null';

/** One broken rule at one place, worded like the provider's own 400 where it has one. */
export interface Violation {
  /** Index of the message at fault in the validated sequence. */
  readonly index: number;
  readonly rule: RuleId;
  /** The call id concerned, when there is one. */
  readonly id?: string;
  readonly message: string;
}

/** What a rule reads: the messages, their lens, and the call structure scanned once for all rules. */
export interface RuleInput<M> {
  readonly messages: readonly M[];
  readonly lens: MessageLens<M>;
  readonly structure: CallStructure;
}

/** One provider rule: checks a whole history and reports every place that breaks it. */
export interface Rule<M> {
  readonly id: RuleId;
  readonly check: (input: RuleInput<M>) => Violation[];
}

function resultsByTurn(structure: CallStructure): Map<number, PlacedResult[]> {
  const byTurn = new Map<number, PlacedResult[]>();
  for (const p of structure.results) {
    if (!p.turn) continue;
    const list = byTurn.get(p.turn.opener);
    if (list) list.push(p);
    else byTurn.set(p.turn.opener, [p]);
  }
  return byTurn;
}

const idText = (id: string | undefined, name: string | undefined) => id ?? (name ? `function ${name}` : '(no id)');

/** I1/I3: every call is answered by the unbroken run of results right after the message that made it. */
export const callsAnswered: Rule<unknown> = {
  id: 'call-unanswered',
  check({ structure }) {
    const byTurn = resultsByTurn(structure);
    const out: Violation[] = [];
    for (const turn of structure.turns) {
      const { answers } = pairTurn(turn, byTurn.get(turn.opener) ?? []);
      const missing = turn.calls.filter((_, k) => answers[k].length === 0).map((c) => idText(c.id, c.name));
      if (missing.length === 0) continue;
      out.push({
        index: turn.opener,
        rule: 'call-unanswered',
        id: missing[0],
        message: `messages[${turn.opener}]: An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(', ')}`,
      });
    }
    return out;
  },
};

/** I2: every result answers a call of the turn right before it. */
export const resultsHaveCall: Rule<unknown> = {
  id: 'result-orphan',
  check({ structure }) {
    const byTurn = resultsByTurn(structure);
    const out: Violation[] = [];
    for (const p of structure.results) {
      if (p.turn) continue;
      out.push({
        index: p.index,
        rule: 'result-orphan',
        id: p.result.id,
        message: `messages[${p.index}]: tool result ${idText(p.result.id, p.result.name)} answers no call: Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.`,
      });
    }
    for (const turn of structure.turns) {
      const { strays } = pairTurn(turn, byTurn.get(turn.opener) ?? []);
      for (const p of strays) {
        out.push({
          index: p.index,
          rule: 'result-orphan',
          id: p.result.id,
          message: `messages[${p.index}]: Invalid parameter: 'tool_call_id' of '${p.result.id ?? ''}' not found in 'tool_calls' of previous message.`,
        });
      }
    }
    return out.sort((a, b) => a.index - b.index);
  },
};

/** I4: no call is answered twice. */
export const resultsUnique: Rule<unknown> = {
  id: 'result-duplicate',
  check({ structure }) {
    const byTurn = resultsByTurn(structure);
    const out: Violation[] = [];
    for (const turn of structure.turns) {
      const { answers } = pairTurn(turn, byTurn.get(turn.opener) ?? []);
      answers.forEach((list, k) => {
        for (let d = 1; d < list.length; d++) {
          const call = turn.calls[k];
          out.push({
            index: list[d].index,
            rule: 'result-duplicate',
            id: call.id,
            message: call.id !== undefined
              ? `messages[${list[d].index}]: Invalid parameter: Duplicate value for 'tool_call_id' of '${call.id}', in messages[${list[0].index}] and messages[${list[d].index}].`
              : `messages[${list[d].index}]: function ${call.name} was already answered in messages[${list[0].index}]; a legacy function call takes exactly one 'function' message.`,
          });
        }
      });
    }
    return out;
  },
};

/** I4: call ids are unique within one turn. */
export const callIdsUnique: Rule<unknown> = {
  id: 'call-id-duplicate',
  check({ structure }) {
    const out: Violation[] = [];
    for (const turn of structure.turns) {
      const seen = new Set<string>();
      for (const c of turn.calls) {
        if (c.id === undefined) continue;
        if (seen.has(c.id)) {
          out.push({ index: turn.opener, rule: 'call-id-duplicate', id: c.id, message: `messages[${turn.opener}]: duplicate tool call id ${c.id} in one assistant turn; each call needs its own id.` });
        }
        seen.add(c.id);
      }
    }
    return out;
  },
};

/** OpenAI: a tool message names the call it answers. */
export const toolMessageHasId: Rule<OpenAIChatMessage> = {
  id: 'result-missing-id',
  check({ messages }) {
    const out: Violation[] = [];
    messages.forEach((m, index) => {
      if (m.role === 'tool' && typeof m.tool_call_id !== 'string') {
        out.push({ index, rule: 'result-missing-id', message: `messages[${index}]: Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.` });
      }
    });
    return out;
  },
};

/** OpenAI legacy: a function message names its function, and only assistants make function calls. */
export const legacyFunctionShape: Rule<OpenAIChatMessage> = {
  id: 'function-missing-name',
  check({ messages }) {
    const out: Violation[] = [];
    messages.forEach((m, index) => {
      if (m.role === 'function' && (typeof m.name !== 'string' || m.name === '')) {
        out.push({ index, rule: 'function-missing-name', message: `messages[${index}]: Missing parameter 'name': messages with role 'function' must have a 'name'.` });
      }
      if ((m.function_call || (Array.isArray(m.tool_calls) && m.tool_calls.length > 0)) && m.role !== 'assistant') {
        out.push({ index, rule: 'function-call-not-assistant', message: `messages[${index}]: Invalid parameter: only messages with role 'assistant' can have a function call.` });
      }
    });
    return out;
  },
};

/** OpenAI: content may be null only on an assistant message that makes calls. */
export const contentPresent: Rule<OpenAIChatMessage> = {
  id: 'content-null',
  check({ messages }) {
    const out: Violation[] = [];
    messages.forEach((m, index) => {
      const makesCalls = (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) || !!m.function_call;
      if ((m.content === null || m.content === undefined) && !(m.role === 'assistant' && makesCalls)) {
        out.push({ index, rule: 'content-null', message: `messages[${index}]: Invalid value for 'content': expected a string, got null.` });
      }
    });
    return out;
  },
};
