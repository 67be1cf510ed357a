import { InputError } from '../errors.js';
import { MemoryStore } from '../store/memory-store.js';
import type { StateStore } from '../store/state.js';

/** The default store of `ctxfold serve`: a SQLite file in the working directory. */
export const DEFAULT_STORE = 'sqlite:./ctxfold.db';

/** What `--store` accepts. */
export const STORE_FORMS = 'sqlite:PATH, redis://HOST:PORT (or rediss://), or memory';

/**
 * Checks a `--store` value without opening anything: `sqlite:PATH`, `redis://...` /
 * `rediss://...`, or `memory`. Throws an `InputError` naming `field` and the forms accepted.
 */
export function checkStoreSpec(spec: string, field = 'store'): void {
  if (spec === 'memory') return;
  if (spec.startsWith('sqlite:') && spec.length > 'sqlite:'.length) return;
  if (/^rediss?:\/\/[^/\s]/.test(spec)) {
    try {
      new URL(spec);
      return;
    } catch {
      // reported below
    }
  }
  throw new InputError(field, `must be ${STORE_FORMS}, got ${JSON.stringify(spec)}`);
}

/** An opened store, and why it may not answer yet (Redis not reachable at start). */
export interface OpenedStore {
  readonly store: StateStore;
  readonly warning?: string;
}

/**
 * Opens the store a spec names. `sqlite:PATH` loads `ctxfold/sqlite` (Node's `node:sqlite`),
 * `redis://` loads the Redis store (the optional `ioredis`), each only when asked for, so a proxy
 * on one of them never loads the other. A Redis that does not answer
 * within `redisReadyMs` is not an error: the proxy serves without stored summaries until it
 * does (the client reconnects by itself), and `warning` says so.
 */
export async function openStore(spec: string, redisReadyMs = 2000): Promise<OpenedStore> {
  checkStoreSpec(spec);
  if (spec === 'memory') return { store: new MemoryStore() };
  if (spec.startsWith('sqlite:')) {
    const { SqliteStore } = await import('../store/sqlite.js');
    return { store: SqliteStore.open(spec.slice('sqlite:'.length)) };
  }
  const { RedisStore } = await import('../store/redis.js');
  const store = new RedisStore({ url: spec });
  try {
    await store.ready(redisReadyMs);
    return { store };
  } catch (error) {
    return { store, warning: `Redis is not reachable yet (${error instanceof Error ? error.message : String(error)}); serving without stored summaries until it is` };
  }
}
