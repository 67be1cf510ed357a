/**
 * `ctxfold/redis`: chat states in Redis, shared by many processes and machines, with per-chat
 * leases so one chat is summarized by one process at a time. The only entry that loads `ioredis`
 * (an optional peer dependency): importing it without that package fails with one line naming
 * the package to install.
 */
/** Chat states in Redis with compare-and-set commits and per-chat leases (`RedisStore.open({ url })`). */
export { RedisStore, type RedisStoreOptions } from './redis-store.js';
/** True when a store grants per-chat leases across processes (`RedisStore` does). */
export { hasLeases } from './lease.js';
/** The lease capability a store may offer, and one lease. */
export type { Lease, LeaseCapable } from './lease.js';
