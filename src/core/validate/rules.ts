import type { MessageLens } from '../lens.js';
import type { CallStructure } from '../structure.js';
import { everyCallAnswered } from '../invariants/every-call-answered.js';
import { resultAnswersCall } from '../invariants/result-answers-call.js';
import { resultOnce } from '../invariants/result-once.js';

/**
 * Names of the rules a history can break (I1–I12 in the provider notes map onto these). The
 * shared ones are listed; a format's own rules use kebab-case names of their own.
 */
export type RuleId = KnownRuleId | (string & {});

/** The rule names shared by several profiles. */
export type KnownRuleId =
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

/**
 * A rule of one message's own shape that pairing does not see (null content, calls on a role
 * that cannot make them, a block on the wrong side): checked on each message, by the validator
 * through `eachMessage` and by repair through the lens's `shapeRules`, from this one definition.
 */
export interface MessageRule<M> {
  readonly id: RuleId;
  /** Where `message` breaks the rule: the field (relative to the message, `.content`) and the provider's words; undefined when it keeps it. */
  fault(message: M): { readonly field: string; readonly message: string } | undefined;
  /**
   * How repair meets a fault: fixed, where one fix loses nothing the message says (`fix`, and what
   * it did in `done`); otherwise refused with an InputError naming the field, `advice` saying what
   * the caller should do. Absent on rules repair meets elsewhere (pairing re-keys or removes).
   */
  readonly repair?: { fix(message: M): M; readonly done: string } | { readonly advice: string };
}

/** The profile rule that checks `rule` on every message, in index order; `at` writes where a fault is, as the provider does (`messages[3]`). */
export function eachMessage<M>(rule: MessageRule<M>, at: (index: number, field: string) => string = (index) => `messages[${index}]`): Rule<M> {
  return {
    id: rule.id,
    check({ messages }) {
      const out: Violation[] = [];
      messages.forEach((m, index) => {
        const f = rule.fault(m);
        if (f) out.push({ index, rule: rule.id, message: `${at(index, f.field)}: ${f.message}` });
      });
      return out;
    },
  };
}

const idText = (id: string | undefined, name: string | undefined) => id ?? (name ? `function ${name}` : '(no id)');

/** I1/I3: every call is answered by the unbroken run of results right after the message that made it. */
export const callsAnswered: Rule<unknown> = everyCallAnswered.rule(({ turn, calls }) => {
  const missing = calls.map((c) => idText(c.id, c.name));
  return {
    index: turn.opener,
    id: missing[0],
    message: `messages[${turn.opener}]: An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(', ')}`,
  };
});

/** I2: every result answers a call of the turn right before it. */
export const resultsHaveCall: Rule<unknown> = resultAnswersCall.rule((p) => ({
  index: p.index,
  id: p.result.id,
  message: p.pairing === 'outside'
    ? `messages[${p.index}]: tool result ${idText(p.result.id, p.result.name)} answers no call: Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.`
    : `messages[${p.index}]: Invalid parameter: 'tool_call_id' of '${p.result.id ?? ''}' not found in 'tool_calls' of previous message.`,
}));

/** I4: no call is answered twice. */
export const resultsUnique: Rule<unknown> = resultOnce.rule(({ result: p, call, first }) => ({
  index: p.index,
  id: call.id,
  message: call.id !== undefined
    ? `messages[${p.index}]: Invalid parameter: Duplicate value for 'tool_call_id' of '${call.id}', in messages[${first}] and messages[${p.index}].`
    : `messages[${p.index}]: function ${call.name} was already answered in messages[${first}]; a legacy function call takes exactly one 'function' message.`,
}));

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
