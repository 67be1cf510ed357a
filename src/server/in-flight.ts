import type { ServerResponse } from 'node:http';

/**
 * Counts the requests being served, so a graceful stop can wait for them. A request counts from
 * its arrival until both its handler has returned and its response has closed (a relayed stream
 * counts until its last byte was sent or its client left). `count` holds every request;
 * `served` leaves out the proxy's own probes (`/metrics`, `/healthz`), so a scrape never counts
 * itself.
 */
export class InFlight {
  #count = 0;
  #probes = 0;
  #waiters = new Set<() => void>();
  #afterEach: (() => void) | undefined;

  /** Requests being served now. */
  get count(): number {
    return this.#count;
  }

  /** Requests being served now, the proxy's own probes left out (what `ctxfold_requests_in_flight` reports). */
  get served(): number {
    return this.#count - this.#probes;
  }

  /**
   * Counts a request in (`probe`: one of the proxy's own, `/metrics` or `/healthz`, left out of
   * `served`); the returned function (called once its handler returned) and the response's close
   * count it out.
   */
  enter(res: ServerResponse, probe = false): () => void {
    this.#count++;
    if (probe) this.#probes++;
    let pending = 2;
    const leave = () => {
      if (--pending > 0) return;
      this.#count--;
      if (probe) this.#probes--;
      this.#afterEach?.();
      if (this.#count === 0) for (const wake of this.#waiters) wake();
    };
    if (res.closed) pending--;
    else res.once('close', leave);
    let handled = false;
    return () => {
      if (handled) return;
      handled = true;
      leave();
    };
  }

  /** Calls `listener` each time a request has been served (to close connections left idle during a stop). */
  onIdleConnection(listener: () => void): void {
    this.#afterEach = listener;
  }

  /** Resolves true once no request is in flight, or false after `timeoutMs` if some still are. */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.#count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.#waiters.delete(wake);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(wake);
        resolve(false);
      }, timeoutMs);
      this.#waiters.add(wake);
    });
  }
}
