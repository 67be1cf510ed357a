import type { FormatName } from '../formats/lens.js';
import { SUPPORTED_FORMATS } from '../formats/registry.js';
import { PROFILES } from '../formats/profiles.js';
import { DEFAULT_COLLAPSE_MIN_CHARS, DEFAULT_KEEP_FIRST, DEFAULT_KEEP_LAST, DEFAULT_LOW_WATER_MARK, type ToolOutputTrim } from '../runtime/options.js';
import { defaultMaxQueuedJobs } from '../runtime/queue-bound.js';
import { CliError } from './cli-error.js';

/** The subcommands: three read messages (`inspect` writes a page of what a fold did), `serve` runs the proxy. */
export type CommandName = 'compress' | 'validate' | 'inspect' | 'serve';

/** The commands, in the order help lists them. */
export const COMMANDS: readonly CommandName[] = ['compress', 'validate', 'inspect', 'serve'];

/** `a, b or c`: how messages list the commands and choices. */
export function listOr(words: readonly string[]): string {
  return words.length <= 1 ? words.join('') : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;
}

/**
 * What the commands read from the command line, checked. Absent means the library's default. A
 * field that is a library option has the library's name (`maxContextTokens`, as
 * `compressContext` and `startServer` take it), and its flag is that name in kebab-case.
 */
export interface CliOptions {
  maxContextTokens?: number;
  keepFirst?: number;
  keepLast?: number;
  /** `--no-keep-last-yields`: false, the kept tail is sent whole; unset or `--keep-last-yields`: it gives way to `--max-context-tokens`. */
  keepLastYields?: boolean;
  /** `--low-water-mark`: a fold drops to this share of the budget (0 < x <= 1). */
  lowWaterMark?: number;
  compressionThresholdTokens?: number;
  toolOutputTrim?: ToolOutputTrim;
  model?: string;
  format: FormatName | 'auto';
  /** Provider profile to check against (and whose id rules repair applies). */
  provider?: string;
  repair: boolean;
  pretty: boolean;
  /** Do not print repairs, warnings nor progress on standard error. */
  quiet: boolean;
  summarizer: SummarizerChoice;
  /** serve: the upstream base URL, and where and how the proxy listens, stores, logs. */
  upstream?: string;
  port?: number;
  host?: string;
  store?: string;
  /** serve: answer ctxfold_recall calls (the store keeps originals). */
  recall?: boolean;
  /** serve: serve the chats page at GET /ui. */
  ui?: boolean;
  config?: string;
  upstreamKeyEnv?: string;
  tenantHeader?: string;
  chatIdHeader?: string;
  maxBodyBytes?: number;
  bodyMemoryBytes?: number;
  upstreamTimeoutMs?: number;
  upstreamKeepAliveMs?: number;
  /** serve: summary jobs waiting for a slot, at most, per window. */
  maxQueuedJobs?: number;
  /** serve: threads folding large bodies and their jobs (0: none). */
  foldThreads?: number;
  /** serve: bodies of at least this many bytes fold in a thread. */
  foldThreadMinBytes?: number;
  /** serve: processes sharing the port. */
  workers?: number;
  logLevel?: string;
  /** inspect: the HTML page to write. */
  html?: string;
}

/** Who writes summaries during `compress`: nobody, the offline extractive summarizer, or an LLM endpoint. */
export type SummarizerChoice = 'none' | 'extractive' | 'llm';

/** The `--summarizer` values accepted. */
export const SUMMARIZER_CHOICES: readonly SummarizerChoice[] = ['none', 'extractive', 'llm'];

/** The `--summarizer` values `inspect` takes: it runs offline, so never an LLM endpoint. */
export const INSPECT_SUMMARIZERS: readonly SummarizerChoice[] = ['none', 'extractive'];

/** The options before any flag is applied (serve summarizes in the background by default, with the extractive summarizer). */
export function defaultCliOptions(command: CommandName = 'compress'): CliOptions {
  return { format: 'auto', repair: true, pretty: false, quiet: false, summarizer: command === 'serve' ? 'extractive' : 'none' };
}

/** What help says of a flag under one command: one line, and the default as help shows it. */
export interface FlagHelp {
  readonly summary: string;
  readonly fallback?: string;
}

/**
 * One flag, declared once for every command that takes it. `value` says whether it takes one:
 * `optional` values are taken from the next word only when it matches `accepts` (so
 * `--tool-output-trim FILE` leaves FILE as the input), and always from `--flag=value`. `apply`
 * checks the raw text and sets the option (`flag` is the name as typed, for its error); `help`
 * names the commands that take the flag, each with its help line. Parsing and help both read this
 * table, so what help says and what the parser does cannot drift apart. `deprecated` lists earlier
 * names, still accepted (each prints one line naming `long`) and never shown in help.
 */
export interface FlagSpec {
  readonly long: string;
  readonly short?: string;
  readonly deprecated?: readonly string[];
  readonly value?: { readonly name: string; readonly optional?: boolean; readonly accepts?: RegExp };
  readonly help: Partial<Readonly<Record<CommandName, FlagHelp>>>;
  readonly apply: (options: CliOptions, raw: string | undefined, flag: string) => void;
}

/** True when `command` takes the flag. */
export const takes = (flag: FlagSpec, command: CommandName): boolean => flag.help[command] !== undefined;

const INTEGER = /^\d+$/;

function integer(flag: string, raw: string | undefined, min: 0 | 1, max = Number.MAX_SAFE_INTEGER): number {
  const n = raw !== undefined && INTEGER.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    const range = max < Number.MAX_SAFE_INTEGER ? `an integer from ${min} to ${max}` : `a ${min === 1 ? 'positive' : 'non-negative'} integer`;
    throw new CliError(`${flag} must be ${range}, got ${JSON.stringify(raw ?? '')}`);
  }
  return n;
}

const DECIMAL = /^(\d+(\.\d*)?|\.\d+)$/;

/** A share in (0, 1], written as a plain decimal (`0.7`, `.5`, `1`). */
function share(flag: string, raw: string | undefined): number {
  const n = raw !== undefined && DECIMAL.test(raw) ? Number(raw) : NaN;
  if (!(n > 0 && n <= 1)) throw new CliError(`${flag} must be a number above 0 and at most 1, got ${JSON.stringify(raw ?? '')}`);
  return n;
}

function text(flag: string, raw: string | undefined, what: string): string {
  if (raw === undefined || raw === '') throw new CliError(`${flag} needs ${what}, got ""`);
  return raw;
}

function choice<T extends string>(flag: string, raw: string | undefined, choices: readonly T[]): T {
  const found = choices.find((c) => c === raw);
  if (!found) throw new CliError(`${flag} must be one of ${choices.join(', ')}, got ${JSON.stringify(raw ?? '')}`);
  return found;
}

/** The `--log-level` values (pino's levels). */
export const LOG_LEVEL_CHOICES = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/** The `--store` forms. */
const STORE_FORMS = 'sqlite:PATH, redis://HOST:PORT or memory';

/** The `--format` values accepted: the formats that ship, and `auto`. */
export const FORMAT_CHOICES: readonly (FormatName | 'auto')[] = [...SUPPORTED_FORMATS, 'auto'];

const YIELDS_TAIL = 'then the tool rounds after the last user message, oldest first (never that message, never the newest turn), and a view that fits without yielding is the same';

/** Every flag of every command, once. Help lists each command's in this order. */
export const FLAGS: readonly FlagSpec[] = [
  {
    long: 'upstream', value: { name: 'URL' },
    help: { serve: { summary: 'required: base URL of the API to forward to, with its version, as an SDK\'s baseURL (https://api.openai.com/v1, http://127.0.0.1:8000/v1); the proxy\'s /v1/PATH goes to URL/PATH' } },
    apply: (o, raw, flag) => { o.upstream = text(flag, raw, 'a URL'); },
  },
  {
    long: 'port', value: { name: 'N' },
    help: { serve: { summary: 'port to listen on; 0 picks a free one (the bound URL is printed on standard output)', fallback: '8787' } },
    apply: (o, raw, flag) => { o.port = integer(flag, raw, 0, 65_535); },
  },
  {
    long: 'host', value: { name: 'ADDR' },
    help: { serve: { summary: 'address to listen on (0.0.0.0: every interface)', fallback: '127.0.0.1' } },
    apply: (o, raw, flag) => { o.host = text(flag, raw, 'an address'); },
  },
  {
    long: 'max-context-tokens', deprecated: ['max-tokens'], value: { name: 'N' },
    help: {
      compress: {
        summary: 'token budget for the view, request overhead included; if the head, system messages, the last user message and the newest turn alone exceed it (the whole kept tail, with --no-keep-last-yields), ctxfold.overBudget is true',
        fallback: 'no limit',
      },
      inspect: { summary: 'token budget for the view, as compress takes it; the page\'s token bar shows it as the window', fallback: 'no limit' },
      serve: {
        summary: 'context window of every model without its own --config entry (that entry is more specific and wins); it wins over ctxfold\'s table of known models (each request\'s max_tokens is kept free for the reply)',
        fallback: 'none: histories of such models are repaired, never cut (a summary the chat already has from a model with a window still stands in for what it covers)',
      },
    },
    apply: (o, raw, flag) => { o.maxContextTokens = integer(flag, raw, 1); },
  },
  {
    long: 'config', value: { name: 'FILE' },
    help: { serve: { summary: 'JSON file of per-model limits, first in precedence: {"models": {"gpt-4o": {"maxContextTokens": 128000, "compressionThresholdTokens": 90000}}}', fallback: 'none' } },
    apply: (o, raw, flag) => { o.config = text(flag, raw, 'a file'); },
  },
  {
    long: 'compression-threshold-tokens', deprecated: ['threshold'], value: { name: 'N' },
    help: {
      compress: { summary: 'when the history (with any summary, before trimming) is at or above N tokens, report the messages to summarize next in ctxfold.summarize', fallback: 'none' },
      inspect: { summary: 'as compress: the history at or above N tokens is summarized (with --summarizer extractive); the token bar marks it', fallback: 'none' },
      serve: { summary: 'after a response, summarize the chat in the background once its history reaches N tokens', fallback: '75% of each model\'s window' },
    },
    apply: (o, raw, flag) => { o.compressionThresholdTokens = integer(flag, raw, 1); },
  },
  {
    long: 'keep-first', value: { name: 'N' },
    help: {
      compress: { summary: 'messages at the start always sent, rounded out to whole groups', fallback: String(DEFAULT_KEEP_FIRST) },
      inspect: { summary: 'messages at the start always sent, rounded out to whole groups (the page\'s head)', fallback: String(DEFAULT_KEEP_FIRST) },
      serve: { summary: 'messages at the start always sent, rounded out to whole groups', fallback: String(DEFAULT_KEEP_FIRST) },
    },
    apply: (o, raw, flag) => { o.keepFirst = integer(flag, raw, 0); },
  },
  {
    long: 'keep-last', value: { name: 'N' },
    help: {
      compress: { summary: 'messages at the end sent as they are (never summarized or cleared), rounded out to whole groups; with --max-context-tokens too small for them, their oldest turns give way (see --no-keep-last-yields)', fallback: String(DEFAULT_KEEP_LAST) },
      inspect: { summary: 'messages at the end sent as they are, rounded out to whole groups (the page\'s kept tail); as compress takes it', fallback: String(DEFAULT_KEEP_LAST) },
      serve: { summary: "messages at the end sent as they are (never summarized or cleared), rounded out to whole groups; when they alone are over a model's window, their oldest turns give way (see --no-keep-last-yields)", fallback: String(DEFAULT_KEEP_LAST) },
    },
    apply: (o, raw, flag) => { o.keepLast = integer(flag, raw, 0); },
  },
  {
    long: 'no-keep-last-yields',
    help: {
      compress: { summary: `send the --keep-last messages whole even when they alone are over --max-context-tokens (ctxfold.overBudget is then true); by default their oldest turns give way, ${YIELDS_TAIL}`, fallback: 'the kept tail yields' },
      inspect: { summary: 'as compress: the --keep-last messages are sent whole even when they alone are over --max-context-tokens', fallback: 'the kept tail yields' },
      serve: { summary: `send the --keep-last messages whole even when they alone are over a model's window (the upstream then refuses the request); by default their oldest turns give way, ${YIELDS_TAIL}`, fallback: 'the kept tail yields' },
    },
    apply: (o) => { o.keepLastYields = false; },
  },
  {
    long: 'keep-last-yields',
    help: {
      compress: { summary: 'the default, accepted so that scripts written for earlier versions run: the kept tail gives way to --max-context-tokens', fallback: 'on' },
      inspect: { summary: 'the default: the kept tail gives way to --max-context-tokens', fallback: 'on' },
      serve: { summary: 'the default, accepted so that scripts written for earlier versions run: the kept tail gives way to the window', fallback: 'on' },
    },
    apply: (o) => { o.keepLastYields = true; },
  },
  {
    long: 'low-water-mark', value: { name: 'X' },
    help: {
      compress: { summary: 'fold in steps: a view that must drop turns goes on to a cut point, and cut points lie about (1 - X) of the budget apart, so a chat that grows by appending keeps its view prefix (which providers cache) until the next step; 1 drops only what must go', fallback: String(DEFAULT_LOW_WATER_MARK) },
      inspect: { summary: 'fold in steps, as compress does: a view that must drop turns goes on to a cut point about (1 - X) of the budget below it', fallback: String(DEFAULT_LOW_WATER_MARK) },
      serve: { summary: "fold in steps: a view over a model's window drops to about X of it (a background summary folds to X of the threshold), so the next requests append to the same prefix, which providers cache; 1 drops only what must go", fallback: String(DEFAULT_LOW_WATER_MARK) },
    },
    apply: (o, raw, flag) => { o.lowWaterMark = share(flag, raw); },
  },
  {
    long: 'tool-output-trim', deprecated: ['trim-tool-output'], value: { name: 'CHARS', optional: true, accepts: /^-?\d+$/ },
    help: {
      compress: { summary: `when over --max-context-tokens, clear old tool results longer than CHARS characters; CHARS defaults to ${DEFAULT_COLLAPSE_MIN_CHARS}`, fallback: 'off' },
      inspect: { summary: `when over --max-context-tokens, clear old tool results longer than CHARS characters (the page marks each); CHARS defaults to ${DEFAULT_COLLAPSE_MIN_CHARS}`, fallback: 'off' },
      serve: { summary: `when a history is over its window, clear old tool results longer than CHARS characters; CHARS defaults to ${DEFAULT_COLLAPSE_MIN_CHARS}`, fallback: 'off' },
    },
    apply: (o, raw, flag) => { o.toolOutputTrim = raw === undefined ? true : { minChars: integer(flag, raw, 0) }; },
  },
  {
    long: 'model', value: { name: 'NAME' },
    help: {
      compress: { summary: "count tokens with this model's tiktoken encoding; an unknown model gets the default", fallback: 'o200k_base' },
      inspect: { summary: "count tokens with this model's tiktoken encoding; an unknown model gets the default", fallback: 'o200k_base' },
      serve: { summary: "count tokens with this model's tiktoken encoding; an unknown model gets the default", fallback: 'o200k_base' },
    },
    apply: (o, raw, flag) => { o.model = text(flag, raw, 'a model name'); },
  },
  {
    long: 'format', value: { name: 'FORMAT' },
    help: {
      compress: { summary: `message format of the input: ${FORMAT_CHOICES.join(', ')}; auto detects it by evidence`, fallback: 'auto' },
      inspect: { summary: `message format of the input: ${FORMAT_CHOICES.join(', ')}; auto detects it by evidence`, fallback: 'auto' },
      validate: { summary: `message format of the input: ${FORMAT_CHOICES.join(', ')}; auto detects it by evidence (a named format the messages' evidence contradicts is a warning on standard error)`, fallback: 'auto' },
    },
    apply: (o, raw, flag) => {
      const found = FORMAT_CHOICES.find((f) => f === raw);
      if (!found) throw new CliError(`${flag} must be one of ${FORMAT_CHOICES.join(', ')} (the formats that ship), got ${JSON.stringify(raw ?? '')}`);
      o.format = found;
    },
  },
  {
    long: 'provider', value: { name: 'NAME' },
    help: {
      compress: { summary: `provider whose tool-calling rules to check: ${Object.keys(PROFILES).join(', ')}; repair also fits call ids to it, and a view that breaks one of its rules exits 1`, fallback: "the format's own" },
      inspect: { summary: `provider whose tool-calling rules the page checks the view against: ${Object.keys(PROFILES).join(', ')}; repair also fits call ids to it`, fallback: "the format's own" },
      validate: { summary: `provider whose tool-calling rules to check: ${Object.keys(PROFILES).join(', ')}`, fallback: "the format's own" },
    },
    apply: (o, raw, flag) => {
      if (raw === undefined || !Object.hasOwn(PROFILES, raw)) throw new CliError(`${flag} must be one of ${Object.keys(PROFILES).join(', ')}, got ${JSON.stringify(raw ?? '')}`);
      o.provider = raw;
    },
  },
  {
    long: 'summarizer', value: { name: SUMMARIZER_CHOICES.join('|') },
    help: {
      compress: { summary: 'at or above --compression-threshold-tokens, summarize the oldest messages after the head right away and send the summary instead of them (a summary that had to leave facts out is made again, wider: up to three summarizer calls); llm reads CTXFOLD_LLM_BASE_URL, CTXFOLD_LLM_API_KEY, CTXFOLD_LLM_MODEL', fallback: 'none' },
      inspect: { summary: `${INSPECT_SUMMARIZERS.join(' or ')}: extractive summarizes at or above --compression-threshold-tokens as compress does, offline; the page shows the summary and links each ledger line to its message`, fallback: 'none' },
      serve: { summary: 'who writes the background summaries; llm reads CTXFOLD_LLM_BASE_URL, CTXFOLD_LLM_API_KEY, CTXFOLD_LLM_MODEL; none: views are cut, never summarized', fallback: 'extractive' },
    },
    apply: (o, raw, flag) => { o.summarizer = choice(flag, raw, SUMMARIZER_CHOICES); },
  },
  {
    long: 'no-repair',
    help: {
      compress: { summary: 'do not first fix a broken history: unanswered calls, orphan or duplicate results', fallback: 'repair on' },
      inspect: { summary: 'do not first fix a broken history (the page then shows the provider\'s objections)', fallback: 'repair on' },
      serve: { summary: 'do not first fix a broken history: unanswered calls, orphan or duplicate results', fallback: 'repair on' },
    },
    apply: (o) => { o.repair = false; },
  },
  {
    long: 'quiet', short: 'q',
    help: {
      compress: { summary: 'do not print what repair changed (one line each), warnings nor progress on standard error; the report in the output still says it; errors (bad records, views that break --provider) are still printed', fallback: 'repairs, warnings, and progress when standard error is a terminal' },
      validate: { summary: 'do not print warnings nor progress on standard error; violations and bad records are still printed', fallback: 'warnings, and progress when standard error is a terminal' },
      inspect: { summary: 'do not print the line naming the page written; bad records are still printed', fallback: 'one line on standard output' },
    },
    apply: (o) => { o.quiet = true; },
  },
  {
    long: 'pretty',
    help: {
      compress: { summary: 'indent the JSON output; ignored for JSONL output', fallback: 'compact' },
      validate: { summary: 'indent the JSON output; ignored for JSONL output', fallback: 'compact' },
    },
    apply: (o) => { o.pretty = true; },
  },
  {
    long: 'html', value: { name: 'FILE' },
    help: { inspect: { summary: 'required: write the page to FILE, one self-contained HTML file (no network: inline styles, script and data); a JSONL input gives one section per history, with an index at the top' } },
    apply: (o, raw, flag) => { o.html = text(flag, raw, 'a file to write the page to'); },
  },
  {
    long: 'store', value: { name: 'SPEC' },
    help: { serve: { summary: `where summaries live: ${STORE_FORMS} (Redis for several proxy processes)`, fallback: 'sqlite:./ctxfold.db' } },
    apply: (o, raw, flag) => {
      const spec = text(flag, raw, STORE_FORMS);
      if (spec !== 'memory' && !/^sqlite:.+/.test(spec) && !/^rediss?:\/\/[^/\s]/.test(spec)) throw new CliError(`${flag} must be ${STORE_FORMS}, got ${JSON.stringify(spec)}`);
      o.store = spec;
    },
  },
  {
    long: 'recall',
    help: { serve: { summary: 'keep the original messages each summary replaces and, on chat/completions, responses and messages (streamed or not), offer the ctxfold_recall tool and answer its calls: at most 3 rounds per request, then once more with tool_choice none if the model still only recalls (every --store keeps them: memory, SQLite or Redis)', fallback: 'off' } },
    apply: (o) => { o.recall = true; },
  },
  {
    long: 'ui',
    help: { serve: { summary: 'serve a page at GET /ui listing the caller\'s chats and one chat\'s summary, job and last token split; the page holds no data and is served without a key: its script asks for the API key (kept in the tab, sent as Authorization to this proxy only) and reads GET /v1/ctxfold/chats, which answers only the chats of that key (401 without one)', fallback: 'off: /ui is a 404' } },
    apply: (o) => { o.ui = true; },
  },
  {
    long: 'upstream-key-env', value: { name: 'NAME' },
    help: { serve: { summary: 'the proxy holds the upstream key: read it from environment variable NAME and send it on every request in place of the caller\'s; tenants then come from --tenant-header', fallback: 'forward the caller\'s key' } },
    apply: (o, raw, flag) => {
      const name = text(flag, raw, 'an environment variable name');
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new CliError(`${flag} must be an environment variable name (letters, digits, _), got ${JSON.stringify(name)}`);
      o.upstreamKeyEnv = name;
    },
  },
  {
    long: 'tenant-header', value: { name: 'NAME' },
    help: { serve: { summary: 'header that names the tenant (chats of different tenants never share state); without --upstream-key-env it only splits a caller key\'s chats further', fallback: 'x-ctxfold-tenant' } },
    apply: (o, raw, flag) => { o.tenantHeader = text(flag, raw, 'a header name').toLowerCase(); },
  },
  {
    long: 'chat-id-header', value: { name: 'NAME' },
    help: { serve: { summary: 'header that names the chat, read before x-ctxfold-chat-id (Open WebUI forwards x-openwebui-chat-id)', fallback: 'x-ctxfold-chat-id' } },
    apply: (o, raw, flag) => { o.chatIdHeader = text(flag, raw, 'a header name').toLowerCase(); },
  },
  {
    long: 'max-body-bytes', value: { name: 'N' },
    help: { serve: { summary: 'largest request body accepted; a larger one is answered 413', fallback: String(32 * 1024 * 1024) } },
    apply: (o, raw, flag) => { o.maxBodyBytes = integer(flag, raw, 1); },
  },
  {
    long: 'body-memory-bytes', value: { name: 'N' },
    help: { serve: { summary: 'bytes of recent request bodies kept, so a chat\'s next body parses only what follows the bytes it shares with its last one (0: parse every body whole)', fallback: String(64 * 1024 * 1024) } },
    apply: (o, raw, flag) => { o.bodyMemoryBytes = integer(flag, raw, 0); },
  },
  {
    long: 'max-queued-jobs', value: { name: 'N' },
    help: { serve: { summary: 'summary jobs waiting for a slot, at most, per window; when full, a request is served as always and its chat\'s job is not queued (it asks again on its next request); 0: run a job only on a free slot', fallback: `${defaultMaxQueuedJobs(2)} (16 per concurrent job)` } },
    apply: (o, raw, flag) => { o.maxQueuedJobs = integer(flag, raw, 0); },
  },
  {
    long: 'fold-threads', value: { name: 'N' },
    help: { serve: { summary: 'threads that fold large request bodies, and their summary jobs, off the thread serving every request; 0: fold everything there (as --recall does; with --summarizer llm only the requests fold in threads)', fallback: 'one per core beyond the first, 1 to 4' } },
    apply: (o, raw, flag) => { o.foldThreads = integer(flag, raw, 0); },
  },
  {
    long: 'fold-thread-min-bytes', value: { name: 'N' },
    help: { serve: { summary: 'request bodies of at least this many bytes fold in a thread; smaller ones fold where they are served (a thread hop costs more than folding them)', fallback: String(256 * 1024) } },
    apply: (o, raw, flag) => { o.foldThreadMinBytes = integer(flag, raw, 0); },
  },
  {
    long: 'workers', value: { name: 'N' },
    help: { serve: { summary: 'processes serving the port (node:cluster), to use every core; more than 1 needs --store redis://HOST:PORT, which keeps one summary job per chat across them', fallback: '1' } },
    apply: (o, raw, flag) => { o.workers = integer(flag, raw, 1); },
  },
  {
    long: 'upstream-timeout-ms', value: { name: 'N' },
    help: { serve: { summary: 'longest the upstream may stay silent (before answering, or between two chunks of a stream); then 504, or the stream is cut', fallback: '600000' } },
    apply: (o, raw, flag) => { o.upstreamTimeoutMs = integer(flag, raw, 1); },
  },
  {
    long: 'upstream-keep-alive-ms', value: { name: 'N' },
    help: { serve: { summary: 'how long an idle connection to the upstream is kept for the next request; keep it under the upstream\'s own idle limit (Node\'s http server: 5000); 0: a new connection per request', fallback: '4000' } },
    apply: (o, raw, flag) => { o.upstreamKeepAliveMs = integer(flag, raw, 0); },
  },
  {
    long: 'log-level', value: { name: 'LEVEL' },
    help: { serve: { summary: `JSON log lines on standard error from this level: ${LOG_LEVEL_CHOICES.join(', ')}`, fallback: 'info' } },
    apply: (o, raw, flag) => { o.logLevel = choice(flag, raw, LOG_LEVEL_CHOICES); },
  },
];

/** The line a deprecated flag prints (once per run, on standard error, after `ctxfold: `). */
export const deprecationLine = (old: string, flag: FlagSpec): string => `--${old} is deprecated; use --${flag.long}`;

/** What the command line asks for. `notices`: one line per deprecated flag used (each named once), for standard error. */
export type Invocation =
  | { readonly kind: 'help'; readonly command?: CommandName }
  | { readonly kind: 'version' }
  | { readonly kind: 'run'; readonly command: CommandName; readonly file?: string; readonly options: CliOptions; readonly notices: readonly string[] };

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

/** A flag as found: its spec, and the deprecated name it was given by, if any. */
interface FoundFlag {
  readonly spec: FlagSpec;
  readonly old?: string;
}

/** The spec a word names: by its name, a deprecated name, or (`-q`) its short name. */
function named(word: string): (f: FlagSpec) => string | boolean {
  return (f) => {
    if (!word.startsWith('--')) return f.short !== undefined && `-${f.short}` === word;
    if (`--${f.long}` === word) return true;
    return f.deprecated?.find((d) => `--${d}` === word) ?? false;
  };
}

/** The command's spec of a flag (one spec per flag; under each command it has its own help line). */
function findFlag(command: CommandName, word: string): FoundFlag {
  const match = named(word);
  const spec = FLAGS.find((f) => match(f) !== false);
  if (!spec) {
    // Deprecated names are candidates too, but the hint names the flag to use now.
    const candidates = word.startsWith('--') ? FLAGS.filter((f) => takes(f, command)).flatMap((f) => [f.long, ...(f.deprecated ?? [])].map((n) => ({ name: `--${n}`, use: `--${f.long}` }))) : [];
    const hint = didYouMean(word, candidates.map((c) => c.name));
    const use = candidates.find((c) => hint === ` (did you mean ${c.name}?)`)?.use;
    throw new CliError(`unknown option ${word}${use ? ` (did you mean ${use}?)` : ` (see ctxfold ${command} --help)`}`);
  }
  if (!takes(spec, command)) throw new CliError(`${word} is not an option of ${command} (see ctxfold ${command} --help)`);
  const old = match(spec);
  return typeof old === 'string' ? { spec, old } : { spec };
}

/**
 * Reads `ctxfold COMMAND [options] [FILE|-]` (`serve` takes no FILE), `ctxfold help [COMMAND]`, `--help` and `--version`.
 * Throws a `CliError` (exit 2) naming the flag and what was wrong; never returns half-checked options.
 * A deprecated flag name works as the flag does and adds one line to `notices`, however often it is given.
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
  const notices: string[] = [];
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
    const { spec, old } = findFlag(command, name);
    if (old !== undefined) {
      const line = deprecationLine(old, spec);
      if (!notices.includes(line)) notices.push(line);
    }
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
    spec.apply(options, raw, name);
  }
  if (command === 'inspect' && options.html === undefined) throw new CliError('inspect needs --html FILE (the page to write; see ctxfold inspect --help)');
  if (command === 'serve' && files.length > 0) throw new CliError(`serve reads no FILE, got ${JSON.stringify(files[0])} (see ctxfold serve --help)`);
  if (files.length > 1) throw new CliError(`expected at most one FILE, got ${files.map((f) => JSON.stringify(f)).join(' and ')}`);
  return { kind: 'run', command, file: files[0], options, notices };
}
