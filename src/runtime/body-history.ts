/**
 * A chat's history held as the bytes of the request body that carried it, never parsed on the
 * thread that holds it: a compressor given one runs the chat's summary job through its
 * `offload` (a worker thread parses the bytes), so a long history costs the caller's thread
 * nothing but the bytes it already had.
 */
export interface BodyHistory {
  readonly kind: 'body-history';
  /** The request body, as it came. */
  readonly bytes: Uint8Array;
  /** What the offload needs to find the history in the body again (route, model): its own, passed through. */
  readonly where: Readonly<Record<string, string | undefined>>;
}

/** A body's history, for `afterResponse`: the bytes are kept as they are (the caller must not change them). */
export function bodyHistory(bytes: Uint8Array, where: Readonly<Record<string, string | undefined>>): BodyHistory {
  return Object.freeze({ kind: 'body-history', bytes, where: Object.freeze({ ...where }) });
}

/** True when `value` is a `BodyHistory` (rather than a list of messages). */
export function isBodyHistory(value: unknown): value is BodyHistory {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && (value as Partial<BodyHistory>).kind === 'body-history';
}
