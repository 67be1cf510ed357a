/**
 * Every error ctxfold throws on purpose is a `CtxfoldError`. Each class is recognised by a marker
 * registered with `Symbol.for`, not by its constructor, so `instanceof` and `isInstance` still hold
 * when two copies of ctxfold are installed side by side (a library and an app each bringing one).
 */
const MARKER = Symbol.for('ctxfold.error');

type Marked = { readonly [MARKER]?: readonly string[] };

/**
 * Every `code` a `CtxfoldError` can carry, each a stable string to branch on (messages are worded
 * for people and may change). `CtxfoldError.codes` lists them at run time.
 */
const CODES = [
  /** A `CtxfoldError` of no more precise kind. */
  'CTXFOLD_ERROR',
  /** `InputError`: bad input or options from the caller; `path` names the field. */
  'CTXFOLD_INPUT',
  /** `StoreError`: a state store failed. */
  'CTXFOLD_STORE',
  /** `SummarizerError`: a summarizer produced no summary; `failure` says why. */
  'CTXFOLD_SUMMARIZER',
  /** One failed request of the LLM summarizer, before its retry decision (never thrown to callers). */
  'CTXFOLD_SUMMARY_ATTEMPT',
  /** A summary job ran past its time limit (`CompressorOptions.jobTimeoutMs`). */
  'CTXFOLD_JOB_TIMEOUT',
  /** `close()` gave up a summary job (running or still waiting). */
  'CTXFOLD_JOB_ABANDONED',
  /** `close()` stopped waiting while a summary job wrote its result. */
  'CTXFOLD_JOB_UNSETTLED',
  /** `drain()` in `raise` mode: summary jobs failed since the last drain (`errors` holds them). */
  'CTXFOLD_SUMMARY_JOBS',
  /** The proxy's call to its upstream failed (`UpstreamError`). */
  'CTXFOLD_UPSTREAM',
  /** A request body over the proxy's limit. */
  'CTXFOLD_BODY_TOO_LARGE',
  /** The client left before its request body was complete. */
  'CTXFOLD_BODY_ABORTED',
  /** Work stopped because its caller cancelled it (a stream cancelled while it was being answered). */
  'CTXFOLD_ABORTED',
  /** The command line: a bad flag, an unreadable file, malformed input (`CliError`). */
  'CTXFOLD_CLI',
  /** An invariant of ctxfold's own did not hold: a bug, to be reported (for checks of that kind: `new CtxfoldError(message, { code })`). */
  'CTXFOLD_INTERNAL',
] as const;

/** A `CtxfoldError`'s `code`. */
export type CtxfoldErrorCode = (typeof CODES)[number];

/** The base of every error ctxfold raises; `kind` says which part failed and `code` is its stable code. */
export class CtxfoldError extends Error {
  /** The class's own name, recorded in the marker of every instance of it and of its subclasses. */
  static readonly kind: string = 'CtxfoldError';
  /** The code of this class's instances (a subclass without its own has its parent's). */
  static readonly code: CtxfoldErrorCode = 'CTXFOLD_ERROR';
  /** Every code a `CtxfoldError` can carry. */
  static readonly codes: readonly CtxfoldErrorCode[] = Object.freeze([...CODES]);
  readonly [MARKER]: readonly string[];
  /** Stable: branch on this, never on the message (`CTXFOLD_INPUT`, `CTXFOLD_SUMMARIZER`, ...). */
  readonly code: CtxfoldErrorCode;

  /** `options.code` overrides the class's code (a bare `CtxfoldError` for `CTXFOLD_INTERNAL`, `CTXFOLD_ABORTED`). */
  constructor(message: string, options?: { cause?: unknown; code?: CtxfoldErrorCode }) {
    super(message, options !== undefined && 'cause' in options ? { cause: options.cause } : undefined);
    this.code = options?.code ?? (new.target as unknown as typeof CtxfoldError).code;
    const kinds: string[] = [];
    for (let c: unknown = new.target; typeof c === 'function' && typeof (c as typeof CtxfoldError).kind === 'string'; c = Object.getPrototypeOf(c)) {
      if (!Object.hasOwn(c, 'kind')) continue;
      kinds.push((c as typeof CtxfoldError).kind);
    }
    this[MARKER] = Object.freeze(kinds);
    this.name = kinds[0] ?? 'CtxfoldError';
  }

  /** True when `value` is an error of this class (or a subclass), from any installed copy of ctxfold. */
  static isInstance<T extends abstract new (...args: any[]) => CtxfoldError>(this: T & { readonly kind: string }, value: unknown): value is InstanceType<T> {
    if (typeof value !== 'object' || value === null) return false;
    const kinds = (value as Marked)[MARKER];
    return Array.isArray(kinds) && kinds.includes(this.kind);
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return this.isInstance(value);
  }
}

/**
 * Bad input from a caller: `path` names the field (`messages[3].role`, `options.keepLast`) and
 * `rule` says which rule it breaks and what was found. Never thrown for a provider-valid history.
 */
export class InputError extends CtxfoldError {
  static override readonly kind: string = 'InputError';
  static override readonly code: CtxfoldErrorCode = 'CTXFOLD_INPUT';
  readonly path: string;
  readonly rule: string;
  constructor(path: string, rule: string, options?: { cause?: unknown }) {
    super(path === '' ? rule : `${path}: ${rule}`, options);
    this.path = path;
    this.rule = rule;
  }
}

/** A state store could not do what was asked (database unreachable, locked, corrupt row); `cause` holds the original. */
export class StoreError extends CtxfoldError {
  static override readonly kind: string = 'StoreError';
  static override readonly code: CtxfoldErrorCode = 'CTXFOLD_STORE';
  /** The store (`SqliteStore(/path/state.db)`, `MemoryStore`). */
  readonly store: string;
  constructor(store: string, message: string, options?: { cause?: unknown }) {
    super(`${store}: ${message}`, options);
    this.store = store;
  }
}

/** Why a summarizer call failed, where the summarizer can tell. */
export type SummarizerFailure = 'connection' | 'timeout' | 'http' | 'response' | 'empty' | 'aborted' | 'other';

/** A summarizer failed to produce a summary; nothing was committed and the previous summary stays in force. */
export class SummarizerError extends CtxfoldError {
  static override readonly kind: string = 'SummarizerError';
  static override readonly code: CtxfoldErrorCode = 'CTXFOLD_SUMMARIZER';
  /** The summarizer's name (`extractive`, `llm`, or your own). */
  readonly summarizer: string;
  readonly failure: SummarizerFailure;
  /** HTTP status, for `http` failures. */
  readonly status?: number;
  constructor(summarizer: string, failure: SummarizerFailure, message: string, options?: { cause?: unknown; status?: number }) {
    super(message, options);
    this.summarizer = summarizer;
    this.failure = failure;
    this.status = options?.status;
  }
}

/**
 * `drain()` in `raise` mode found summary jobs that failed since the last drain: `errors` holds
 * each job's error, oldest first, and the message lists their messages.
 */
export class SummaryJobsError extends CtxfoldError {
  static override readonly kind: string = 'SummaryJobsError';
  static override readonly code: CtxfoldErrorCode = 'CTXFOLD_SUMMARY_JOBS';
  readonly errors: readonly unknown[];
  constructor(errors: readonly unknown[]) {
    super(`${errors.length} summary job(s) failed: ${errors.map((e) => (e instanceof Error ? e.message : String(e))).join('; ')}`);
    this.errors = Object.freeze([...errors]);
  }
}

/** Why a call to the upstream API failed before its answer was complete. */
export type UpstreamFailure = 'timeout' | 'client-gone' | 'unreachable';

/**
 * The proxy's call to its upstream failed: timed out, the client left, or the connection failed.
 * `upstream` is the upstream's origin (`https://api.openai.com`) and the message names it, so
 * a 502 says which upstream it could not reach; never its path, query or a key.
 */
export class UpstreamError extends CtxfoldError {
  static override readonly kind: string = 'UpstreamError';
  static override readonly code: CtxfoldErrorCode = 'CTXFOLD_UPSTREAM';
  /** The upstream's origin: scheme, host and port. */
  readonly upstream: string;
  readonly failure: UpstreamFailure;
  constructor(upstream: URL | string, failure: UpstreamFailure, detail: string, options?: { cause?: unknown }) {
    const origin = new URL(upstream).origin;
    super(`upstream ${origin}: ${detail}`, options);
    this.upstream = origin;
    this.failure = failure;
  }
}
