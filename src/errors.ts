/**
 * Every error ctxfold throws on purpose is a `CtxfoldError`. Each class is recognised by a marker
 * registered with `Symbol.for`, not by its constructor, so `instanceof` and `isInstance` still hold
 * when two copies of ctxfold are installed side by side (a library and an app each bringing one).
 */
const MARKER = Symbol.for('ctxfold.error');

type Marked = { readonly [MARKER]?: readonly string[] };

/** The base of every error ctxfold raises; `kind` says which part failed. */
export class CtxfoldError extends Error {
  /** The class's own name, recorded in the marker of every instance of it and of its subclasses. */
  static readonly kind: string = 'CtxfoldError';
  readonly [MARKER]: readonly string[];

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
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

/** Why a call to the upstream API failed before its answer was complete. */
export type UpstreamFailure = 'timeout' | 'client-gone' | 'unreachable';

/**
 * The proxy's call to its upstream failed: timed out, the client left, or the connection failed.
 * `upstream` is the upstream's origin (`https://api.openai.com`) and the message names it, so
 * a 502 says which upstream it could not reach; never its path, query or a key.
 */
export class UpstreamError extends CtxfoldError {
  static override readonly kind: string = 'UpstreamError';
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
