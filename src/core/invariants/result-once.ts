import type { CallRef } from '../lens.js';
import type { CallStructure, CallTurn, PlacedResult } from '../structure.js';
import { turnSpans, wordedRule, type Invariant } from './invariant.js';

/** A further result for a call its turn already answered. */
export interface RepeatedResult {
  readonly result: PlacedResult;
  readonly turn: CallTurn;
  readonly call: CallRef;
  /** Index of the message with the call's first answer. */
  readonly first: number;
}

function find(structure: CallStructure): RepeatedResult[] {
  const out: RepeatedResult[] = [];
  for (const p of structure.results) {
    if (p.pairing !== 'duplicate') continue;
    const turn = structure.turns[p.turn];
    out.push({ result: p, turn, call: turn.calls[p.call], first: turn.answers[p.call]!.index });
  }
  return out;
}

/**
 * I4: no call is answered twice. Repair removes the later result and keeps the first; a cut keeps
 * a call's results with it, so a view never keeps a second answer whose first it dropped.
 */
export const resultOnce: Invariant<RepeatedResult> = {
  id: 'result-duplicate',
  find,
  repair: {
    action: 'removed-duplicate',
    detail: (f) => `second result for ${f.call.id ?? f.call.name}; the first one (messages[${f.first}]) is kept`,
  },
  cut: turnSpans,
  rule: (word) => wordedRule('result-duplicate', (input) => find(input.structure), word),
};
