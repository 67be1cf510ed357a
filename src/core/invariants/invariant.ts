import type { CallStructure } from '../structure.js';
import type { RepairAction } from '../repair.js';
import type { KnownRuleId, Rule, RuleInput, Violation } from '../validate/rules.js';

/** A span of messages [start, end) that no cut may fall inside: both halves must land on one side. */
export interface CutSpan {
  readonly start: number;
  readonly end: number;
}

/** A violation as a format words it; the invariant adds its rule id. */
export type Worded = Omit<Violation, 'rule'>;

/**
 * One invariant of a valid tool-calling history, as a unit (as OpenHands models each property of
 * a valid view): where a history breaks it (`find`, on the one structure scan), how repair
 * restores it (`repair`), and the constraint it puts on cuts (`cut`). A provider profile words its
 * findings in the provider's own error text through `rule`; the finding itself is never written twice.
 */
export interface Invariant<F, R = F> {
  readonly id: KnownRuleId;
  /** Every place the history breaks it, in scan order. */
  find(structure: CallStructure): F[];
  /** The repair action that restores it (one per `R`: a finding, or a call), and what that action says it did. */
  readonly repair: { readonly action: RepairAction['action']; detail(unit: R, structure: CallStructure): string };
  /** Spans no cut may fall inside, for every view of a history that keeps it to keep it too. */
  cut(structure: CallStructure): CutSpan[];
  /** The profile rule reporting each finding as `word` words it (none, one, or several violations). */
  rule<M>(word: (finding: F, input: RuleInput<M>) => Worded | readonly Worded[] | undefined): Rule<M>;
}

/** The `rule` of an invariant: its findings, each worded by the profile, under its id. */
export function wordedRule<F, M>(id: KnownRuleId, find: (input: RuleInput<M>) => F[], word: (finding: F, input: RuleInput<M>) => Worded | readonly Worded[] | undefined): Rule<M> {
  return {
    id,
    check(input) {
      const out: Violation[] = [];
      for (const f of find(input)) {
        const w = word(f, input);
        if (w === undefined) continue;
        for (const v of (Array.isArray(w) ? w : [w]) as readonly Worded[]) {
          // Fields in the order a violation has always had them: index, rule, then the rest.
          const { index, ...rest } = v;
          out.push({ index, rule: id, ...rest });
        }
      }
      return out;
    },
  };
}

/** The span of every call turn, from its first opener to the end of the results that answer it: a call and its answers stay on one side of a cut. */
export function turnSpans(structure: CallStructure): CutSpan[] {
  return structure.turns.map((t) => ({ start: t.opener, end: Math.max(t.answeredEnd, t.openersEnd) }));
}
