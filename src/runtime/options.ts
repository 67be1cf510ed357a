import { z } from 'zod';
import { InputError } from '../errors.js';
import type { PlanOptions } from '../core/plan.js';
import type { SummaryShortener } from '../core/summary-fit.js';
import type { FormatName } from '../formats/lens.js';
import { SUPPORTED_FORMATS } from '../formats/registry.js';
import { profileFor } from '../formats/profiles.js';
import type { Profile } from '../core/validate/validate.js';
import type { TokenCounter } from '../tokens/counter.js';
import type { HistoryCache, Recall } from './history-cache.js';
import { commonCompressOptions } from './options-fast-path.js';

/**
 * Every option ctxfold takes is declared here, once, and checked at the boundary by one schema:
 * a wrong value or an unknown name is an `InputError` naming `options.<name>` and the rule
 * (`options.maxTokens: unknown option; did you mean maxContextTokens?`). Nothing past this file
 * reads an unchecked option.
 */

/** Collapse bulky old tool results when over budget: `true` uses the default threshold. */
export type ToolOutputTrim = boolean | { readonly minChars?: number };

/** A summary already made for this chat: its text and the ids of the messages it replaces. */
export interface SummaryInput {
  readonly text: string;
  readonly coveredIds: readonly string[];
  /**
   * The tokens a view shortens `text` to (the same text every time) once the whole of it no longer
   * fits beside the turns after it; the threshold counts the summary at most at this size. A
   * stored summary sets it when it was written longer than a view holds for long (`ChatState.compactTokens`).
   */
  readonly compactTokens?: number;
}

/** Default character threshold for `toolOutputTrim: true`. */
export const DEFAULT_COLLAPSE_MIN_CHARS = 2000;

/** Default `lowWaterMark`: a fold drops to 70% of the budget, leaving 30% for the next turns to append. */
export const DEFAULT_LOW_WATER_MARK = 0.7;

/** Default `keepFirst` / `keepLast`. */
export const DEFAULT_KEEP_FIRST = 1;
export const DEFAULT_KEEP_LAST = 6;

function describe(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  return typeof value === 'object' ? 'an object' : typeof value;
}

const integer = (min: number) => {
  const error = (issue: { input?: unknown }) => `must be an integer >= ${min}, got ${describe(issue.input)}`;
  return z.number({ error }).int({ error }).min(min, { error }).optional();
};

const withMethods = (what: string, methods: readonly string[]) => z.custom<unknown>(
  (v) => typeof v === 'object' && v !== null && methods.every((m) => typeof (v as Record<string, unknown>)[m] === 'function'),
  { error: (issue) => `must be ${what} (an object with ${methods.map((m) => `${m}()`).join(', ')}), got ${describe(issue.input)}` },
).optional();

const planningShape = {
  keepFirst: integer(0),
  keepLast: integer(0),
  keepLastYields: z.boolean({ error: (issue) => `must be true or false, got ${describe(issue.input)}` }).optional(),
  maxContextTokens: integer(1),
  compressionThresholdTokens: integer(1),
  toolOutputTrim: z.union([z.boolean(), z.strictObject({ minChars: integer(0) })], {
    error: (issue) => `must be true, false or { minChars }, got ${describe(issue.input)}`,
  }).optional(),
  summaryRole: z.enum(['user', 'system'], { error: (issue) => `must be "user" or "system", got ${describe(issue.input)}` }).optional(),
  reserveOutputTokens: integer(0),
  lowWaterMark: z.number({ error: (issue) => `must be a number in (0, 1], got ${describe(issue.input)}` })
    .gt(0, { error: (issue) => `must be a number in (0, 1], got ${describe(issue.input)}` })
    .lte(1, { error: (issue) => `must be a number in (0, 1], got ${describe(issue.input)}` }).optional(),
};

const formatShape = {
  format: z.enum([...SUPPORTED_FORMATS, 'auto'] as unknown as [string, ...string[]], {
    error: (issue) => `must be one of ${[...SUPPORTED_FORMATS, 'auto'].join(', ')}, got ${describe(issue.input)}`,
  }).optional(),
  model: z.string({ error: (issue) => `must be a model name (a string), got ${describe(issue.input)}` }).optional(),
  counter: withMethods('a TokenCounter from createTokenCounter()', ['text', 'message']),
  repair: z.boolean({ error: (issue) => `must be true or false, got ${describe(issue.input)}` }).optional(),
};

const compressSchema = z.strictObject({
  ...planningShape,
  ...formatShape,
  summary: z.strictObject({
    text: z.string({ error: (issue) => `must be a string, got ${describe(issue.input)}` }),
    coveredIds: z.array(z.string({ error: (issue) => `must be a message id (a string), got ${describe(issue.input)}` }), {
      error: (issue) => `must be an array of message ids, got ${describe(issue.input)}`,
    }),
    compactTokens: z.number({ error: (issue) => `must be a whole number >= 1, got ${describe(issue.input)}` })
      .int({ error: (issue) => `must be a whole number >= 1, got ${describe(issue.input)}` })
      .min(1, { error: (issue) => `must be a whole number >= 1, got ${describe(issue.input)}` }).optional(),
  }, { error: (issue) => `must be { text, coveredIds } or null, got ${describe(issue.input)}` }).nullable().optional(),
  historyCache: withMethods('a HistoryCache from createHistoryCache()', ['recall', 'remember']),
  tools: z.array(z.unknown(), { error: (issue) => `must be the request's array of tool definitions, got ${describe(issue.input)}` }).optional(),
  responseFormat: z.unknown().optional(),
  instructions: z.unknown().optional(),
  provider: z.string({ error: (issue) => `must be a provider profile name, got ${describe(issue.input)}` }).optional(),
  chatId: z.string({ error: (issue) => `must be a non-empty string, got ${describe(issue.input)}` })
    .min(1, { error: () => 'must be a non-empty string, got ""' }).optional(),
});

const compressorSchema = z.strictObject({
  ...planningShape,
  ...formatShape,
  store: withMethods('a StateStore (MemoryStore, SqliteStore or your own)', ['get', 'commit', 'close']),
  summarizer: z.union([z.null(), withMethods('a Summarizer (createExtractiveSummarizer(), createLlmSummarizer(...) or your own)', ['summarize'])], {
    error: (issue) => `must be a Summarizer (an object with summarize()) or null, got ${describe(issue.input)}`,
  }).optional(),
  concurrency: integer(1),
  offload: withMethods('a JobOffload (an object with fold())', ['fold']),
  jobTimeoutMs: integer(1),
  maxQueuedJobs: integer(0),
  summaryFailMode: z.enum(['silent', 'raise'], { error: (issue) => `must be "silent" or "raise", got ${describe(issue.input)}` }).optional(),
  chatId: z.custom<unknown>((v) => typeof v === 'function', { error: (issue) => `must be a function (request) => string | undefined, got ${describe(issue.input)}` }).optional(),
  historyCache: withMethods('a HistoryCache from createHistoryCache()', ['recall', 'remember']),
  calibrate: z.boolean({ error: (issue) => `must be true or false, got ${describe(issue.input)}` }).optional(),
  provider: z.string({ error: (issue) => `must be a provider profile name, got ${describe(issue.input)}` }).optional(),
  recall: z.union([z.boolean(), z.strictObject({ maxTokens: integer(1), rounds: integer(0) })], {
    error: (issue) => `must be true, false or { maxTokens, rounds }, got ${describe(issue.input)}`,
  }).optional(),
});

/** The names an option is often mistaken for, and what it is called here. */
const MISTAKES: Readonly<Record<string, string>> = {
  maxTokens: 'maxContextTokens',
  max_tokens: 'maxContextTokens',
  maxContext: 'maxContextTokens',
  budget: 'maxContextTokens',
  threshold: 'compressionThresholdTokens',
  summarizeAt: 'compressionThresholdTokens',
};

/** Edit distance, for "did you mean". */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length];
}

function unknownOption(key: string, known: readonly string[]): string {
  const camel = key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
  if (camel !== key && known.includes(camel)) {
    return `unknown option; ctxfold's name is ${camel} (for Open WebUI valves, pass them through fromOpenWebUIValves(valves))`;
  }
  const mistaken = MISTAKES[key] ?? MISTAKES[camel];
  if (mistaken && known.includes(mistaken)) return `unknown option; did you mean ${mistaken}?`;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const name of known) {
    const d = distance(camel.toLowerCase(), name.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(best.length / 3))
    ? `unknown option; did you mean ${best}?`
    : `unknown option (known: ${known.join(', ')})`;
}

function parseWith<T>(schema: z.ZodType<T>, known: readonly string[], value: unknown, path: string): T {
  if (value === undefined) value = {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InputError(path, `must be an options object, got ${describe(value)}`);
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0];
    throw new InputError(`${path}.${[...issue.path, key].join('.')}`, unknownOption(key, known));
  }
  throw new InputError([path, ...issue.path.map(String)].join('.'), issue.message);
}

/** Options of `compressContext`: planning options plus format, tokenizer, an existing summary and caches. */
export interface CompressOptions {
  /** Messages at the start that are always sent (rounded out to whole groups). Default 1. */
  keepFirst?: number;
  /** Messages at the end never summarized or cleared (rounded out to whole groups). Default 6. */
  keepLast?: number;
  /**
   * Let the kept tail yield to `maxContextTokens`: when the head, system messages and the last
   * `keepLast` messages alone are over the limit (its bulky results cleared, with
   * `toolOutputTrim`), the tail's oldest turns become droppable (whole groups), then the rounds of
   * tool calls after the last user turn, oldest first: never that turn itself, and never the
   * newest group (what the reply reads). The kept tail also yields to a summary that covers into
   * it (`compressWithSummary` folds the tail's older turns in when their facts would not fit beside
   * it): never past the last user message. Without a summary, a view that fits is the same with it.
   * Default true: a view over the limit is one the provider refuses. False: the last `keepLast`
   * messages are always sent, and a view they push over the limit is reported (`overBudget`).
   */
  keepLastYields?: boolean;
  /**
   * Limit for the view, in tokens (no limit when absent): everything but the head, system messages,
   * the last user message and the newest group yields to it (the kept tail too, unless
   * `keepLastYields` is false); when those alone are over it (their bulky results cleared first
   * with `toolOutputTrim`, all but the newest), the view is sent over it and reported `overBudget`.
   */
  maxContextTokens?: number;
  /**
   * When the view with the current summary, before any trimming, reaches this many tokens, the
   * groups it does not cover yet should be summarized (reported as `summarize`).
   */
  compressionThresholdTokens?: number;
  /**
   * Collapse bulky tool results (at least `minChars` characters, default 2000) when over
   * `maxContextTokens`: those older than the kept tail first; then, if the view is still over once
   * nothing older is left to drop, those of the kept tail, oldest first, never the newest results
   * (those the next reply reads, when no user message follows them). The call/result pair stays. Default off.
   */
  toolOutputTrim?: ToolOutputTrim;
  /** Role of the summary message. Default `user` (accepted by every OpenAI-compatible backend). */
  summaryRole?: 'system' | 'user';
  /**
   * Fold in steps: when a view must drop turns for the budget, it resumes at a cut point, and cut
   * points lie about (1 - lowWaterMark) of the budget apart, placed by each turn's position and
   * size alone (where none lies within two steps, finer ones half as far apart stand in). A chat
   * that grows by appending then keeps the same view prefix (which providers cache, billing it at
   * a fraction) until the next step, instead of changing it every turn.
   * Default 0.7 (views hold about 70-100% of the budget); 1 drops only what must go. A
   * background summary (`createCompressor`) folds to the same mark of the trigger (the smaller of
   * threshold and budget), its summary included: the summary may grow fold by fold up to half of
   * that view, and the recent turns keep the rest.
   */
  lowWaterMark?: number;
  /**
   * Tokens kept free for the reply (the request's `max_tokens` / `max_completion_tokens`): the
   * view plus this stays within `maxContextTokens`. Default 0 (`wrap` takes it from the request).
   */
  reserveOutputTokens?: number;
  /** The request's tool definitions: counted into the request, as the provider bills them (an estimate that errs high). */
  tools?: readonly unknown[];
  /** The request's `response_format` (a JSON schema): counted into the request. */
  responseFormat?: unknown;
  /**
   * Instructions the request carries outside the message list (Anthropic `system`, Gemini
   * `systemInstruction`, Responses `instructions`): counted into the request, never dropped.
   */
  instructions?: unknown;
  /**
   * The provider the view goes to (`openai`, `anthropic`, `bedrock`, `gemini`, `mistral`, ...):
   * repair also makes call ids fit its rules (unique across the request, its id pattern), and the
   * report lists any rule of its profile the view breaks (`report.violations`).
   */
  provider?: string;
  /** Wire format of `messages`; `auto` (default) detects it (or takes the provider's). */
  format?: FormatName | 'auto';
  /** Model name: picks the tiktoken encoding. */
  model?: string;
  /**
   * Token counter to use (its text cache stays warm across calls). Default: one per encoding for
   * the process, whose text cache is bounded (least recently used texts go first).
   */
  counter?: TokenCounter;
  /** Fix a broken incoming history before planning (default true); what changed is reported. */
  repair?: boolean;
  /** A summary made earlier; applied when the history still starts with the messages it covers. */
  summary?: SummaryInput | null;
  /**
   * Remembers this chat's history (counts, groups, ids) so that its next request costs only the
   * messages it adds. Needs `chatId`. Without it nothing is remembered between calls.
   */
  historyCache?: HistoryCache;
  /** The chat this history belongs to, for `historyCache`. */
  chatId?: string;
}

/** `CompressOptions` after defaults, checked. */
export interface ResolvedCompressOptions {
  readonly plan: Omit<PlanOptions, 'requestOverheadTokens'>;
  readonly format: FormatName | 'auto';
  readonly model?: string;
  readonly counter?: TokenCounter;
  readonly repair: boolean;
  readonly summary?: SummaryInput;
  readonly historyCache?: HistoryCache;
  readonly chatId?: string;
  /** Tokens kept free for the reply; already taken off `plan.maxContextTokens` for planning. */
  readonly reserveOutputTokens: number;
  readonly tools?: readonly unknown[];
  readonly responseFormat?: unknown;
  readonly instructions?: unknown;
  /** The provider profile the view is checked against (and whose id rules repair applies). */
  readonly provider?: Profile<unknown>;
  /** What the history cache already matched for these exact messages (the compressor's slice counting did). */
  readonly recalled?: Recall;
  /**
   * The caller reads the ids of the range the plan asks to summarize (a summary job does): the
   * chat's memory then counts that range's text as read (see `RememberedHistory.textUnread`).
   */
  readonly readsSummarizedIds?: boolean;
  /** How a stored summary is shortened to the room a view has (the summarizer's own rule, when it has one). */
  readonly shortenSummary?: SummaryShortener;
  /** The placeholder of a cleared tool result, given its message's id (a compressor with recall names the tool that reads it again). */
  readonly clearedText?: (messageId: string, chars: number) => string;
}

type PlanningFields = Pick<CompressOptions, 'keepFirst' | 'keepLast' | 'keepLastYields' | 'maxContextTokens' | 'compressionThresholdTokens' | 'toolOutputTrim' | 'summaryRole' | 'reserveOutputTokens' | 'lowWaterMark'>;

/** Planning options with defaults applied. */
export function planOptionsOf(o: PlanningFields): Omit<PlanOptions, 'requestOverheadTokens'> {
  const trim = o.toolOutputTrim ?? false;
  if (o.reserveOutputTokens !== undefined && o.maxContextTokens !== undefined && o.reserveOutputTokens >= o.maxContextTokens) {
    throw new InputError('options.reserveOutputTokens', `must be less than maxContextTokens (${o.maxContextTokens}), got ${o.reserveOutputTokens}: nothing would be left for the messages`);
  }
  return {
    keepFirst: o.keepFirst ?? DEFAULT_KEEP_FIRST,
    keepLast: o.keepLast ?? DEFAULT_KEEP_LAST,
    keepLastYields: o.keepLastYields ?? true,
    // The reply's reserve comes off the window: what is planned is what may be sent.
    maxContextTokens: o.maxContextTokens !== undefined ? o.maxContextTokens - (o.reserveOutputTokens ?? 0) : undefined,
    compressionThresholdTokens: o.compressionThresholdTokens,
    collapseMinChars: trim === true ? DEFAULT_COLLAPSE_MIN_CHARS : trim ? (trim.minChars ?? DEFAULT_COLLAPSE_MIN_CHARS) : undefined,
    summaryRole: o.summaryRole ?? 'user',
    lowWaterMark: o.lowWaterMark ?? DEFAULT_LOW_WATER_MARK,
  };
}

/** `compressContext` options as the schema reads them (an `InputError` when it refuses them); no defaults applied. */
export function schemaCompressOptions(options: unknown): CompressOptions {
  return parseWith(compressSchema, Object.keys(compressSchema.shape), options, 'options') as CompressOptions;
}

/** Checks `compressContext` options (unknown names included) and applies defaults. */
export function resolveCompressOptions(options: unknown): ResolvedCompressOptions {
  // The options most calls pass are checked by hand; anything else goes through the schema.
  const o = commonCompressOptions(options) ?? schemaCompressOptions(options);
  if (o.historyCache !== undefined && o.chatId === undefined) {
    throw new InputError('options.chatId', 'is required with historyCache: the cache remembers one history per chat');
  }
  const provider = o.provider === undefined ? undefined : profileFor(o.provider, 'options.provider') as Profile<unknown>;
  if (provider && o.format !== undefined && o.format !== 'auto' && o.format !== provider.lens.format) {
    throw new InputError('options.provider', `${JSON.stringify(o.provider)} reads ${provider.lens.format} messages, but options.format is ${JSON.stringify(o.format)}`);
  }
  return {
    plan: planOptionsOf(o),
    format: o.format ?? provider?.lens.format ?? 'auto',
    instructions: o.instructions,
    provider,
    model: o.model,
    counter: o.counter,
    repair: o.repair ?? true,
    summary: o.summary ?? undefined,
    historyCache: o.historyCache,
    chatId: o.chatId,
    reserveOutputTokens: o.reserveOutputTokens ?? 0,
    tools: o.tools,
    responseFormat: o.responseFormat,
  };
}

/** The fields of `CompressorOptions` that are not planning options, checked; `R` is the request type. */
export interface CompressorFields<R> {
  readonly store?: unknown;
  readonly summarizer?: unknown;
  readonly concurrency?: number;
  readonly jobTimeoutMs?: number;
  readonly maxQueuedJobs?: number;
  readonly summaryFailMode?: 'silent' | 'raise';
  readonly chatId?: (request: R) => string | undefined;
  readonly historyCache?: HistoryCache;
}

/** Checks `createCompressor` options (unknown names included); defaults are applied by the compressor. */
export function checkCompressorOptions<T>(options: unknown): T {
  return parseWith(compressorSchema, Object.keys(compressorSchema.shape), options, 'options') as T;
}
