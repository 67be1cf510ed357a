/** Longest wait between two attempts, whatever `retry-after` or the exponent says. */
export const MAX_RETRY_DELAY_MS = 30_000;

/**
 * Delay before retry number `attempt` (0 for the first retry): exponential from `baseMs`, with
 * "equal jitter" (half fixed, half random) so clients that failed together do not retry together.
 * Never above `MAX_RETRY_DELAY_MS`.
 */
export function backoffDelayMs(attempt: number, baseMs: number, random: () => number = Math.random): number {
  const exponential = Math.min(MAX_RETRY_DELAY_MS, baseMs * 2 ** attempt);
  return Math.round(exponential / 2 + random() * (exponential / 2));
}

/**
 * A `retry-after` header as milliseconds (delta-seconds or an HTTP date), capped at
 * `MAX_RETRY_DELAY_MS`; undefined when absent or unreadable.
 */
export function retryAfterMs(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const value = header.trim();
  let ms: number;
  if (/^\d+(?:\.\d+)?$/.test(value)) ms = Number(value) * 1000;
  else {
    const at = Date.parse(value);
    if (Number.isNaN(at)) return undefined;
    ms = at - now;
  }
  return Math.min(MAX_RETRY_DELAY_MS, Math.max(0, Math.round(ms)));
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
