// The job records of a multi-process test worker (two-process-worker.mjs, proxy-worker.mjs): each
// record is kept here for `drain`, and pushed to the Redis list `<prefix>log` on the store's own
// connection, so Redis orders them exactly as it ran the job's own commands.
import { RedisStore } from '../../dist/src/store/redis.js';

/**
 * Opens the worker's RedisStore and its record log. `log(entry)` stamps an entry with the
 * worker's pid, name and time (`performance.timeOrigin + performance.now()`: ms on the machine's
 * clock), keeps it in `records`, and pushes it to Redis (marked `unlogged` when Redis is down).
 */
export async function openRecordedStore(url, prefix, name, leaseMs) {
  // A generous command timeout: a loaded test machine may hold this event loop for a while, and a
  // reply read late must not count as a failure (while Redis is down, calls fail at once anyway).
  const store = await RedisStore.open({ url, keyPrefix: prefix, leaseMs: Number(leaseMs), commandTimeoutMs: 5000 });
  const records = [];
  const log = (entry) => {
    const record = { ...entry, pid: process.pid, name, t: performance.timeOrigin + performance.now() };
    records.push(record);
    store.client.rpush(`${prefix}log`, JSON.stringify(record)).catch(() => { record.unlogged = true; });
  };
  return { store, records, log };
}
