import { StoreError } from '../errors.js';
import type { Lease, LeaseCapable } from '../store/lease.js';
import type { StateStore } from '../store/state.js';
import type { ChatJob } from './scheduler.js';

/** A job that reads and commits through the store it is given. */
export type StoreJob<P> = (store: StateStore, chatId: string, payload: P, signal: AbortSignal) => Promise<void>;

/**
 * Emitted when a summary job was not run: another process holds the chat's lease, or the chat's
 * last jobs failed and this trigger was passed over (`triggersPassedOver`).
 */
export type SummarySkippedEvent =
  /** Another holder has the chat's lease: a job in another process, or the lease of a process that died, until it lapses. */
  | { readonly chatId: string; readonly reason: 'leased-elsewhere' }
  /** The chat's last `failures` jobs failed in a row; a later trigger tries again. */
  | { readonly chatId: string; readonly reason: 'failing'; readonly failures: number }
  /** `queued` jobs (the compressor's `maxQueuedJobs`) were already waiting for a slot; the chat's next trigger asks again. */
  | { readonly chatId: string; readonly reason: 'backlog-full'; readonly queued: number };

/** What `leasedJob` tells its owner. */
export interface LeaseJobHooks {
  /** The chat's lease was held elsewhere: the job did nothing; the chat's next trigger tries again. */
  readonly onSkipped?: (event: SummarySkippedEvent) => void;
}

/**
 * Runs `job` only under the chat's lease, so across every process sharing `store` at most one job
 * per chat works at a time. When another holder has the lease the job is skipped (reported, not
 * an error). While the job runs the lease is renewed every third of its time to live; the job
 * commits through `lease.commit`, which writes only while the lease is still held. When the lease
 * is lost (renewal refused, or its time ran out without a renewal answered) the job is aborted
 * and ends at once, even if its work ignores the signal. When the job ends or is aborted (time
 * limit, close) the lease is released at once, so work that ignores its signal can never commit
 * afterwards.
 */
export function leasedJob<P>(store: StateStore & LeaseCapable, job: StoreJob<P>, hooks: LeaseJobHooks = {}): ChatJob<P> {
  return async (chatId, payload, signal) => {
    signal.throwIfAborted();
    const asked = Date.now();
    const lease = await store.acquireLease(chatId);
    if (lease === undefined) {
      hooks.onSkipped?.({ chatId, reason: 'leased-elsewhere' });
      return;
    }
    const holding = holdLease(lease, signal, asked);
    // The race ends the job when the lease is lost even if its work ignores the signal.
    const aborted = new Promise<never>((_, reject) => {
      if (holding.signal.aborted) reject(holding.signal.reason);
      holding.signal.addEventListener('abort', () => reject(holding.signal.reason), { once: true });
    });
    aborted.catch(() => undefined);
    try {
      const work = job(fencedStore(store, lease), chatId, payload, holding.signal);
      work.catch(() => undefined); // a late failure of abandoned work is not unhandled
      await Promise.race([work, aborted]);
    } finally {
      await holding.end();
    }
  };
}

/** The store as the job sees it: reads go to `store`, commits through the lease. */
function fencedStore(store: StateStore, lease: Lease): StateStore {
  return {
    get: (chatId) => store.get(chatId),
    commit: (state, expectedVersion) => lease.commit(state, expectedVersion),
    delete: (chatId) => store.delete(chatId),
    close: async () => undefined, // the compressor owns the store
  };
}

/**
 * Keeps `lease` (asked for at `askedAt`) alive while the job runs: renews it every `ttlMs / 3`,
 * aborts the returned signal when `outer` aborts or the lease is lost, and releases the lease once
 * (on abort or on `end`).
 */
function holdLease(lease: Lease, outer: AbortSignal, askedAt: number): { signal: AbortSignal; end: () => Promise<void> } {
  const controller = new AbortController();
  const lost = () => new StoreError('lease', `chat ${JSON.stringify(lease.chatId)}: the lease (fence ${lease.fence}) was lost while its summary job ran, so the job stopped and wrote nothing; raise leaseMs if Redis answers renewals slowly`);
  // The lease surely ends by then: Redis starts (or extends) it when it runs the call, after it was sent.
  let expiresAt = askedAt + lease.ttlMs;
  let renewing = false;
  const timer = setInterval(() => {
    if (Date.now() >= expiresAt) {
      controller.abort(lost());
      return;
    }
    if (renewing) return;
    renewing = true;
    const sent = Date.now();
    lease.renew().then(
      (held) => {
        if (held) expiresAt = sent + lease.ttlMs;
        else controller.abort(lost());
      },
      () => undefined, // Redis unreachable: try again next tick; the commit checks the lease anyway
    ).finally(() => { renewing = false; });
  }, Math.max(1, Math.floor(lease.ttlMs / 3)));
  timer.unref();
  let released: Promise<void> | undefined;
  const release = (): Promise<void> => {
    clearInterval(timer);
    // A lease that cannot be released (Redis down) expires by itself after ttlMs.
    released ??= lease.release().catch(() => undefined);
    return released;
  };
  const onOuterAbort = () => controller.abort(outer.reason);
  controller.signal.addEventListener('abort', () => void release(), { once: true });
  // Aborted while the lease was being taken: give it back at once.
  if (outer.aborted) onOuterAbort();
  else outer.addEventListener('abort', onOuterAbort, { once: true });
  return {
    signal: controller.signal,
    end: () => {
      outer.removeEventListener('abort', onOuterAbort);
      return release();
    },
  };
}
