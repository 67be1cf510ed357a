import { randomBytes } from 'node:crypto';
import type { Redis as RedisClient, RedisOptions } from 'ioredis';
import { CtxfoldError, InputError, StoreError } from '../errors.js';
import { assertCommittable } from './commit-rules.js';
import { checkListing, compareCodePoints, type ChatLister } from './chat-list.js';
import type { Lease, LeaseCapable } from './lease.js';
import { rankRecords } from './rank-records.js';
import { queryWords, type OriginalRecord, type OriginalsStore } from './originals.js';
import { decodeOriginal, decodeState, encodeOriginal, encodeState } from './redis-codec.js';
import { ACQUIRE, COMMIT, COMMIT_BAD_VERSION, COMMIT_FENCE_BEHIND, COMMIT_LEASE_LOST, RELEASE, RENEW, type LuaScript } from './redis-scripts.js';
import type { ChatState, StateStore } from './state.js';

/**
 * ioredis is an optional peer dependency: only this module loads it, so `import 'ctxfold'` works
 * without it, and importing `ctxfold/redis` without it fails with one line saying what to install.
 */
const Redis: typeof RedisClient = await import('ioredis').then(
  (m) => m.Redis,
  (error: unknown) => {
    const code = (error as { code?: unknown }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new StoreError('ctxfold/redis', 'needs the package ioredis, which is not installed: run `npm install ioredis`', { cause: error });
    }
    throw new StoreError('ctxfold/redis', `could not load ioredis (${(error as Error).message})`, { cause: error });
  },
);

/** Options of `new RedisStore` and `RedisStore.open`. */
export interface RedisStoreOptions {
  /** Where Redis is, e.g. `redis://127.0.0.1:6379` (the default), `rediss://user:pass@host:6380/2`. Not with `client`. */
  readonly url?: string;
  /**
   * Your own ioredis client, used as it is (its options are yours: give it `enableOfflineQueue:
   * false` so calls fail fast while Redis is down); `close()` leaves it open. Not with `url`.
   */
  readonly client?: RedisClient;
  /** Prefix of every key this store writes. Default `ctxfold:`. */
  readonly keyPrefix?: string;
  /** How long a summary job's lease lasts unless renewed, in ms. Default 15 000. */
  readonly leaseMs?: number;
  /** A call that gets no answer in this long fails (client made from `url` only), in ms. Default 1000. */
  readonly commandTimeoutMs?: number;
  /** A connection attempt gives up after this long (client made from `url` only), in ms. Default 2000. */
  readonly connectTimeoutMs?: number;
  /**
   * How long the originals kept for recall (`createCompressor({ recall: true })`) live after their
   * chat last stored some, in ms. Default: no expiry, like the chat's state (bound them with this,
   * or with Redis's own `maxmemory` policy).
   */
  readonly originalsTtlMs?: number;
}

/** Keys `SCAN` looks at per call when listing chats. */
const SCAN_COUNT = 1000;

/** Fields written per HSET when originals are stored (keeps each command a bounded size). */
const ORIGINALS_PER_COMMAND = 256;

const DEFAULT_URL = 'redis://127.0.0.1:6379';

/**
 * Chat states in Redis, shared by any number of processes and machines. Each chat is one hash
 * (`<prefix>{<chatId>}:state`, fields `version` and `state`, the JSON of its `ChatState`);
 * `commit` is a compare-and-set on `version` run as one Lua script, so two writers can never
 * both win the same version. A stored value that is not a valid state is reported as a
 * `StoreError` naming its key, never returned.
 *
 * The originals summaries replaced (recall) are one more hash per chat
 * (`<prefix>{<chatId>}:originals`, a field per message id holding the record's JSON); a search
 * reads the chat's records and ranks them in this process (`rankRecords`: no Redis module needed),
 * so its cost grows with the chat's originals.
 *
 * Leases (`acquireLease`): `SET NX PX` with a random token, a fencing counter per chat, renewal and
 * release only by the token's holder, and `lease.commit`, which writes only while the lease is
 * still held. A client made from `url` fails fast while Redis is unreachable (no offline queue, one
 * attempt per call, `commandTimeoutMs`) and reconnects by itself.
 */
export class RedisStore implements StateStore, LeaseCapable, OriginalsStore, ChatLister {
  /** The store as error messages name it: `RedisStore(redis://host:port)` (credentials left out). */
  readonly name: string;
  /** The ioredis client in use (for health checks); the store's own unless one was given. */
  readonly client: RedisClient;
  /** Prefix of every key this store reads and writes. */
  readonly keyPrefix: string;
  /** Time to live of a lease taken without an explicit `ttlMs`, in ms. */
  readonly leaseMs: number;
  /** Time to live of a chat's originals after its last `putOriginals`, in ms; undefined: no expiry. */
  readonly originalsTtlMs: number | undefined;
  readonly #ownsClient: boolean;
  #lastError: Error | undefined;
  #closed = false;

  constructor(options: RedisStoreOptions = {}) {
    if (options === null || typeof options !== 'object') throw new InputError('options', `must be an object, got ${String(options)}`);
    const { url, client } = options;
    if (url !== undefined && client !== undefined) throw new InputError('options.url', 'give url or client, not both');
    if (url !== undefined && (typeof url !== 'string' || !/^rediss?:\/\//.test(url))) {
      throw new InputError('options.url', `must be a redis:// or rediss:// URL, got ${JSON.stringify(url)}`);
    }
    const keyPrefix = options.keyPrefix ?? 'ctxfold:';
    if (typeof keyPrefix !== 'string') throw new InputError('options.keyPrefix', `must be a string, got ${typeof keyPrefix}`);
    this.keyPrefix = keyPrefix;
    this.leaseMs = wholeMs(options.leaseMs, 'options.leaseMs', 15_000);
    this.originalsTtlMs = options.originalsTtlMs === undefined ? undefined : wholeMs(options.originalsTtlMs, 'options.originalsTtlMs', 0);
    const commandTimeout = wholeMs(options.commandTimeoutMs, 'options.commandTimeoutMs', 1000);
    const connectTimeout = wholeMs(options.connectTimeoutMs, 'options.connectTimeoutMs', 2000);
    if (client !== undefined) {
      if (client === null || typeof (client as { evalsha?: unknown }).evalsha !== 'function') throw new InputError('options.client', 'must be an ioredis client (new Redis(...))');
      this.client = client;
      this.#ownsClient = false;
      this.name = `RedisStore(${client.options.host ?? '?'}:${client.options.port ?? '?'})`;
    } else {
      const target = url ?? DEFAULT_URL;
      const redisOptions: RedisOptions = {
        // Fail fast while disconnected: a request must never wait for Redis to come back.
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        autoResendUnfulfilledCommands: false,
        commandTimeout,
        connectTimeout,
        // A connection closed while still connecting is destroyed this soon (ioredis waits 2 s by default).
        disconnectTimeout: 100,
        // Reconnect forever, at most a second apart, so summaries resume soon after Redis returns.
        retryStrategy: (times) => Math.min(times * 50, 1000),
      };
      this.client = new Redis(target, redisOptions);
      this.#ownsClient = true;
      this.name = `RedisStore(${withoutCredentials(target)})`;
      // Connection errors are reported by the calls they fail (with this error named), not logged by ioredis.
      this.client.on('error', (error: Error) => { this.#lastError = error; });
    }
  }

  /** A store connected to Redis: resolves once the connection is ready, or rejects with a `StoreError` (and closes it) after `connectTimeoutMs`. */
  static async open(options: RedisStoreOptions = {}): Promise<RedisStore> {
    const store = new RedisStore(options);
    try {
      await store.ready(options.connectTimeoutMs ?? 2000);
      return store;
    } catch (error) {
      await store.close();
      throw error;
    }
  }

  /** Resolves once the client is connected and ready; rejects with a `StoreError` when it is not within `timeoutMs`. */
  async ready(timeoutMs = 2000): Promise<void> {
    this.#assertOpen();
    if (this.client.status === 'ready') return;
    await new Promise<void>((resolve, reject) => {
      const done = (error?: Error) => {
        clearTimeout(timer);
        this.client.off('ready', onReady);
        this.client.off('end', onEnd);
        if (error) reject(error); else resolve();
      };
      const onReady = () => done();
      const onEnd = () => done(this.#notConnected('ready()'));
      const timer = setTimeout(() => done(this.#notConnected(`ready() within ${timeoutMs} ms`)), timeoutMs);
      this.client.on('ready', onReady);
      this.client.on('end', onEnd);
      if (this.client.status === 'wait') this.client.connect().catch(() => undefined);
    });
  }

  async get(chatId: string): Promise<ChatState | undefined> {
    this.#assertOpen();
    checkChatId(chatId);
    const key = this.#key(chatId, 'state');
    const call = `get(chat ${JSON.stringify(chatId)})`;
    const [version, json] = await this.#call(call, () => this.client.hmget(key, 'version', 'state'));
    if (version === null && json === null) return undefined;
    if (version === null || json === null) throw this.#malformed(key, `field ${version === null ? 'version' : 'state'} is missing`);
    const state = decodeState(chatId, version, json);
    if (typeof state === 'string') throw this.#malformed(key, state);
    return state;
  }

  async commit(state: ChatState, expectedVersion: number): Promise<boolean> {
    this.#assertOpen();
    assertCommittable(state, expectedVersion);
    return this.#commit(state, expectedVersion, undefined);
  }

  /**
   * Ids of the stored chats starting with `prefix`, the `limit` smallest in code point order:
   * `SCAN` with `MATCH <keyPrefix>{<prefix>*}:state` over the whole keyspace of the server the
   * client is connected to (a cost that grows with every key it holds, not only the prefix's).
   */
  async listChatIds(prefix: string, limit: number): Promise<string[]> {
    this.#assertOpen();
    checkListing(prefix, limit);
    const head = `${this.keyPrefix}{`;
    const tail = '}:state';
    const pattern = `${globEscaped(head + prefix)}*${globEscaped(tail)}`;
    const found = new Set<string>();
    await this.#call(`listChatIds(prefix ${JSON.stringify(prefix)})`, async () => {
      let cursor = '0';
      do {
        const [next, keys] = await this.client.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT);
        cursor = next;
        // Only a state key ends with `}:state` (the other keys of a chat end with their own part).
        for (const key of keys) {
          const chatId = key.slice(head.length, key.length - tail.length);
          if (key.startsWith(head) && key.endsWith(tail) && chatId.startsWith(prefix)) found.add(chatId);
        }
      } while (cursor !== '0');
    });
    return [...found].sort(compareCodePoints).slice(0, limit);
  }

  /** Deletes the chat's state and the originals kept for it (its fencing counter stays, so later fences keep growing). */
  async delete(chatId: string): Promise<void> {
    this.#assertOpen();
    checkChatId(chatId);
    await this.#call(`delete(chat ${JSON.stringify(chatId)})`, () => this.client.del(this.#key(chatId, 'state'), this.#key(chatId, 'originals')));
  }

  /** Keeps (upserts) originals a summary replaced, in one MULTI (with the chat's expiry renewed when `originalsTtlMs` is set). */
  async putOriginals(chatId: string, records: readonly OriginalRecord[]): Promise<void> {
    this.#assertOpen();
    checkChatId(chatId);
    if (records.length === 0) return;
    const key = this.#key(chatId, 'originals');
    await this.#call(`putOriginals(chat ${JSON.stringify(chatId)}, ${records.length} record(s))`, async () => {
      const multi = this.client.multi();
      for (let at = 0; at < records.length; at += ORIGINALS_PER_COMMAND) {
        const fields: string[] = [];
        for (const r of records.slice(at, at + ORIGINALS_PER_COMMAND)) fields.push(r.id, encodeOriginal(r));
        multi.hset(key, ...fields);
      }
      if (this.originalsTtlMs !== undefined) multi.pexpire(key, this.originalsTtlMs);
      const replies = await multi.exec();
      const failed = replies?.find(([error]) => error);
      if (failed) throw failed[0];
    });
  }

  /** The kept originals with these ids, in the order asked (unknown ids skipped). */
  async getOriginals(chatId: string, ids: readonly string[]): Promise<OriginalRecord[]> {
    this.#assertOpen();
    checkChatId(chatId);
    if (ids.length === 0) return [];
    const key = this.#key(chatId, 'originals');
    const values = await this.#call(`getOriginals(chat ${JSON.stringify(chatId)}, ${ids.length} id(s))`, () => this.client.hmget(key, ...ids));
    const out: OriginalRecord[] = [];
    values.forEach((json, k) => {
      if (json !== null) out.push(this.#original(key, ids[k], json));
    });
    return out;
  }

  /** The chat's kept originals that hold the query's words, best match first (`rankRecords`, over every original of the chat). */
  async searchOriginals(chatId: string, query: string, limit: number): Promise<OriginalRecord[]> {
    this.#assertOpen();
    checkChatId(chatId);
    if (queryWords(query).length === 0 || limit < 1) return [];
    const key = this.#key(chatId, 'originals');
    const all = await this.#call(`searchOriginals(chat ${JSON.stringify(chatId)})`, () => this.client.hgetall(key));
    return rankRecords(Object.entries(all).map(([id, json]) => this.#original(key, id, json)), query, limit);
  }

  #original(key: string, id: string, json: string): OriginalRecord {
    const record = decodeOriginal(id, json);
    if (typeof record === 'string') throw new StoreError(this.name, `key ${JSON.stringify(key)}: ${record}; delete this key to drop the chat's originals`);
    return record;
  }

  /** Idempotent; afterwards every other method rejects. Quits the client the store made; a given client stays open. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (!this.#ownsClient) return;
    if (this.client.status === 'ready') {
      try {
        await this.client.quit();
        return;
      } catch {
        // not answered: drop the connection below
      }
    }
    this.client.disconnect();
  }

  async acquireLease(chatId: string, ttlMs: number = this.leaseMs): Promise<Lease | undefined> {
    this.#assertOpen();
    checkChatId(chatId);
    const ttl = wholeMs(ttlMs, 'acquireLease: ttlMs', this.leaseMs);
    const token = randomBytes(16).toString('base64url');
    const leaseKey = this.#key(chatId, 'lease');
    const fence = Number(await this.#script(ACQUIRE, `acquireLease(chat ${JSON.stringify(chatId)})`, [leaseKey, this.#key(chatId, 'fence')], [token, ttl]));
    if (fence === 0) return undefined;
    const where = `chat ${JSON.stringify(chatId)}, lease fence ${fence}`;
    return Object.freeze({
      chatId,
      token,
      fence,
      ttlMs: ttl,
      renew: async () => {
        this.#assertOpen();
        return Number(await this.#script(RENEW, `renew(${where})`, [leaseKey], [token, ttl])) === 1;
      },
      release: async () => {
        this.#assertOpen();
        await this.#script(RELEASE, `release(${where})`, [leaseKey], [token]);
      },
      commit: async (state: ChatState, expectedVersion: number) => {
        this.#assertOpen();
        assertCommittable(state, expectedVersion);
        if (state.chatId !== chatId) throw new InputError(`commit(chat ${JSON.stringify(state.chatId)}): state.chatId`, `must be the leased chat ${JSON.stringify(chatId)}`);
        return this.#commit(state, expectedVersion, { token, fence });
      },
    });
  }

  async #commit(state: ChatState, expectedVersion: number, lease: { token: string; fence: number } | undefined): Promise<boolean> {
    const key = this.#key(state.chatId, 'state');
    const call = `commit(chat ${JSON.stringify(state.chatId)}, version ${state.version}${lease ? `, lease fence ${lease.fence}` : ''})`;
    const reply = Number(await this.#script(COMMIT, call, [key, this.#key(state.chatId, 'lease')], [
      expectedVersion, state.version, encodeState(state), lease?.token ?? '', lease?.fence ?? 0,
    ]));
    if (reply === 1) return true;
    if (reply === 0) return false;
    if (reply === COMMIT_LEASE_LOST) throw new StoreError(this.name, `${call}: the lease is no longer held (it expired or was released), so nothing was written; another process may be summarizing this chat`);
    if (reply === COMMIT_BAD_VERSION) throw this.#malformed(key, 'field version is not a number');
    if (reply === COMMIT_FENCE_BEHIND) throw new StoreError(this.name, `${call}: a lease with a newer fence already wrote this chat, so nothing was written`);
    throw new StoreError(this.name, `${call}: unexpected reply ${reply} from the commit script`);
  }

  /** Runs a Lua script by its SHA1, sending its source once when Redis does not know it (after a restart, say). */
  async #script(script: LuaScript, call: string, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    return this.#call(call, async () => {
      try {
        return await this.client.evalsha(script.sha, keys.length, ...keys, ...args);
      } catch (error) {
        if (!String((error as Error).message).startsWith('NOSCRIPT')) throw error;
        return this.client.eval(script.source, keys.length, ...keys, ...args);
      }
    });
  }

  /** Runs one Redis call; a failure is rethrown as a `StoreError` saying which call failed and why (the original as `cause`). */
  async #call<T>(call: string, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof CtxfoldError) throw error;
      if (this.client.status !== 'ready') throw this.#notConnected(call, error);
      const message = (error as Error).message;
      const hint = message.startsWith('WRONGTYPE') ? ': a key of this chat holds a value of another type; delete it to rebuild the chat\'s summary' : '';
      throw new StoreError(this.name, `${call}: ${message}${hint}`, { cause: error });
    }
  }

  #notConnected(call: string, cause?: unknown): StoreError {
    const last = this.#lastError ? `; last connection error: ${this.#lastError.message}` : '';
    return new StoreError(this.name, `${call}: not connected to Redis (status ${this.client.status}${last}); the call was not sent, and the client keeps reconnecting`, { cause: cause ?? this.#lastError });
  }

  #malformed(key: string, rule: string): StoreError {
    return new StoreError(this.name, `key ${JSON.stringify(key)}: ${rule}; delete this key to rebuild the chat's summary`);
  }

  /** `<prefix>{<chatId>}:<part>`: the braces make every key of one chat hash to the same Redis Cluster slot. */
  #key(chatId: string, part: 'state' | 'lease' | 'fence' | 'originals'): string {
    return `${this.keyPrefix}{${chatId}}:${part}`;
  }

  #assertOpen(): void {
    if (this.#closed) throw new StoreError(this.name, 'the store is closed; open a new one');
  }
}

/** `text` as a Redis glob pattern that matches only itself: `*`, `?`, `[`, `]` and `\\` escaped. */
function globEscaped(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

function checkChatId(chatId: unknown): asserts chatId is string {
  if (typeof chatId !== 'string' || chatId === '') throw new InputError('chatId', `must be a non-empty string, got ${JSON.stringify(chatId)}`);
}

function wholeMs(value: unknown, path: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) throw new InputError(path, `must be a whole number of ms >= 1, got ${String(value)}`);
  return value;
}

/** The URL without user name and password, for messages. */
function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//');
  }
}
