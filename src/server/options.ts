import type { Logger } from 'pino';
import { InputError } from '../errors.js';
import { hasOriginals } from '../store/originals.js';
import type { RecallOptions } from '../recall/options.js';
import type { ToolOutputTrim } from '../runtime/options.js';
import type { StateStore } from '../store/state.js';
import type { Summarizer } from '../summarize/summarizer.js';
import type { LogDestination, LogLevel } from './logger.js';
import { checkConfig, type ProxyConfig } from './model-limits.js';
import { checkStoreSpec, DEFAULT_STORE } from './open-store.js';
import { DEFAULT_MAX_BODY_BYTES } from './read-body.js';
import { DEFAULT_TENANT_HEADER } from './tenant.js';
import { CHAT_ID_HEADER } from './chat-id.js';
import { checkWorkers } from './workers-option.js';
import { DEFAULT_FOLD_THREAD_MIN_BYTES, defaultFoldThreads } from './fold-threads.js';

/** Options of `startServer` (and of `ctxfold serve`, flag for flag). */
export interface ServerOptions {
  /**
   * Base URL of the API to forward to, with its version, as an SDK's `baseURL`:
   * `https://api.openai.com/v1`, `http://127.0.0.1:8000/v1`. The proxy's `/v1/<path>` goes to `<upstream>/<path>`.
   */
  upstream: string;
  /** Port to listen on; 0 picks a free one (read it from the result). Default 8787. */
  port?: number;
  /** Address to listen on. Default 127.0.0.1 (this machine only); 0.0.0.0 for every interface. */
  host?: string;
  /** Window of every model without its own `config` entry (`--max-context-tokens`); wins over ctxfold's table of known models. */
  maxContextTokens?: number;
  /** Summarize in the background from this many tokens (default: 75% of each model's window). */
  compressionThresholdTokens?: number;
  keepFirst?: number;
  keepLast?: number;
  /**
   * Let the kept tail (`keepLast`) give way when it alone is over the window: its oldest turns,
   * then the tool rounds after the last user message (never that message, never the newest turn).
   * Default false: the kept tail is sent whole (`--keep-last-yields`).
   */
  keepLastYields?: boolean;
  /**
   * Fold in steps: a view over the window drops to about this share of it, and a background
   * summary folds to this share of the threshold, so the next requests append to the same prefix.
   * Default 0.7; 1 drops only what must go (`--low-water-mark`).
   */
  lowWaterMark?: number;
  toolOutputTrim?: ToolOutputTrim;
  /** Repair broken incoming histories (missing, orphan, duplicate results). Default true. */
  repair?: boolean;
  /** Model whose tiktoken encoding counts tokens. Default o200k_base. */
  tokenizerModel?: string;
  /** Per-model limits: the parsed config (`{ models: { "gpt-4o": { maxContextTokens: 128000 } } }`). */
  config?: ProxyConfig;
  /** Where summaries live: a store, or `sqlite:PATH`, `redis://HOST:PORT`, `memory`. Default `sqlite:./ctxfold.db`. */
  store?: StateStore | string;
  /** Who writes summaries (default: the extractive summarizer, no network, counting with `tokenizerModel`); null: none. */
  summarizer?: Summarizer | null;
  /**
   * Recall (`--recall`, off by default): the store keeps the originals each summary replaces, and on
   * `/v1/chat/completions`, `/v1/responses` (an `input` list) and `/v1/messages` (Anthropic),
   * streamed or not, the proxy offers the
   * `ctxfold_recall` tool and answers its calls itself (at most `rounds` per request, then once
   * more with `tool_choice` none when the answer still only recalls). Needs a
   * store that keeps originals: every spec does (`sqlite:PATH`, `redis://`, `memory`); a
   * `StateStore` object without `putOriginals` / `getOriginals` / `searchOriginals` is an
   * `InputError` naming `options.recall`.
   */
  recall?: boolean | RecallOptions;
  /** Summary jobs at once, per window. Default 2. */
  concurrency?: number;
  /** A summary job is aborted after this long. Default 120 000 ms. */
  jobTimeoutMs?: number;
  /**
   * Summary jobs waiting for a concurrency slot, at most, per window (`--max-queued-jobs`).
   * Default 16 per slot (32); when full, a request is served as always and its chat's job is not
   * queued (`summary:skipped`, `reason: 'backlog-full'`). See `createCompressor`'s option.
   */
  maxQueuedJobs?: number;
  /**
   * The upstream's API key, when the proxy holds it: it is sent upstream on every request (as
   * `Authorization: Bearer`, or `x-api-key` on `/v1/messages`) in place of any key the caller
   * sent, and the tenant comes from the `tenantHeader` header.
   */
  upstreamKey?: string;
  /** Header naming the tenant explicitly. Default `x-ctxfold-tenant`. */
  tenantHeader?: string;
  /** Header naming the chat, read before `x-ctxfold-chat-id` (Open WebUI: `x-openwebui-chat-id`). Default `x-ctxfold-chat-id`. */
  chatIdHeader?: string;
  /** Largest request body accepted, in bytes (larger: 413). Default 32 MiB. */
  maxBodyBytes?: number;
  /**
   * Bytes of recent request bodies remembered, over all chats, so a chat's next body parses only
   * what follows the bytes it shares with its last one (0: every body parsed whole). Default 64 MiB.
   */
  bodyMemoryBytes?: number;
  /** Longest the upstream may stay silent (before its headers, or between two chunks), in ms; then 504. Default 600 000. */
  upstreamTimeoutMs?: number;
  /**
   * How long a connection to the upstream may sit idle in the pool before the proxy closes it, in
   * ms (less when the upstream's `Keep-Alive: timeout=N` asks for less: a second under it). Under
   * the upstream's own idle limit, so the upstream never closes a connection as a request goes out
   * on it (Node's `http` server closes after 5 s). 0: a new connection for every request. Default 4 000.
   */
  upstreamKeepAliveMs?: number;
  /** On close, how long in-flight requests and then summary jobs may take before they are cut, in ms. Default 30 000. */
  shutdownGraceMs?: number;
  /**
   * Serve the chats page at `GET /ui` (`--ui`, off by default: then `/ui` is a 404 like any unknown
   * path). The page is static and holds no data; its script asks for the caller's key and reads
   * `GET /v1/ctxfold/chats` with it (those two are served either way). See docs/chats.md.
   */
  ui?: boolean;
  /** Log level (default info). Ignored when `logger` is given. */
  logLevel?: LogLevel;
  /** Where log lines go (default standard error). Ignored when `logger` is given. */
  logDestination?: LogDestination;
  /** A pino logger to use instead of making one. */
  logger?: Logger;
  /**
   * Threads that fold large request bodies and their summary jobs off the thread that serves
   * every request (`--fold-threads`): 0 folds everything on that thread. Default: one per core
   * beyond the first, at least 1, at most 4. Not with `recall`, nor with a summarizer other than
   * the built-in extractive one that shortens summaries (both fold on the serving thread); with
   * a model-written summarizer only the requests fold in threads (its jobs wait on the network).
   */
  foldThreads?: number;
  /** Request bodies of at least this many bytes fold in a thread (`--fold-thread-min-bytes`). Default 262 144 (256 KiB). */
  foldThreadMinBytes?: number;
  /**
   * Processes serving the port (`--workers`, node:cluster). Default 1. More than one needs a
   * store that coordinates them (`redis://`): see docs/proxy.md.
   */
  workers?: number;
}

/** `ServerOptions` checked and with every default applied. */
export interface ResolvedServerOptions extends Omit<ServerOptions, 'upstream' | 'store'> {
  readonly upstream: URL;
  readonly port: number;
  readonly host: string;
  readonly store: StateStore | string;
  readonly config: ProxyConfig;
  readonly tenantHeader: string;
  readonly chatIdHeader: string;
  readonly maxBodyBytes: number;
  readonly bodyMemoryBytes: number;
  readonly upstreamTimeoutMs: number;
  readonly upstreamKeepAliveMs: number;
  readonly shutdownGraceMs: number;
  readonly foldThreads: number;
  readonly foldThreadMinBytes: number;
  readonly workers: number;
}

/** Default port of `ctxfold serve`. */
export const DEFAULT_PORT = 8787;
/** Default upstream silence limit: 10 minutes (a long answer that is not streamed can take minutes). */
export const DEFAULT_UPSTREAM_TIMEOUT_MS = 600_000;
/** Default memory of recent request bodies: 64 MiB (about a hundred 1k-message histories). */
export const DEFAULT_BODY_MEMORY_BYTES = 64 * 1024 * 1024;
/** Default idle limit of a pooled upstream connection: 4 s, under the 5 s after which Node's `http` server closes one. */
export const DEFAULT_UPSTREAM_KEEP_ALIVE_MS = 4_000;
/** Default shutdown grace. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 30_000;

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

function count(field: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new InputError(`options.${field}`, `must be an integer from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ' up'}, got ${JSON.stringify(value)}`);
  }
  return value;
}

/**
 * Checks the options and applies the defaults. Every mistake is an `InputError` naming the
 * option and the rule; compressor options (`keepLast`, ...) are checked by `createCompressor`
 * when the first compressor is made, before the server listens.
 */
export function resolveServerOptions(options: ServerOptions): ResolvedServerOptions {
  if (typeof options !== 'object' || options === null) throw new InputError('options', 'must be an options object with at least { upstream }');
  if (typeof options.upstream !== 'string' || options.upstream === '') {
    throw new InputError('options.upstream', 'is required: the base URL of the API to forward to, with its version (https://api.openai.com/v1)');
  }
  let upstream: URL;
  try {
    upstream = new URL(options.upstream);
  } catch {
    throw new InputError('options.upstream', `must be an http(s) URL such as https://api.openai.com/v1, got ${JSON.stringify(options.upstream)}`);
  }
  if (upstream.protocol !== 'http:' && upstream.protocol !== 'https:') {
    throw new InputError('options.upstream', `must be an http:// or https:// URL, got ${JSON.stringify(options.upstream)}`);
  }
  if (upstream.username !== '' || upstream.password !== '') {
    throw new InputError('options.upstream', 'must not carry credentials (user:password@): give the key with upstreamKey (--upstream-key-env), or let callers send their own');
  }
  if (upstream.search !== '' || upstream.hash !== '') throw new InputError('options.upstream', `must be a base URL without query or fragment, got ${JSON.stringify(options.upstream)}`);
  const tenantHeader = (options.tenantHeader ?? DEFAULT_TENANT_HEADER).toLowerCase();
  if (!HEADER_NAME.test(tenantHeader)) throw new InputError('options.tenantHeader', `must be an HTTP header name, got ${JSON.stringify(options.tenantHeader)}`);
  if (tenantHeader === 'authorization' || tenantHeader === 'x-api-key') {
    throw new InputError('options.tenantHeader', `must not be ${tenantHeader}: that header carries an API key, which the proxy never uses as a name`);
  }
  const chatIdHeader = (options.chatIdHeader ?? CHAT_ID_HEADER).toLowerCase();
  if (!HEADER_NAME.test(chatIdHeader) || chatIdHeader === 'authorization' || chatIdHeader === 'x-api-key') {
    throw new InputError('options.chatIdHeader', `must be an HTTP header name other than authorization and x-api-key, got ${JSON.stringify(options.chatIdHeader)}`);
  }
  if (options.upstreamKey !== undefined && (typeof options.upstreamKey !== 'string' || options.upstreamKey.trim() === '')) {
    throw new InputError('options.upstreamKey', 'must be a non-empty string (the upstream API key) when given');
  }
  // Sent as a header on every request: a line break or other control character would fail each one. Never echoed.
  if (options.upstreamKey !== undefined && /[\u0000-\u001f\u007f]/.test(options.upstreamKey)) {
    throw new InputError('options.upstreamKey', 'must not contain a line break or other control character (is there a trailing newline in the key\'s file or variable?)');
  }
  const store = options.store ?? DEFAULT_STORE;
  if (typeof store === 'string') checkStoreSpec(store, 'options.store');
  else if (typeof store !== 'object' || store === null || typeof store.get !== 'function' || typeof store.commit !== 'function') {
    throw new InputError('options.store', 'must be a StateStore (get, commit, delete, close) or sqlite:PATH, redis://HOST:PORT, memory');
  }
  // Every store a spec names keeps originals (memory, SQLite, Redis); a store object must too.
  if (options.recall !== undefined && options.recall !== false && typeof store !== 'string' && !hasOriginals(store)) {
    throw new InputError('options.recall', 'recall (--recall) needs a store that keeps the original messages (putOriginals, getOriginals, searchOriginals: MemoryStore, SqliteStore, RedisStore); this store has none');
  }
  const host = options.host ?? '127.0.0.1';
  if (typeof host !== 'string' || host === '') throw new InputError('options.host', `must be an address to listen on (127.0.0.1, 0.0.0.0, ::), got ${JSON.stringify(options.host)}`);
  return {
    ...options,
    upstream,
    host,
    port: count('port', options.port, 0, 65_535) ?? DEFAULT_PORT,
    store,
    config: checkConfig(options.config ?? {}, 'options.config'),
    tenantHeader,
    chatIdHeader,
    maxBodyBytes: count('maxBodyBytes', options.maxBodyBytes, 1) ?? DEFAULT_MAX_BODY_BYTES,
    bodyMemoryBytes: count('bodyMemoryBytes', options.bodyMemoryBytes, 0) ?? DEFAULT_BODY_MEMORY_BYTES,
    upstreamTimeoutMs: count('upstreamTimeoutMs', options.upstreamTimeoutMs, 1) ?? DEFAULT_UPSTREAM_TIMEOUT_MS,
    upstreamKeepAliveMs: count('upstreamKeepAliveMs', options.upstreamKeepAliveMs, 0) ?? DEFAULT_UPSTREAM_KEEP_ALIVE_MS,
    shutdownGraceMs: count('shutdownGraceMs', options.shutdownGraceMs, 0) ?? DEFAULT_SHUTDOWN_GRACE_MS,
    maxContextTokens: count('maxContextTokens', options.maxContextTokens, 1),
    foldThreads: count('foldThreads', options.foldThreads, 0, 64) ?? defaultFoldThreads(),
    foldThreadMinBytes: count('foldThreadMinBytes', options.foldThreadMinBytes, 0) ?? DEFAULT_FOLD_THREAD_MIN_BYTES,
    workers: checkWorkers(options.workers, store),
  };
}
