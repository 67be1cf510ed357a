import type { CallRef } from '../lens.js';
import type { CallStructure, CallTurn } from '../structure.js';
import type { Rule, RuleInput } from '../validate/rules.js';
import { turnSpans, wordedRule, type Invariant, type Worded } from './invariant.js';

/** A call turn with calls no result in its run answers (excused calls aside). */
export interface UnansweredCalls {
  readonly turn: CallTurn;
  /** Indexes into `turn.calls` of the calls without an answer, in call order. */
  readonly missing: readonly number[];
  /** Those calls. */
  readonly calls: readonly CallRef[];
}

/** Which unanswered call of a turn is owed an answer: by default every one the scan does not excuse. */
export type Owed<M> = (turn: CallTurn, k: number, input: RuleInput<M>) => boolean;

function findWith(structure: CallStructure, owed: (turn: CallTurn, k: number) => boolean): UnansweredCalls[] {
  const out: UnansweredCalls[] = [];
  for (const turn of structure.turns) {
    const missing: number[] = [];
    for (let k = 0; k < turn.calls.length; k++) if (turn.answers[k] === undefined && owed(turn, k)) missing.push(k);
    if (missing.length > 0) out.push({ turn, missing, calls: missing.map((k) => turn.calls[k]) });
  }
  return out;
}

const notExcused = (turn: CallTurn, k: number) => !turn.excused[k];

/** `everyCallAnswered`, which also takes a format's own idea of the calls owed an answer. */
export interface EveryCallAnswered extends Invariant<UnansweredCalls, CallRef> {
  /** The rule, the calls owed an answer told by `owed` (the AI SDK answers some calls itself). */
  ruleOwing<M>(owed: Owed<M>, word: (finding: UnansweredCalls, input: RuleInput<M>) => Worded | readonly Worded[] | undefined): Rule<M>;
}

/**
 * I1/I3: every call is answered by the unbroken run of results right after the message that made
 * it. Repair adds a synthetic error result for each call without one; a cut never separates a
 * call from the results that answer it.
 */
export const everyCallAnswered: EveryCallAnswered = {
  id: 'call-unanswered',
  find: (structure) => findWith(structure, notExcused),
  repair: {
    action: 'added-result',
    detail: (call) => `call ${call.id ?? call.name} (${call.name}) had no result; a synthetic error result was added`,
  },
  cut: turnSpans,
  rule: (word) => wordedRule('call-unanswered', (input) => findWith(input.structure, notExcused), word),
  ruleOwing: (owed, word) => wordedRule('call-unanswered', (input) => findWith(input.structure, (turn, k) => owed(turn, k, input)), word),
};
