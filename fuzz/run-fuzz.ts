import { createExtractiveSummarizer } from '../src/summarize/extractive.js';
import { createTokenCounter, summaryTextCounter } from '../src/tokens/counter.js';
import type { FuzzFormat } from './formats.js';
import { fuzzOne, type FailureClass, type FuzzContext, type Outcome, type Shape } from './fuzz-one.js';

/** One failure, with what replays it. */
export interface FuzzFailure {
  readonly format: string;
  readonly seed: number;
  readonly index: number;
  readonly outcome: Outcome;
}

/** What the run saw in one format. */
export interface FormatTally {
  readonly format: string;
  histories: number;
  readonly shapes: Record<Shape, number>;
  /** Calls that went through `compressWithSummary`. */
  summarized: number;
  /** Views reported over budget (allowed: what is protected alone is over the window). */
  reportedOverBudget: number;
  /** Views not checked for validity (repair off on a history that was not valid, or malformed input the checker rejects). */
  unchecked: number;
  /** Malformed input the checker rejects, compressed into a view it rejects too (`Outcome.passedThrough`); the first few kept in `notes`. */
  passedThrough: number;
  readonly notes: FuzzFailure[];
  /** Failures by class (`invalid`, `over-budget`, ...). */
  readonly failures: Record<FailureClass, number>;
  /** Errors thrown, by class: `InputError` on malformed input is allowed, every other one is a failure. */
  readonly exceptions: Record<string, number>;
  /** The first failures, with their index (at most `keepFailures`). */
  readonly failed: FuzzFailure[];
  seconds: number;
}

/** Options of a fuzz run. */
export interface FuzzRun {
  readonly histories: number;
  readonly formats: readonly FuzzFormat[];
  readonly seed: number;
  /** Failures kept per format for printing (all are counted). Default 20. */
  readonly keepFailures?: number;
  /** Called after each format. */
  readonly onFormat?: (tally: FormatTally) => void;
}

/** A new context: one token counter and one extractive summarizer for the run. */
export function fuzzContext(): FuzzContext {
  const counter = createTokenCounter();
  return { counter, summarizer: createExtractiveSummarizer({ countTokens: summaryTextCounter(counter) }) };
}

/** Total failures of a tally. */
export const failuresOf = (t: FormatTally): number => Object.values(t.failures).reduce((a, b) => a + b, 0);

/** Runs `histories` histories of each format; a run fails when any tally has a failure. */
export async function runFuzz(run: FuzzRun): Promise<FormatTally[]> {
  const ctx = fuzzContext();
  const keep = run.keepFailures ?? 20;
  const tallies: FormatTally[] = [];
  for (const spec of run.formats) {
    const t: FormatTally = {
      format: spec.format, histories: 0, shapes: { valid: 0, broken: 0, malformed: 0 }, summarized: 0, reportedOverBudget: 0, unchecked: 0, passedThrough: 0, notes: [],
      failures: { invalid: 0, 'over-budget': 0, miscounted: 0, 'changed-input': 0, 'refused-valid': 0, exception: 0 }, exceptions: {}, failed: [], seconds: 0,
    };
    const started = performance.now();
    for (let index = 0; index < run.histories; index++) {
      const { outcome } = await fuzzOne(spec, run.seed, index, ctx);
      t.histories++;
      t.shapes[outcome.shape]++;
      if (outcome.summarize) t.summarized++;
      if (outcome.overBudget) t.reportedOverBudget++;
      if (outcome.unchecked) t.unchecked++;
      if (outcome.passedThrough) {
        t.passedThrough++;
        if (t.notes.length < 5) t.notes.push({ format: spec.format, seed: run.seed, index, outcome });
      }
      if (outcome.errorClass) t.exceptions[outcome.errorClass] = (t.exceptions[outcome.errorClass] ?? 0) + 1;
      if (outcome.failure) {
        t.failures[outcome.failure.class]++;
        if (t.failed.length < keep) t.failed.push({ format: spec.format, seed: run.seed, index, outcome });
      }
    }
    t.seconds = (performance.now() - started) / 1000;
    tallies.push(t);
    run.onFormat?.(t);
  }
  return tallies;
}
