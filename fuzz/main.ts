/**
 * `npm run fuzz -- --histories N --format F --seed S`: generates N histories per format (valid,
 * with broken tool pairing, with broken structure), compresses each with random options and
 * budgets, and checks every view with the format's independent checker and a recount of its
 * budget. Prints the counts per format and every failure with what replays it
 * (`--replay INDEX` shows that history, its options and its view); exits 1 on any failure.
 */
import { FUZZ_FORMATS, fuzzFormat, type FuzzFormat } from './formats.js';
import { fuzzOne } from './fuzz-one.js';
import { failuresOf, fuzzContext, runFuzz, type FormatTally } from './run-fuzz.js';

/** The command line, read. */
export interface FuzzArgs {
  readonly histories: number;
  readonly formats: readonly FuzzFormat[];
  readonly seed: number;
  readonly replay?: number;
}

const USAGE = 'usage: npm run fuzz -- [--histories N] [--format all|openai|openai-responses|anthropic|gemini|ai-sdk|qwen-agent|hermes] [--seed S] [--replay INDEX]';

/** Reads the flags; throws a one-line message on a bad one. */
export function parseFuzzArgs(argv: readonly string[]): FuzzArgs {
  let histories = 1000;
  let format = 'all';
  let seed = 1;
  let replay: number | undefined;
  const whole = (flag: string, value: string | undefined, min: number): number => {
    const n = Number(value);
    if (value === undefined || !/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < min) throw new Error(`${flag} must be a whole number >= ${min}, got ${JSON.stringify(value ?? '')}\n${USAGE}`);
    return n;
  };
  for (let k = 0; k < argv.length; k++) {
    const flag = argv[k];
    if (flag === '--histories') histories = whole(flag, argv[++k], 1);
    else if (flag === '--format') format = argv[++k] ?? '';
    else if (flag === '--seed') seed = whole(flag, argv[++k], 0);
    else if (flag === '--replay') replay = whole(flag, argv[++k], 0);
    else throw new Error(`unknown flag ${JSON.stringify(flag)}\n${USAGE}`);
  }
  const one = fuzzFormat(format);
  if (format !== 'all' && !one) throw new Error(`--format must be all or one of ${FUZZ_FORMATS.map((f) => f.format).join(', ')}, got ${JSON.stringify(format)}\n${USAGE}`);
  if (replay !== undefined && !one) throw new Error('--replay needs one --format (the one the failure line names)');
  return { histories, formats: one ? [one] : FUZZ_FORMATS, seed, ...(replay === undefined ? {} : { replay }) };
}

const EXCEPTION_NOTE = (cls: string) => (cls === 'InputError' ? ' (allowed on malformed input)' : '');

/** The lines printed for one format's tally. */
export function tallyLines(t: FormatTally): string[] {
  const f = t.failures;
  const exceptions = Object.entries(t.exceptions).map(([cls, n]) => `${cls} ${n}${EXCEPTION_NOTE(cls)}`).join(', ') || 'none';
  const out = [
    `${t.format}: ${t.histories} histories (${t.shapes.valid} valid, ${t.shapes.broken} broken pairing, ${t.shapes.malformed} malformed; ${t.summarized} summarized first) in ${t.seconds.toFixed(1)} s`,
    `  invalid ${f.invalid}, over budget ${f['over-budget']}, miscounted ${f.miscounted}, input changed ${f['changed-input']}, valid history refused ${f['refused-valid']}, other exceptions ${f.exception}`,
    `  exceptions by class: ${exceptions}; reported over budget (allowed) ${t.reportedOverBudget}; not judged (repair off, or malformed beyond the checker) ${t.unchecked}, of them passed through as given ${t.passedThrough}`,
  ];
  for (const x of t.notes) {
    out.push(`  note: malformed input passed through: ${x.format} seed ${x.seed} index ${x.index} (${x.outcome.fault}): ${x.outcome.passedThrough}`);
  }
  for (const x of t.failed) {
    const o = x.outcome;
    out.push(`  FAIL ${x.format} seed ${x.seed} index ${x.index} (${o.shape}${o.fault ? `: ${o.fault}` : ''}${o.summarize ? ', summarized' : ''}): ${o.failure!.class}: ${o.failure!.detail}`);
    out.push(`    replay: npm run fuzz -- --format ${x.format} --seed ${x.seed} --replay ${x.index}`);
  }
  const more = failuresOf(t) - t.failed.length;
  if (more > 0) out.push(`  ... and ${more} more failures`);
  return out;
}

/** Runs the command line; returns the exit code (1 on any failure). */
export async function fuzzMain(argv: readonly string[], write: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<number> {
  let args: FuzzArgs;
  try {
    args = parseFuzzArgs(argv);
  } catch (error) {
    write((error as Error).message);
    return 2;
  }
  if (args.replay !== undefined) {
    const r = await fuzzOne(args.formats[0], args.seed, args.replay, fuzzContext());
    write(JSON.stringify({ outcome: r.outcome, options: r.drawn, history: r.history, view: r.view, report: r.report }, null, 2));
    return r.outcome.kind === 'failed' ? 1 : 0;
  }
  write(`fuzz: ${args.histories} histories per format, seed ${args.seed}`);
  const tallies = await runFuzz({ histories: args.histories, formats: args.formats, seed: args.seed, onFormat: (t) => { for (const l of tallyLines(t)) write(l); } });
  const failed = tallies.reduce((n, t) => n + failuresOf(t), 0);
  write(failed === 0 ? 'fuzz: no failures' : `fuzz: ${failed} failures`);
  return failed === 0 ? 0 : 1;
}
