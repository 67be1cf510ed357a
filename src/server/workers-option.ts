import { InputError } from '../errors.js';
import type { StateStore } from '../store/state.js';

/** Most processes `--workers` takes. */
export const MAX_WORKERS = 256;

/**
 * Checks `workers` against the store: one process takes any store; several must share one that
 * coordinates them, so each chat has one summary job at a time across them (a store with leases:
 * `redis://`, or a store object with `acquireLease`). `memory` would give each process chats of
 * its own, and a SQLite file grants no leases across processes: both are an `InputError` naming
 * `--workers` and what to use instead.
 */
export function checkWorkers(workers: unknown, store: StateStore | string): number {
  if (workers === undefined) return 1;
  if (typeof workers !== 'number' || !Number.isSafeInteger(workers) || workers < 1 || workers > MAX_WORKERS) {
    throw new InputError('options.workers', `(--workers) must be an integer from 1 to ${MAX_WORKERS}, got ${JSON.stringify(workers)}`);
  }
  if (workers === 1) return 1;
  if (typeof store !== 'string') {
    throw new InputError('options.workers', `(--workers ${workers}) starts processes that open the store themselves: give it as a spec (redis://HOST:PORT), not an object`);
  }
  if (!/^rediss?:\/\//.test(store)) {
    throw new InputError('options.workers', `(--workers ${workers}) needs a store that coordinates processes, so each chat has one summary job at a time across them: --store redis://HOST:PORT (got ${store === 'memory' ? 'memory, which each process would keep apart' : `${store.replace(/\/\/[^@/]*@/, '//***@')}, which grants no leases across processes`})`);
  }
  return workers;
}

