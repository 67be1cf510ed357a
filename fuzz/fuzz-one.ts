import fc from 'fast-check';
import { mulberry32 } from '../bench/fixtures/conversation.js';
import { InputError } from '../src/errors.js';
import { compressContext, type CompressResult } from '../src/runtime/compress.js';
import { compressWithSummary } from '../src/runtime/one-shot.js';
import type { Summarizer } from '../src/summarize/summarizer.js';
import type { TokenCounter } from '../src/tokens/counter.js';
import { requestTokens } from './budget.js';
import { drawOptions, type DrawnOptions } from './draw-options.js';
import { signatureProblems, type FuzzFormat } from './formats.js';
import { garble } from './garble.js';
import { sameData } from './same-data.js';

/** How a history was made: one the provider accepts, one with its tool pairing broken, one with its structure broken. */
export type Shape = 'valid' | 'broken' | 'malformed';

/** What is wrong with a run; any of these fails the fuzz run. */
export type FailureClass = 'invalid' | 'over-budget' | 'miscounted' | 'changed-input' | 'refused-valid' | 'exception';

/** The outcome of one fuzzed history. */
export interface Outcome {
  readonly shape: Shape;
  /** What the malformed history's fault is. */
  readonly fault?: string;
  readonly summarize: boolean;
  /** `ok`: a view that passed every check; `refused`: an `InputError` for malformed input (allowed); `failed`: see `failure`. */
  readonly kind: 'ok' | 'refused' | 'failed';
  readonly failure?: { readonly class: FailureClass; readonly detail: string };
  /** The class of the error thrown, for `refused` and `exception`. */
  readonly errorClass?: string;
  /** The view was reported over budget (allowed: what is protected alone is over it). */
  readonly overBudget?: boolean;
  readonly summaryApplied?: boolean;
  readonly repaired?: boolean;
  /** The view was not checked for validity: repair was off on a history that was not valid. */
  readonly unchecked?: boolean;
  /**
   * Malformed input the checker rejects, compressed without an error into a view the checker
   * rejects too: what is wrong beyond tool pairing (an unknown item type, a field of the wrong
   * kind the lens does not read) is passed through as given. Counted, not a failure.
   */
  readonly passedThrough?: string;
}

/** Everything a replay shows: the history, the options, the view and its outcome. */
export interface Replay {
  readonly history: unknown;
  readonly drawn: DrawnOptions;
  readonly outcome: Outcome;
  readonly view?: unknown[];
  readonly report?: unknown;
}

/** Mixes the run's seed, the format and the index into the seed of one history (so a history is replayed by the three alone). */
export function historySeed(seed: number, format: string, index: number): number {
  let h = 0x811c9dc5 ^ seed;
  for (let k = 0; k < format.length; k++) h = Math.imul(h ^ format.charCodeAt(k), 0x01000193);
  h = Math.imul(h ^ index, 0x9e3779b1);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

const errorClass = (error: unknown): string => (InputError.isInstance(error) ? 'InputError' : error instanceof Error ? error.name || error.constructor.name : typeof error);
const message = (error: unknown): string => (error instanceof Error ? error.message : String(error)).slice(0, 300);

/** What one fuzz run shares between histories. */
export interface FuzzContext {
  readonly counter: TokenCounter;
  readonly summarizer: Summarizer;
}

/**
 * Makes history `index` of `spec` for `seed`, draws its options, compresses it (`compressContext`,
 * or `compressWithSummary` with the extractive summarizer), and checks what came back: the input
 * unchanged; the view valid by the format's own checker (for a valid history always; with repair
 * on, for one whose tool pairing was broken, and for a malformed one the checker accepts); recounted from scratch, equal to `report.tokensAfter`, and within the window
 * less the reply's reserve unless reported over budget. Malformed input may be refused with an
 * `InputError`; a valid history never is, and no other error is ever thrown.
 */
export async function fuzzOne(spec: FuzzFormat, seed: number, index: number, ctx: FuzzContext): Promise<Replay> {
  const s = historySeed(seed, spec.format, index);
  const rng = mulberry32(s);
  const r = rng();
  const shape: Shape = r < 0.6 ? 'valid' : r < 0.85 ? 'broken' : 'malformed';
  const drawn = fc.sample(shape === 'broken' ? spec.broken : spec.valid, { seed: s, numRuns: 1 })[0];
  const garbled = shape === 'malformed' ? garble(rng, drawn) : undefined;
  const history: unknown = garbled ? garbled.messages : drawn;
  let historyTokens: number | undefined;
  try {
    historyTokens = requestTokens(spec.format, history as unknown[], {}, ctx.counter);
  } catch {
    historyTokens = undefined; // not countable (malformed): the budget is drawn without it
  }
  const options = drawOptions(rng, spec, historyTokens);
  const base = { shape, summarize: options.summarize, ...(garbled ? { fault: garbled.what } : {}) };
  const fail = (failure: FailureClass, detail: string, extra: Partial<Outcome> = {}): Outcome => ({ ...base, kind: 'failed', failure: { class: failure, detail }, ...extra });
  const snapshot = structuredClone(history);
  const call = { ...options.options, format: spec.format, counter: ctx.counter };
  let result: CompressResult<unknown>;
  try {
    result = options.summarize
      ? await compressWithSummary(history as unknown[], { ...call, summarizer: ctx.summarizer })
      : compressContext(history as unknown[], call);
  } catch (error) {
    const cls = errorClass(error);
    if (cls !== 'InputError') return { history, drawn: options, outcome: fail('exception', `${cls}: ${message(error)}`, { errorClass: cls }) };
    if (shape !== 'malformed') return { history, drawn: options, outcome: fail('refused-valid', `InputError on a ${shape} history: ${message(error)}`, { errorClass: cls }) };
    return { history, drawn: options, outcome: { ...base, kind: 'refused', errorClass: cls } };
  }
  const { messages: view, report } = result;
  const done = (outcome: Outcome): Replay => ({ history, drawn: options, outcome, view, report });
  const facts = { overBudget: report.overBudget, summaryApplied: report.summary.applied, repaired: report.repaired.length > 0 };
  if (!sameData(history, snapshot)) return done(fail('changed-input', 'the caller\'s history was changed', facts));

  // A view is judged when its input was valid, or broken only in its tool pairing with repair on
  // (repair must fix that), or malformed in a way the checker does not see.
  const problemsOf = (list: unknown[], input: unknown[]): string[] => {
    try {
      return [...spec.problems(list), ...signatureProblems(spec.format, input, list)];
    } catch (error) {
      return [`the checker could not read it: ${message(error)}`];
    }
  };
  const checked = shape === 'valid' || (options.options.repair !== false && (shape === 'broken' || problemsOf(history as unknown[], history as unknown[]).length === 0));
  const problems = problemsOf(view, history as unknown[]);
  if (checked && problems.length > 0) return done(fail('invalid', problems.slice(0, 3).join('; '), facts));
  const passedThrough = !checked && shape === 'malformed' && options.options.repair !== false && problems.length > 0 ? problems.slice(0, 2).join('; ') : undefined;

  const o = options.options;
  let recount: number;
  try {
    recount = requestTokens(spec.format, view, o, ctx.counter);
  } catch (error) {
    return done(fail('miscounted', `the view could not be recounted: ${message(error)}`, facts));
  }
  if (recount !== report.tokensAfter) return done(fail('miscounted', `report.tokensAfter is ${report.tokensAfter}, the view recounts to ${recount}`, facts));
  if (o.maxContextTokens !== undefined && !report.overBudget) {
    const room = o.maxContextTokens - (o.reserveOutputTokens ?? 0);
    if (recount > room) return done(fail('over-budget', `${recount} tokens in a window of ${o.maxContextTokens} less ${o.reserveOutputTokens ?? 0} reserved, and not reported over budget`, facts));
  }
  return done({ ...base, kind: 'ok', ...facts, ...(checked ? {} : { unchecked: true }), ...(passedThrough ? { passedThrough } : {}) });
}
