import type { FormatName } from '../formats/lens.js';
import { SUPPORTED_FORMATS } from '../formats/registry.js';
import { PROFILES } from '../formats/profiles.js';
import { DEFAULT_COLLAPSE_MIN_CHARS, DEFAULT_KEEP_FIRST, DEFAULT_KEEP_LAST, type ToolOutputTrim } from '../runtime/options.js';
import { CliError } from './cli-error.js';

/** The subcommands that read messages. */
export type CommandName = 'compress' | 'validate';

/** The commands, in the order help lists them. */
export const COMMANDS: readonly CommandName[] = ['compress', 'validate'];

/** What the commands read from the command line, checked. Absent means the library's default. */
export interface CliOptions {
  maxTokens?: number;
  keepFirst?: number;
  keepLast?: number;
  threshold?: number;
  trimToolOutput?: ToolOutputTrim;
  model?: string;
  format: FormatName | 'auto';
  /** Provider profile to check against (and whose id rules repair applies). */
  provider?: string;
  repair: boolean;
  pretty: boolean;
  /** Do not print repairs and warnings on standard error. */
  quiet: boolean;
  summarizer: SummarizerChoice;
}

/** Who writes summaries during `compress`: nobody, the offline extractive summarizer, or an LLM endpoint. */
export type SummarizerChoice = 'none' | 'extractive' | 'llm';

/** The `--summarizer` values accepted. */
export const SUMMARIZER_CHOICES: readonly SummarizerChoice[] = ['none', 'extractive', 'llm'];

/** The options before any flag is applied. */
export function defaultCliOptions(): CliOptions {
  return { format: 'auto', repair: true, pretty: false, quiet: false, summarizer: 'none' };
}

/**
 * One flag. `value` says whether it takes one: `optional` values are taken from the next word
 * only when it matches `accepts` (so `--trim-tool-output FILE` leaves FILE as the input), and
 * always from `--flag=value`. `apply` checks the raw text and sets the option; help is rendered
 * from the same entry, so what help says and what the parser does cannot drift apart.
 */
export interface FlagSpec {
  readonly long: string;
  readonly short?: string;
  readonly value?: { readonly name: string; readonly optional?: boolean; readonly accepts?: RegExp };
  readonly commands: readonly CommandName[];
  /** One line for help. */
  readonly summary: string;
  /** The default, as help shows it. */
  readonly fallback?: string;
  readonly apply: (options: CliOptions, raw: string | undefined) => void;
}

const INTEGER = /^\d+$/;


function integer(flag: string, raw: string | undefined, min: 0 | 1): number {
  const n = raw !== undefined && INTEGER.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < min) {
    throw new CliError(`--${flag} must be a ${min === 1 ? 'positive' : 'non-negative'} integer, got ${JSON.stringify(raw ?? '')}`);
  }
  return n;
}

/** The `--format` values accepted: the formats that ship, and `auto`. */
export const FORMAT_CHOICES: readonly (FormatName | 'auto')[] = [...SUPPORTED_FORMATS, 'auto'];

function format(raw: string | undefined): FormatName | 'auto' {
  const found = FORMAT_CHOICES.find((f) => f === raw);
  if (!found) throw new CliError(`--format must be one of ${FORMAT_CHOICES.join(', ')} (the formats that ship), got ${JSON.stringify(raw ?? '')}`);
  return found;
}

/** Every flag of every command. Help lists them in this order. */
export const FLAGS: readonly FlagSpec[] = [
  {
    long: 'max-tokens', value: { name: 'N' }, commands: ['compress'], fallback: 'no limit',
    summary: 'token budget for the view, request overhead included; if the head, system messages and the kept tail (--keep-last, with the last user turn) alone exceed it, ctxfold.overBudget is true',
    apply: (o, raw) => { o.maxTokens = integer('max-tokens', raw, 1); },
  },
  {
    long: 'keep-first', value: { name: 'N' }, commands: ['compress'], fallback: String(DEFAULT_KEEP_FIRST),
    summary: 'messages at the start always sent, rounded out to whole groups',
    apply: (o, raw) => { o.keepFirst = integer('keep-first', raw, 0); },
  },
  {
    long: 'keep-last', value: { name: 'N' }, commands: ['compress'], fallback: String(DEFAULT_KEEP_LAST),
    summary: 'messages at the end always sent as they are (never summarized, cleared or dropped for the budget), rounded out to whole groups; with --max-tokens too small for them, ctxfold.overBudget is true',
    apply: (o, raw) => { o.keepLast = integer('keep-last', raw, 0); },
  },
  {
    long: 'threshold', value: { name: 'N' }, commands: ['compress'], fallback: 'none',
    summary: 'when the history (with any summary, before trimming) is at or above N tokens, report the messages to summarize next in ctxfold.summarize',
    apply: (o, raw) => { o.threshold = integer('threshold', raw, 1); },
  },
  {
    long: 'trim-tool-output', value: { name: 'CHARS', optional: true, accepts: /^-?\d+$/ }, commands: ['compress'], fallback: 'off',
    summary: `when over --max-tokens, clear old tool results longer than CHARS characters; CHARS defaults to ${DEFAULT_COLLAPSE_MIN_CHARS}`,
    apply: (o, raw) => { o.trimToolOutput = raw === undefined ? true : { minChars: integer('trim-tool-output', raw, 0) }; },
  },
  {
    long: 'model', value: { name: 'NAME' }, commands: ['compress'], fallback: 'o200k_base',
    summary: "count tokens with this model's tiktoken encoding; an unknown model gets the default",
    apply: (o, raw) => {
      if (!raw) throw new CliError('--model needs a model name, got ""');
      o.model = raw;
    },
  },
  {
    long: 'format', value: { name: 'FORMAT' }, commands: ['compress', 'validate'], fallback: 'auto',
    summary: `message format of the input: ${FORMAT_CHOICES.join(', ')}; auto detects it by evidence`,
    apply: (o, raw) => { o.format = format(raw); },
  },
  {
    long: 'provider', value: { name: 'NAME' }, commands: ['compress', 'validate'], fallback: "the format's own",
    summary: `provider whose tool-calling rules to check: ${Object.keys(PROFILES).join(', ')}; with compress, repair also fits call ids to it, and a view that breaks one of its rules exits 1`,
    apply: (o, raw) => {
      if (raw === undefined || !Object.hasOwn(PROFILES, raw)) throw new CliError(`--provider must be one of ${Object.keys(PROFILES).join(', ')}, got ${JSON.stringify(raw ?? '')}`);
      o.provider = raw;
    },
  },
  {
    long: 'summarizer', value: { name: SUMMARIZER_CHOICES.join('|') }, commands: ['compress'], fallback: 'none',
    summary: 'at or above --threshold, summarize the messages between head and tail right away and send the summary instead of them; llm reads CTXFOLD_LLM_BASE_URL, CTXFOLD_LLM_API_KEY, CTXFOLD_LLM_MODEL',
    apply: (o, raw) => {
      const found = SUMMARIZER_CHOICES.find((c) => c === raw);
      if (!found) throw new CliError(`--summarizer must be one of ${SUMMARIZER_CHOICES.join(', ')}, got ${JSON.stringify(raw ?? '')}`);
      o.summarizer = found;
    },
  },
  {
    long: 'no-repair', commands: ['compress'], fallback: 'repair on',
    summary: 'do not first fix a broken history: unanswered calls, orphan or duplicate results',
    apply: (o) => { o.repair = false; },
  },
  {
    long: 'quiet', short: 'q', commands: ['compress'], fallback: 'repairs and warnings on stderr',
    summary: 'do not print what repair changed (one line each) nor warnings on standard error; the report in the output still says it',
    apply: (o) => { o.quiet = true; },
  },
  {
    long: 'pretty', commands: ['compress', 'validate'], fallback: 'compact',
    summary: 'indent the JSON output; ignored for JSONL output',
    apply: (o) => { o.pretty = true; },
  },
];

/** What the command line asks for. */
export type Invocation =
  | { readonly kind: 'help'; readonly command?: CommandName }
  | { readonly kind: 'version' }
  | { readonly kind: 'run'; readonly command: CommandName; readonly file?: string; readonly options: CliOptions };

const isCommand = (word: string): word is CommandName => (COMMANDS as readonly string[]).includes(word);

function commandFrom(word: string | undefined, context: string): CommandName {
  if (word !== undefined && isCommand(word)) return word;
  const got = word === undefined ? '' : `, got ${JSON.stringify(word)}`;
  throw new CliError(`${context}: expected ${COMMANDS.join(' or ')}${got} (see ctxfold --help)`);
}

function findFlag(command: CommandName, word: string): FlagSpec {
  const byName = (f: FlagSpec) => (word.startsWith('--') ? `--${f.long}` === word : f.short !== undefined && `-${f.short}` === word);
  const spec = FLAGS.find(byName);
  if (!spec) throw new CliError(`unknown option ${word} (see ctxfold ${command} --help)`);
  if (!spec.commands.includes(command)) throw new CliError(`${word} is not an option of ${command} (see ctxfold ${command} --help)`);
  return spec;
}

/**
 * Reads `ctxfold COMMAND [options] [FILE|-]`, `ctxfold help [COMMAND]`, `--help` and `--version`.
 * Throws a `CliError` (exit 2) naming the flag and what was wrong; never returns half-checked options.
 */
export function parseArgs(argv: readonly string[]): Invocation {
  const [first, ...rest] = argv;
  if (first === undefined) throw new CliError(`missing command: expected ${COMMANDS.join(' or ')} (see ctxfold --help)`);
  if (first === '-h' || first === '--help') return { kind: 'help' };
  if (first === '--version') return { kind: 'version' };
  if (first === 'help') return rest.length === 0 ? { kind: 'help' } : { kind: 'help', command: commandFrom(rest[0], 'help') };
  const command = commandFrom(first, 'unknown command');

  const options = defaultCliOptions();
  const files: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i];
    if (word === '--') {
      files.push(...rest.slice(i + 1));
      break;
    }
    if (word === '-h' || word === '--help') return { kind: 'help', command };
    if (word === '--version') return { kind: 'version' };
    if (word === '-' || !word.startsWith('-')) {
      files.push(word);
      continue;
    }
    const eq = word.startsWith('--') ? word.indexOf('=') : -1;
    const name = eq === -1 ? word : word.slice(0, eq);
    const spec = findFlag(command, name);
    let raw: string | undefined = eq === -1 ? undefined : word.slice(eq + 1);
    if (!spec.value) {
      if (raw !== undefined) throw new CliError(`${name} takes no value, got ${JSON.stringify(raw)}`);
    } else if (raw === undefined) {
      const next = rest[i + 1];
      const { optional, accepts } = spec.value;
      if (optional) {
        if (next !== undefined && accepts?.test(next)) raw = rest[++i];
      } else if (next === undefined || (next.startsWith('--') && next.length > 2)) {
        throw new CliError(`${name} needs a value (${spec.value.name})`);
      } else raw = rest[++i];
    }
    spec.apply(options, raw);
  }
  if (files.length > 1) throw new CliError(`expected at most one FILE, got ${files.map((f) => JSON.stringify(f)).join(' and ')}`);
  return { kind: 'run', command, file: files[0], options };
}
