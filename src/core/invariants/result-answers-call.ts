import type { CallStructure, PlacedResult } from '../structure.js';
import { turnSpans, wordedRule, type Invariant } from './invariant.js';

/** A result that answers no call: outside every turn's run, or in a run answering none of its calls (`stray`). */
export type OrphanResult = PlacedResult & { readonly pairing: 'outside' | 'stray' };

/** True for a result that answers no call. */
export function isOrphan(p: PlacedResult): p is OrphanResult {
  return p.pairing === 'outside' || p.pairing === 'stray';
}

/**
 * I2: every result answers a call of the turn right before it. Repair removes an orphan (one
 * result block, or the message when nothing else would be left); a cut never leaves a result
 * without the turn it answers.
 */
export const resultAnswersCall: Invariant<OrphanResult> = {
  id: 'result-orphan',
  find: (structure) => structure.results.filter(isOrphan),
  repair: {
    action: 'removed-orphan',
    detail: (p: OrphanResult, structure: CallStructure) => (p.pairing === 'outside'
      ? `tool result ${p.result.id || p.result.name || 'without a call id'} answers no preceding call`
      : `tool result ${p.result.id ?? p.result.name ?? ''} answers no call of messages[${structure.turns[p.turn].opener}]`),
  },
  cut: turnSpans,
  rule: (word) => wordedRule('result-orphan', (input) => input.structure.results.filter(isOrphan), word),
};
