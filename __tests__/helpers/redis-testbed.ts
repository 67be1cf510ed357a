import { afterAll, afterEach, beforeAll } from '@jest/globals';
import { Redis } from 'ioredis';
import { RedisStore, type RedisStoreOptions } from '../../src/store/redis-store.js';
import { startRedisServer, type RedisServer } from './redis-server.js';

/** What `redisTestbed` gives a test file. */
export interface RedisTestbed {
  /** The file's redis-server (set in beforeAll). */
  readonly server: RedisServer;
  /** A plain ioredis client on it, to look at and plant keys. */
  readonly raw: Redis;
  /** A store on the server under a key prefix no other test uses; closed after the test. */
  fresh(options?: Omit<RedisStoreOptions, 'url' | 'client'>): Promise<RedisStore>;
  /** Closes `store` after the test too. */
  track<T extends { close(): Promise<void> }>(store: T): T;
}

/**
 * Registers the hooks of a test file on one real redis-server: started before its tests, stopped
 * after them, with every store opened through `fresh` or `track` closed after each test. Key
 * prefixes start with `prefix`, so files and tests never see each other's keys.
 */
export function redisTestbed(prefix: string): RedisTestbed {
  let server: RedisServer | undefined;
  let raw: Redis | undefined;
  const opened: { close(): Promise<void> }[] = [];
  let seq = 0;
  beforeAll(async () => {
    server = await startRedisServer();
    raw = new Redis(server.url, { lazyConnect: false });
  });
  afterAll(async () => {
    raw?.disconnect();
    await server?.stop();
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
  });
  const track = <T extends { close(): Promise<void> }>(store: T): T => {
    opened.push(store);
    return store;
  };
  return {
    get server() {
      if (!server) throw new Error('redisTestbed: the server is started in beforeAll; use it inside a test');
      return server;
    },
    get raw() {
      if (!raw) throw new Error('redisTestbed: the client is made in beforeAll; use it inside a test');
      return raw;
    },
    track,
    fresh: async (options = {}) => track(await RedisStore.open({ keyPrefix: `${prefix}${seq++}:`, ...options, url: server!.url })),
  };
}
