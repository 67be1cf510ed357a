import type { FormatName } from '../formats/lens.js';
import { SUPPORTED_FORMATS } from '../formats/registry.js';
import { PROFILES } from '../formats/profiles.js';
import { DEFAULT_COLLAPSE_MIN_CHARS, DEFAULT_KEEP_FIRST, DEFAULT_KEEP_LAST, DEFAULT_LOW_WATER_MARK, type ToolOutputTrim } from '../runtime/options.js';
import { CliError } from './cli-error.js';

/** The subcommands: two read messages, `serve` runs the proxy. */
export type CommandName = 'compress' | 'validate' | 'serve';

/** The commands, in the order help lists them. */
export const COMMANDS: readonly CommandName[] = ['compress', 'validate', 'serve'];

/** `a, b or c`: how messages list the commands and choices. */
export function listOr(words: readonly string[]): string {
  return words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;
}

/** What the commands read from the command line, checked. Absent means the library's default. */
export interface CliOptions {
  maxTokens?: number;
  keepFirst?: number;
  keepLast?: number;
  /** `--no-keep-last-yields`: false, the kept tail is sent whole; unset or `--keep-last-yields`: it gives way to `--max-tokens`. */
  keepLastYields?: boolean;
  /** `--low-water-mark`: a fold drops to this share of the budget (0 < x <= 1). */
  lowWaterMark?: number;
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
  /** serve: the upstream base URL, and where and how the proxy listens, stores, logs. */
  upstream?: string;
  port?: number;
  host?: string;
  store?: string;
  /** serve: answer ctxfold_recall calls (the store keeps originals). */
  recall?: boolean;
  config?: string;
  upstreamKeyEnv?: string;
  tenantHeader?: string;
  chatIdHeader?: string;
  maxBodyBytes?: number;
  bodyMemoryBytes?: number;
  upstreamTimeoutMs?: number;
  upstreamKeepAliveMs?: number;
  logLevel?: string;
}

/** Who writes summaries during `compress`: nobody, the offline extractive summarizer, or an LLM endpoint. */
export type SummarizerChoice = 'none' | 'extractive' | 'llm';

/** The `--summarizer` values accepted. */
export const SUMMARIZER_CHOICES: readonly SummarizerChoice[] = ['none', 'extractive', 'llm'];

/** The options before any flag is applied (serve summarizes in the background by default, with the extractive summarizer). */
export function defaultCliOptions(command: CommandName = 'compress'): CliOptions {
  return { format: 'auto', repair: true, pretty: false, quiet: false, summarizer: command === 'serve' ? 'extractive' : 'none' };
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


function integer(flag: string, raw: string | undefined, min: 0 | 1, max = Number.MAX_SAFE_INTEGER): number {
  const n = raw !== undefined && INTEGER.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    const range = max < Number.MAX_SAFE_INTEGER ? `an integer from ${min} to ${max}` : `a ${min === 1 ? 'positive' : 'non-negative'} integer`;
    throw new CliError(`--${flag} must be ${range}, got ${JSON.stringify(raw ?? '')}`);
  }
  return n;
}

const DECIMAL = /^(\d+(\.\d*)?|\.\d+)$/;

/** A share in (0, 1], written as a plain decimal (`0.7`, `.5`, `1`). */
function share(flag: string, raw: string | undefined): number {
  const n = raw !== undefined && DECIMAL.test(raw) ? Number(raw) : NaN;
  if (!(n > 0 && n <= 1)) throw new CliError(`--${flag} must be a number above 0 and at most 1, got ${JSON.stringify(raw ?? '')}`);
  return n;
}

function text(flag: string, raw: string | undefined, what: string): string {
  if (raw === undefined || raw === '') throw new CliError(`--${flag} needs ${what}, got ""`);
  return raw;
}

/** The `--log-level` values (pino's levels). */
export const LOG_LEVEL_CHOICES = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** The `--store` forms. */
const STORE_FORMS = 'sqlite:PATH, redis://HOST:PORT or memory';

/** The `--format` values accepted: the formats that ship, and `auto`. */
export const FORMAT_CHOICES: readonly (FormatName | 'auto')[] = [...SUPPORTED_FORMATS, 'auto'];

function format(raw: string | undefined): FormatName | 'auto' {
  const found = FORMAT_CHOICES.find((f) => f === raw);
  if (!found) throw new CliError(`--format must be one of ${FORMAT_CHOICES.join(', ')} (the formats that ship), got ${JSON.stringify(raw ?? '')}`);
  return found;
}

/** The flags of the commands that read messages. */
const READING_FLAGS: readonly FlagSpec[] = [
  {
    long: 'max-tokens', value: { name: 'N' }, commands: ['compress'], fallback: 'no limit',
    summary: 'token budget for the view, request overhead included; if the head, system messages, the last user message and the newest turn alone exceed it (the whole kept tail, with --no-keep-last-yields), ctxfold.overBudget is true',
    apply: (o, raw) => { o.maxTokens = integer('max-tokens', raw, 1); },
  },
  {
    long: 'keep-first', value: { name: 'N' }, commands: ['compress'], fallback: String(DEFAULT_KEEP_FIRST),
    summary: 'messages at the start always sent, rounded out to whole groups',
    apply: (o, raw) => { o.keepFirst = integer('keep-first', raw, 0); },
  },
  {
    long: 'keep-last', value: { name: 'N' }, commands: ['compress'], fallback: String(DEFAULT_KEEP_LAST),
    summary: 'messages at the end sent as they are (never summarized or cleared), rounded out to whole groups; with --max-tokens too small for them, their oldest turns give way (see --no-keep-last-yields)',
    apply: (o, raw) => { o.keepLast = integer('keep-last', raw, 0); },
  },
  {
    long: 'no-keep-last-yields', commands: ['compress'], fallback: 'the kept tail yields',
    summary: 'send the --keep-last messages whole even when they alone are over --max-tokens (ctxfold.overBudget is then true); by default their oldest turns give way, then the tool rounds after the last user message, oldest first (never that message, never the newest turn), and a view that fits without yielding is the same',
    apply: (o) => { o.keepLastYields = false; },
  },
  {
    long: 'keep-last-yields', commands: ['compress'], fallback: 'on',
    summary: 'the default, accepted so that scripts written for earlier versions run: the kept tail gives way to --max-tokens',
    apply: (o) => { o.keepLastYields = true; },
  },
  {
    long: 'low-water-mark', value: { name: 'X' }, commands: ['compress'], fallback: String(DEFAULT_LOW_WATER_MARK),
    summary: 'fold in steps: a view that must drop turns goes on to a cut point, and cut points lie about (1 - X) of the budget apart, so a chat that grows by appending keeps its view prefix (which providers cache) until the next step; 1 drops only what must go',
    apply: (o, raw) => { o.lowWaterMark = share('low-water-mark', raw); },
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
    summary: 'at or above --threshold, summarize the oldest messages after the head right away and send the summary instead of them (a summary that had to leave facts out is made again, wider: up to three summarizer calls); llm reads CTXFOLD_LLM_BASE_URL, CTXFOLD_LLM_API_KEY, CTXFOLD_LLM_MODEL',
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

/** A flag of compress that serve takes as it is. */
const asUnderServe = (long: string): FlagSpec => ({ ...READING_FLAGS.find((f) => f.long === long)!, commands: ['serve'] });

/** The flags of serve, in the order its help lists them. */
const SERVE_FLAGS: readonly FlagSpec[] = [
  {
    long: 'upstream', value: { name: 'URL' }, commands: ['serve'],
    summary: 'required: base URL of the API to forward to, with its version, as an SDK\'s baseURL (https://api.openai.com/v1, http://127.0.0.1:8000/v1); the proxy\'s /v1/PATH goes to URL/PATH',
    apply: (o, raw) => { o.upstream = text('upstream', raw, 'a URL'); },
  },
  {
    long: 'port', value: { name: 'N' }, commands: ['serve'], fallback: '8787',
    summary: 'port to listen on; 0 picks a free one (the bound URL is printed on standard output)',
    apply: (o, raw) => { o.port = integer('port', raw, 0, 65_535); },
  },
  {
    long: 'host', value: { name: 'ADDR' }, commands: ['serve'], fallback: '127.0.0.1',
    summary: 'address to listen on (0.0.0.0: every interface)',
    apply: (o, raw) => { o.host = text('host', raw, 'an address'); },
  },
  {
    long: 'max-tokens', value: { name: 'N' }, commands: ['serve'], fallback: 'none: histories of such models are repaired, never cut (a summary the chat already has from a model with a window still stands in for what it covers)',
    summary: 'context window of every model without its own --config entry (that entry is more specific and wins); it wins over ctxfold\'s table of known models (each request\'s max_tokens is kept free for the reply)',
    apply: (o, raw) => { o.maxTokens = integer('max-tokens', raw, 1); },
  },
  {
    long: 'config', value: { name: 'FILE' }, commands: ['serve'], fallback: 'none',
    summary: 'JSON file of per-model limits, first in precedence: {"models": {"gpt-4o": {"maxContextTokens": 128000, "compressionThresholdTokens": 90000}}}',
    apply: (o, raw) => { o.config = text('config', raw, 'a file'); },
  },
  {
    long: 'threshold', value: { name: 'N' }, commands: ['serve'], fallback: '75% of each model\'s window',
    summary: 'after a response, summarize the chat in the background once its history reaches N tokens',
    apply: (o, raw) => { o.threshold = integer('threshold', raw, 1); },
  },
  asUnderServe('keep-first'),
  {
    long: 'keep-last', value: { name: 'N' }, commands: ['serve'], fallback: String(DEFAULT_KEEP_LAST),
    summary: "messages at the end sent as they are (never summarized or cleared), rounded out to whole groups; when they alone are over a model's window, their oldest turns give way (see --no-keep-last-yields)",
    apply: (o, raw) => { o.keepLast = integer('keep-last', raw, 0); },
  },
  {
    long: 'no-keep-last-yields', commands: ['serve'], fallback: 'the kept tail yields',
    summary: "send the --keep-last messages whole even when they alone are over a model's window (the upstream then refuses the request); by default their oldest turns give way, then the tool rounds after the last user message, oldest first (never that message, never the newest turn), and a view that fits without yielding is the same",
    apply: (o) => { o.keepLastYields = false; },
  },
  {
    long: 'keep-last-yields', commands: ['serve'], fallback: 'on',
    summary: 'the default, accepted so that scripts written for earlier versions run: the kept tail gives way to the window',
    apply: (o) => { o.keepLastYields = true; },
  },
  {
    long: 'low-water-mark', value: { name: 'X' }, commands: ['serve'], fallback: String(DEFAULT_LOW_WATER_MARK),
    summary: "fold in steps: a view over a model's window drops to about X of it (a background summary folds to X of the threshold), so the next requests append to the same prefix, which providers cache; 1 drops only what must go",
    apply: (o, raw) => { o.lowWaterMark = share('low-water-mark', raw); },
  },
  {
    long: 'trim-tool-output', value: { name: 'CHARS', optional: true, accepts: /^-?\d+$/ }, commands: ['serve'], fallback: 'off',
    summary: `when a history is over its window, clear old tool results longer than CHARS characters; CHARS defaults to ${DEFAULT_COLLAPSE_MIN_CHARS}`,
    apply: (o, raw) => { o.trimToolOutput = raw === undefined ? true : { minChars: integer('trim-tool-output', raw, 0) }; },
  },
  asUnderServe('model'),
  asUnderServe('no-repair'),
  {
    long: 'store', value: { name: 'SPEC' }, commands: ['serve'], fallback: 'sqlite:./ctxfold.db',
    summary: `where summaries live: ${STORE_FORMS} (Redis for several proxy processes)`,
    apply: (o, raw) => {
      const spec = text('store', raw, STORE_FORMS);
      if (spec !== 'memory' && !/^sqlite:.+/.test(spec) && !/^rediss?:\/\/[^/\s]/.test(spec)) throw new CliError(`--store must be ${STORE_FORMS}, got ${JSON.stringify(spec)}`);
      o.store = spec;
    },
  },
  {
    long: 'recall', commands: ['serve'], fallback: 'off',
    summary: 'keep the original messages each summary replaces and, on chat/completions, responses and messages (streamed or not), offer the ctxfold_recall tool and answer its calls: at most 3 rounds per request, then once more with tool_choice none if the model still only recalls (every --store keeps them: memory, SQLite or Redis)',
    apply: (o) => { o.recall = true; },
  },
  {
    long: 'summarizer', value: { name: SUMMARIZER_CHOICES.join('|') }, commands: ['serve'], fallback: 'extractive',
    summary: 'who writes the background summaries; llm reads CTXFOLD_LLM_BASE_URL, CTXFOLD_LLM_API_KEY, CTXFOLD_LLM_MODEL; none: views are cut, never summarized',
    apply: (o, raw) => {
      const found = SUMMARIZER_CHOICES.find((c) => c === raw);
      if (!found) throw new CliError(`--summarizer must be one of ${SUMMARIZER_CHOICES.join(', ')}, got ${JSON.stringify(raw ?? '')}`);
      o.summarizer = found;
    },
  },
  {
    long: 'upstream-key-env', value: { name: 'NAME' }, commands: ['serve'], fallback: 'forward the caller\'s key',
    summary: 'the proxy holds the upstream key: read it from environment variable NAME and send it on every request in place of the caller\'s; tenants then come from --tenant-header',
    apply: (o, raw) => {
      const name = text('upstream-key-env', raw, 'an environment variable name');
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new CliError(`--upstream-key-env must be an environment variable name (letters, digits, _), got ${JSON.stringify(name)}`);
      o.upstreamKeyEnv = name;
    },
  },
  {
    long: 'tenant-header', value: { name: 'NAME' }, commands: ['serve'], fallback: 'x-ctxfold-tenant',
    summary: 'header that names the tenant (chats of different tenants never share state); without --upstream-key-env it only splits a caller key\'s chats further',
    apply: (o, raw) => { o.tenantHeader = text('tenant-header', raw, 'a header name').toLowerCase(); },
  },
  {
    long: 'chat-id-header', value: { name: 'NAME' }, commands: ['serve'], fallback: 'x-ctxfold-chat-id',
    summary: 'header that names the chat, read before x-ctxfold-chat-id (Open WebUI forwards x-openwebui-chat-id)',
    apply: (o, raw) => { o.chatIdHeader = text('chat-id-header', raw, 'a header name').toLowerCase(); },
  },
  {
    long: 'max-body-bytes', value: { name: 'N' }, commands: ['serve'], fallback: String(32 * 1024 * 1024),
    summary: 'largest request body accepted; a larger one is answered 413',
    apply: (o, raw) => { o.maxBodyBytes = integer('max-body-bytes', raw, 1); },
  },
  {
    long: 'body-memory-bytes', value: { name: 'N' }, commands: ['serve'], fallback: String(64 * 1024 * 1024),
    summary: 'bytes of recent request bodies kept, so a chat\'s next body parses only what follows the bytes it shares with its last one (0: parse every body whole)',
    apply: (o, raw) => { o.bodyMemoryBytes = integer('body-memory-bytes', raw, 0); },
  },
  {
    long: 'upstream-timeout-ms', value: { name: 'N' }, commands: ['serve'], fallback: '600000',
    summary: 'longest the upstream may stay silent (before answering, or between two chunks of a stream); then 504, or the stream is cut',
    apply: (o, raw) => { o.upstreamTimeoutMs = integer('upstream-timeout-ms', raw, 1); },
  },
  {
    long: 'upstream-keep-alive-ms', value: { name: 'N' }, commands: ['serve'], fallback: '4000',
    summary: 'how long an idle connection to the upstream is kept for the next request; keep it under the upstream\'s own idle limit (Node\'s http server: 5000); 0: a new connection per request',
    apply: (o, raw) => { o.upstreamKeepAliveMs = integer('upstream-keep-alive-ms', raw, 0); },
  },
  {
    long: 'log-level', value: { name: 'LEVEL' }, commands: ['serve'], fallback: 'info',
    summary: `JSON log lines on standard error from this level: ${LOG_LEVEL_CHOICES.join(', ')}`,
    apply: (o, raw) => {
      const found = LOG_LEVEL_CHOICES.find((l) => l === raw);
      if (!found) throw new CliError(`--log-level must be one of ${LOG_LEVEL_CHOICES.join(', ')}, got ${JSON.stringify(raw ?? '')}`);
      o.logLevel = found;
    },
  },
];

/** Every flag of every command. Help lists each command's in this order. */
export const FLAGS: readonly FlagSpec[] = [...READING_FLAGS, ...SERVE_FLAGS];

/** What the command line asks for. */
export type Invocation =
  | { readonly kind: 'help'; readonly command?: CommandName }
  | { readonly kind: 'version' }
  | { readonly kind: 'run'; readonly command: CommandName; readonly file?: string; readonly options: CliOptions };

/** Edit distance (insertions, deletions, substitutions) between two words. */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length];
}

/** ` (did you mean X?)` for the nearest known word within a third of its length, else ''. */
function didYouMean(word: string, known: readonly string[]): string {
  let best: string | undefined;
  let bestD = Infinity;
  for (const k of known) {
    const d = distance(word, k);
    if (d < bestD) { best = k; bestD = d; }
  }
  return best !== undefined && bestD <= Math.max(2, Math.floor(best.length / 3)) ? ` (did you mean ${best}?)` : '';
}

const isCommand = (word: string): word is CommandName => (COMMANDS as readonly string[]).includes(word);

function commandFrom(word: string | undefined, context: string): CommandName {
  if (word !== undefined && isCommand(word)) return word;
  const got = word === undefined ? '' : `, got ${JSON.stringify(word)}`;
  const hint = word === undefined ? '' : didYouMean(word, COMMANDS);
  throw new CliError(`${context}: expected ${listOr(COMMANDS)}${got}${hint || ' (see ctxfold --help)'}`);
}

/** The command's own spec of a flag (a flag may mean a little differently under serve, with its own help line). */
function findFlag(command: CommandName, word: string): FlagSpec {
  const byName = (f: FlagSpec) => (word.startsWith('--') ? `--${f.long}` === word : f.short !== undefined && `-${f.short}` === word);
  const spec = FLAGS.find((f) => byName(f) && f.commands.includes(command));
  if (spec) return spec;
  if (!FLAGS.some(byName)) {
    const hint = word.startsWith('--') ? didYouMean(word, FLAGS.filter((f) => f.commands.includes(command)).map((f) => `--${f.long}`)) : '';
    throw new CliError(`unknown option ${word}${hint || ` (see ctxfold ${command} --help)`}`);
  }
  throw new CliError(`${word} is not an option of ${command} (see ctxfold ${command} --help)`);
}

/**
 * Reads `ctxfold COMMAND [options] [FILE|-]` (`serve` takes no FILE), `ctxfold help [COMMAND]`, `--help` and `--version`.
 * Throws a `CliError` (exit 2) naming the flag and what was wrong; never returns half-checked options.
 */
export function parseArgs(argv: readonly string[]): Invocation {
  const [first, ...rest] = argv;
  if (first === undefined) throw new CliError(`missing command: expected ${listOr(COMMANDS)} (see ctxfold --help)`);
  if (first === '-h' || first === '--help') return { kind: 'help' };
  if (first === '--version') return { kind: 'version' };
  if (first === 'help') return rest.length === 0 ? { kind: 'help' } : { kind: 'help', command: commandFrom(rest[0], 'help') };
  const command = commandFrom(first, 'unknown command');

  const options = defaultCliOptions(command);
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
  if (command === 'serve' && files.length > 0) throw new CliError(`serve reads no FILE, got ${JSON.stringify(files[0])} (see ctxfold serve --help)`);
  if (files.length > 1) throw new CliError(`expected at most one FILE, got ${files.map((f) => JSON.stringify(f)).join(' and ')}`);
  return { kind: 'run', command, file: files[0], options };
}
