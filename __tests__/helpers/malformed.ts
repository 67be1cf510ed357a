import { expect } from '@jest/globals';
import fc from 'fast-check';
import { compressContext, InputError, type CompressResult, type FormatName } from '../../src/index.js';
import { createTokenCounter } from '../../src/tokens/counter.js';

/**
 * Malformed histories for every format, and the judge of what compressContext makes of them.
 * Written apart from the engine: a corruption is a plain edit of JSON objects, and the judge reads
 * only the thrown error, the view and the report; whether a view is valid is for the per-format
 * checkers (`*-checker.ts`, `oracle.ts`) to say, never for the project's own validator.
 */

/** One message as plain JSON: corruptions edit fields without knowing the format's types. */
export type Json = Record<string, unknown>;

/** A corruption: a copy of `messages` with one fault put in at the places `picks` choose (taken modulo what exists); `undefined` when the history has no place for it. */
export type Corruption = (messages: Json[], picks: readonly number[]) => Json[] | undefined;

/** What a format offers corruptions: where content lives, and the faults only it has. */
export interface Anatomy {
  readonly format: FormatName;
  /** The field holding a message's content (`content`, Gemini `parts`, a Responses output's `output`); undefined where it has none. */
  readonly contentKey: (m: Json) => string | undefined;
  /** What tells messages apart for "each role": the role, or a Responses item's type. */
  readonly roleOf: (m: Json) => string;
  /** True for a message that carries tool results. */
  readonly isResult: (m: Json) => boolean;
  /** True for a message that makes tool calls (dropping it leaves its results orphans). */
  readonly makesCalls: (m: Json) => boolean;
  /** The format's own faults (calls on a role that cannot make them, results in the wrong place...). */
  readonly faults: Readonly<Record<string, Corruption>>;
  /** Every problem the independent checker finds in a view of `input`; empty when the provider accepts it. */
  readonly problems: (view: readonly unknown[], input: readonly Json[]) => readonly unknown[];
}

const copy = (messages: readonly Json[]): Json[] => structuredClone(messages) as Json[];
const at = <T>(list: readonly T[], pick: number): T | undefined => (list.length === 0 ? undefined : list[pick % list.length]);

/** Indexes of the messages `pred` holds for. */
export function where(messages: readonly Json[], pred: (m: Json) => boolean): number[] {
  const out: number[] = [];
  messages.forEach((m, i) => { if (pred(m)) out.push(i); });
  return out;
}

/** A corruption that edits one message chosen among those `pred` holds for. */
export function onOne(pred: (m: Json) => boolean, edit: (m: Json, picks: readonly number[], messages: readonly Json[]) => void): Corruption {
  return (messages, picks) => {
    const i = at(where(messages, pred), picks[0]);
    if (i === undefined) return undefined;
    const out = copy(messages);
    edit(out[i], picks.slice(1), out);
    return out;
  };
}

/**
 * The faults every format can have: content set to null or left out on a message of each role;
 * a result message left out (a missing result), repeated (a duplicate) or moved elsewhere (an
 * orphan, and a call left unanswered); a message making calls left out (its results orphans).
 */
function commonFaults(anatomy: Anatomy): Record<string, Corruption> {
  const ofRole = (messages: readonly Json[], picks: readonly number[]) => {
    const roles = [...new Set(messages.filter((m) => anatomy.contentKey(m) !== undefined).map(anatomy.roleOf))].sort();
    const role = at(roles, picks[0]);
    return role === undefined ? undefined : at(where(messages, (m) => anatomy.roleOf(m) === role && anatomy.contentKey(m) !== undefined), picks[1]);
  };
  const editContent = (edit: (m: Json, key: string) => void): Corruption => (messages, picks) => {
    const i = ofRole(messages, picks);
    if (i === undefined) return undefined;
    const out = copy(messages);
    edit(out[i], anatomy.contentKey(out[i])!);
    return out;
  };
  const aResult = (messages: readonly Json[], pick: number) => at(where(messages, anatomy.isResult), pick);
  return {
    'null-content': editContent((m, key) => { m[key] = null; }),
    'no-content': editContent((m, key) => { delete m[key]; }),
    'missing-result': (messages, [p]) => {
      const i = aResult(messages, p);
      return i === undefined ? undefined : copy(messages).filter((_, k) => k !== i);
    },
    'duplicate-result': (messages, [p, q]) => {
      const i = aResult(messages, p);
      if (i === undefined) return undefined;
      const out = copy(messages);
      // Right after itself, or after the next message.
      out.splice(Math.min(out.length, i + 1 + (q % 2)), 0, structuredClone(out[i]));
      return out;
    },
    'call-dropped': (messages, [p]) => {
      const i = at(where(messages, anatomy.makesCalls), p);
      return i === undefined ? undefined : copy(messages).filter((_, k) => k !== i);
    },
    'orphan-result': (messages, [p, q]) => {
      const i = aResult(messages, p);
      if (i === undefined) return undefined;
      const out = copy(messages);
      const [m] = out.splice(i, 1);
      out.splice(q % (out.length + 1), 0, m);
      return out;
    },
  };
}

/** Every fault of a format: the common ones and its own. */
export function allFaults(anatomy: Anatomy): Record<string, Corruption> {
  return { ...commonFaults(anatomy), ...anatomy.faults };
}

/** One fault to put in: its kind and where. */
export interface FaultDraw {
  readonly kind: string;
  readonly picks: readonly number[];
}

/** One to three faults of the kinds of `anatomy`. */
export function faultsArb(anatomy: Anatomy): fc.Arbitrary<FaultDraw[]> {
  const kinds = Object.keys(allFaults(anatomy));
  return fc.array(fc.record({ kind: fc.constantFrom(...kinds), picks: fc.array(fc.nat(), { minLength: 4, maxLength: 4 }) }), { minLength: 1, maxLength: 3 });
}

/** `valid` with `faults` put in, in order, and the kinds that changed something. */
export function corrupt(anatomy: Anatomy, valid: readonly Json[], faults: readonly FaultDraw[]): { messages: Json[]; applied: string[] } {
  const all = allFaults(anatomy);
  let messages = copy(valid);
  const applied: string[] = [];
  for (const f of faults) {
    const next = all[f.kind](messages, f.picks);
    if (next === undefined || JSON.stringify(next) === JSON.stringify(messages)) continue;
    messages = next;
    applied.push(f.kind);
  }
  return { messages, applied };
}

/** Random planning options; the budget is given per mille of a rough size of the history (its JSON text over four). */
export const budgetArb = fc.record({
  keepFirst: fc.integer({ min: 0, max: 3 }),
  keepLast: fc.integer({ min: 0, max: 8 }),
  keepLastYields: fc.boolean(),
  maxPermille: fc.option(fc.integer({ min: 1, max: 1500 }), { nil: undefined, freq: 4 }),
  trim: fc.option(fc.constant(true as const), { nil: undefined, freq: 3 }),
});
export type BudgetDraw = typeof budgetArb extends fc.Arbitrary<infer T> ? T : never;

/**
 * True when `path` names a field of `input`: `messages[i]` followed by `.key` and `[k]` steps,
 * each present, the message named; only the last may be absent (a required field left out) on an
 * object that exists.
 */
export function namesInputField(input: readonly unknown[], path: string): boolean {
  const m = /^messages((?:\[\d+\]|\.[A-Za-z_$][\w$]*)+)$/.exec(path);
  if (!m) return false;
  const steps = [...m[1].matchAll(/\[(\d+)\]|\.([A-Za-z_$][\w$]*)/g)].map((s) => (s[1] !== undefined ? Number(s[1]) : s[2]));
  if (typeof steps[0] !== 'number') return false;
  let here: unknown = input;
  for (let k = 0; k < steps.length; k++) {
    const step = steps[k];
    if (typeof step === 'number') {
      if (!Array.isArray(here) || step >= here.length) return false;
      here = here[step];
      continue;
    }
    if (typeof here !== 'object' || here === null || Array.isArray(here)) return false;
    if (!Object.hasOwn(here, step)) return k === steps.length - 1;
    here = (here as Json)[step];
  }
  return true;
}

const counter = createTokenCounter();

/** What one run came to: refused with an InputError, or a view. */
export type Outcome = { readonly kind: 'rejected'; readonly error: InputError } | { readonly kind: 'view'; readonly result: CompressResult<Json>; readonly max?: number };

/**
 * Runs compressContext (repair on, the default) on a malformed history and judges what it gives:
 * either an InputError whose `path` names a field of the input and whose `rule` says something,
 * or a view the independent checker accepts, within the budget whenever the budget is feasible:
 * when the report does not say it is over, and always when the whole history fits.
 */
export function judge(anatomy: Anatomy, input: readonly Json[], o: BudgetDraw): Outcome {
  const before = structuredClone(input);
  const size = Math.max(1, Math.ceil(JSON.stringify(input).length / 4));
  const max = o.maxPermille === undefined ? undefined : Math.max(1, Math.floor((size * o.maxPermille) / 1000));
  let result: CompressResult<Json>;
  try {
    result = compressContext<Json>(input, { format: anatomy.format, counter, keepFirst: o.keepFirst, keepLast: o.keepLast, keepLastYields: o.keepLastYields, maxContextTokens: max, toolOutputTrim: o.trim });
  } catch (e) {
    if (!InputError.isInstance(e)) throw e;
    const error = e as InputError;
    expect({ path: error.path, names: namesInputField(input, error.path) }).toEqual({ path: error.path, names: true });
    expect(error.rule.length).toBeGreaterThan(10);
    expect(input).toEqual(before);
    return { kind: 'rejected', error };
  }
  // The caller's history is left as it was.
  expect(input).toEqual(before);
  expect({ problems: anatomy.problems(result.messages, input), repaired: result.report.repaired }).toEqual({ problems: [], repaired: result.report.repaired });
  const r = result.report;
  if (max !== undefined) {
    if (!r.overBudget) expect(r.tokensAfter).toBeLessThanOrEqual(max);
    // Never over when the whole history fits.
    if (r.tokensBeforeExact && r.tokensBefore <= max) {
      expect(r.overBudget).toBe(false);
      expect(r.tokensAfter).toBeLessThanOrEqual(max);
    }
  }
  return { kind: 'view', result, max };
}

/** Counts, per fault kind, the runs it was in that were refused and that gave a view. */
export function tally() {
  const byKind: Record<string, { rejected: number; view: number }> = {};
  /** Why runs were refused: the rule an InputError names (`(rule x)`), or the field its path ends in. */
  const rejectedBy: Record<string, number> = {};
  const t = { runs: 0, rejected: 0, view: 0, repaired: 0, overBudget: 0, byKind, rejectedBy };
  return {
    t,
    add(applied: readonly string[], outcome: Outcome) {
      t.runs++;
      t[outcome.kind]++;
      if (outcome.kind === 'view' && outcome.result.report.repaired.length > 0) t.repaired++;
      if (outcome.kind === 'view' && outcome.result.report.overBudget) t.overBudget++;
      if (outcome.kind === 'rejected') {
        const why = /\(rule ([\w-]+)\)/.exec(outcome.error.rule)?.[1] ?? `field ${outcome.error.path.replace(/^messages\[\d+\]/, '').replace(/\[\d+\]/g, '[]') || '(message)'}`;
        rejectedBy[why] = (rejectedBy[why] ?? 0) + 1;
      }
      for (const k of new Set(applied)) {
        byKind[k] ??= { rejected: 0, view: 0 };
        byKind[k][outcome.kind]++;
      }
    },
  };
}
