import type { CallStructure } from '../../core/structure.js';
import type { Rule, RuleId, RuleInput, Violation } from '../../core/validate/rules.js';

/**
 * A rule that finds exactly what `rule` finds (same places, ids and rule names) and words each
 * violation as another provider words the same 400: a provider that shares OpenAI's rules but not
 * its texts reuses the rule unit instead of copying its logic.
 */
export function reworded<M>(rule: Rule<M>, word: (violation: Violation, input: RuleInput<M>) => string): Rule<M> {
  return Object.freeze({ id: rule.id, check: (input: RuleInput<M>) => rule.check(input).map((v) => ({ ...v, message: word(v, input) })) });
}

/** The rules of `base` in the same order, each replaced by the rule of the same id in `replacements` where there is one. */
export function withWording<M>(base: readonly Rule<M>[], replacements: readonly Rule<M>[]): readonly Rule<M>[] {
  const byId = (id: RuleId) => replacements.find((r) => r.id === id);
  return Object.freeze(base.map((r) => byId(r.id) ?? r));
}

/** The calls of the turn opened at `opener` that no result answers, as ids (or `function name` for id-less calls). */
export function unansweredAt(structure: CallStructure, opener: number): string[] {
  const turn = structure.turns.find((t) => t.opener === opener);
  if (!turn) return [];
  return turn.calls.filter((_, k) => turn.answers[k] === undefined).map((c) => c.id ?? `function ${c.name}`);
}

/**
 * How the result at message `index` with `id` fails to pair: `stray` when it sits in a call turn's
 * run but answers none of its calls, `outside` when nothing right before it opened calls.
 */
export function orphanKind(structure: CallStructure, index: number, id: string | undefined): 'stray' | 'outside' {
  const placed = structure.results.find((p) => p.index === index && p.result.id === id && (p.pairing === 'stray' || p.pairing === 'outside'));
  return placed?.pairing === 'stray' ? 'stray' : 'outside';
}
