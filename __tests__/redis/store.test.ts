import { expect, test } from '@jest/globals';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { StoreError } from '../../src/errors.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { RedisStore } from '../../src/store/redis-store.js';
import type { StateStore } from '../../src/store/state.js';
import { redisDescribe } from '../helpers/redis-server.js';
import { redisTestbed } from '../helpers/redis-testbed.js';
import { stateOf, stateStoreContract } from '../helpers/store-contract.js';
import { chatListContract } from '../helpers/chat-list-contract.js';

const bed = redisTestbed('t');

/** A store on the test server under a fresh key prefix, so tests never see each other's keys. */
function fresh(extra: { keyPrefix?: string } = {}): Promise<RedisStore> {
  return bed.fresh(extra.keyPrefix === undefined ? {} : { keyPrefix: extra.keyPrefix });
}

redisDescribe('RedisStore: the StateStore contract (the cases of store.test.ts)', () => {
  stateStoreContract(() => fresh());

  test('chat ids holding Redis key syntax (braces, colons) round-trip and stay apart', async () => {
    const store = await fresh();
    const odd = 'чат/{slot}:a b:{x}';
    expect(await store.commit(stateOf(odd, 1), 0)).toBe(true);
    expect(await store.commit(stateOf('{slot}', 1), 0)).toBe(true);
    expect((await store.get(odd))?.chatId).toBe(odd);
    expect((await store.get('{slot}'))?.summary).toBe('summary 1 of {slot}');
  });

  test('a closed store refuses leases too', async () => {
    const store = await fresh();
    await store.close();
    await expect(store.acquireLease('a')).rejects.toThrow(/store is closed/);
  });
});

redisDescribe('RedisStore: listing chats by prefix (SCAN MATCH, the cases of store.test.ts)', () => {
  chatListContract(() => fresh());
});

redisDescribe('RedisStore agrees with MemoryStore', () => {
  type Op = { kind: 'commit'; chat: string; expected: number; bump: number } | { kind: 'delete'; chat: string } | { kind: 'get'; chat: string };
  const op: fc.Arbitrary<Op> = fc.oneof(
    { arbitrary: fc.record({ kind: fc.constant('commit' as const), chat: fc.constantFrom('a', 'b'), expected: fc.nat(4), bump: fc.constantFrom(1, 1, 1, 0, 2) }), weight: 6 },
    { arbitrary: fc.record({ kind: fc.constant('delete' as const), chat: fc.constantFrom('a', 'b') }), weight: 1 },
    { arbitrary: fc.record({ kind: fc.constant('get' as const), chat: fc.constantFrom('a', 'b') }), weight: 2 },
  );

  async function run(store: StateStore, o: Op): Promise<unknown> {
    try {
      if (o.kind === 'delete') return await store.delete(o.chat);
      if (o.kind === 'get') return await store.get(o.chat);
      return await store.commit(stateOf(o.chat, o.expected + o.bump), o.expected);
    } catch (error) {
      return `error: ${(error as Error).message}`;
    }
  }

  test('any sequence of commits, deletes and gets gives the same results on both', async () => {
    const redis = await fresh();
    let round = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 30, size: 'max' }), async (ops) => {
        const memory = new MemoryStore();
        const prefix = `r${round++}-`;
        for (const o of ops) {
          const scoped = { ...o, chat: prefix + o.chat };
          expect(await run(redis, scoped)).toEqual(await run(memory, scoped));
        }
        await memory.close();
      }),
      { seed: 20240611, numRuns: 100 },
    );
  });
});

redisDescribe('RedisStore on a real server', () => {
  test('a chat is one hash under the key prefix, fields version and state; two prefixes never meet', async () => {
    const a = await fresh({ keyPrefix: 'appA:' });
    const b = await fresh({ keyPrefix: 'appB:' });
    expect(await a.commit(stateOf('x', 1), 0)).toBe(true);
    expect(await bed.raw.type('appA:{x}:state')).toBe('hash');
    const fields = await bed.raw.hgetall('appA:{x}:state');
    expect(Object.keys(fields).sort()).toEqual(['state', 'version']);
    expect(fields.version).toBe('1');
    expect(JSON.parse(fields.state!)).toEqual(stateOf('x', 1));
    await expect(b.get('x')).resolves.toBeUndefined();
    expect(await b.commit(stateOf('x', 1, { summary: 'other app' }), 0)).toBe(true);
    expect((await a.get('x'))?.summary).toBe('summary 1 of x');
  });

  test('two stores (two connections) see each other\'s commits, and compare-and-set holds between them', async () => {
    const a = await fresh({ keyPrefix: 'shared2:' });
    const b = await fresh({ keyPrefix: 'shared2:' });
    expect(await a.commit(stateOf('c', 1), 0)).toBe(true);
    expect(await b.get('c')).toEqual(stateOf('c', 1));
    const [fromA, fromB] = await Promise.all([a.commit(stateOf('c', 2, { summary: 'from a' }), 1), b.commit(stateOf('c', 2, { summary: 'from b' }), 1)]);
    expect([fromA, fromB].filter(Boolean)).toHaveLength(1);
    expect((await a.get('c'))?.summary).toBe(fromA ? 'from a' : 'from b');
  });

  test('a malformed stored value is a StoreError naming the key and the rule; other chats still read', async () => {
    const store = await fresh({ keyPrefix: 'bad:' });
    expect(await store.commit(stateOf('fine', 1), 0)).toBe(true);
    expect(await store.commit(stateOf('broken', 1), 0)).toBe(true);
    const key = 'bad:{broken}:state';
    const cases: [() => Promise<unknown>, RegExp][] = [
      [() => bed.raw.hset(key, 'state', '{"chatId": "broken", "version": 1'), /field state is not valid JSON/],
      [() => bed.raw.hset(key, 'state', '[1, 2]'), /field state must be a JSON object/],
      [() => bed.raw.hset(key, 'state', JSON.stringify({ ...stateOf('broken', 1), coveredIds: ['x', 2] })), /field state\.coveredIds must be an array of strings/],
      [() => bed.raw.hset(key, 'state', JSON.stringify({ ...stateOf('broken', 1), summary: null })), /field state\.summary must be a string, found null/],
      [() => bed.raw.hset(key, 'state', JSON.stringify({ ...stateOf('broken', 1), tokensAfter: 1.5 })), /field state\.tokensAfter must be a whole number/],
      [() => bed.raw.hset(key, 'state', JSON.stringify(stateOf('someone-else', 1))), /field state\.chatId must be "broken", found "someone-else"/],
      [() => bed.raw.hset(key, 'state', JSON.stringify(stateOf('broken', 1)), 'version', '2'), /field state\.version must equal field version \(2\)/],
      [() => bed.raw.hset(key, 'version', 'two'), /field version must be a whole number >= 1, found "two"/],
      [() => bed.raw.hdel(key, 'state'), /field state is missing/],
    ];
    for (const [corrupt, message] of cases) {
      await corrupt();
      const error = await store.get('broken').then(() => undefined, (e: unknown) => e);
      expect(error).toBeInstanceOf(StoreError);
      expect((error as Error).message).toMatch(/^RedisStore\(redis:\/\/127\.0\.0\.1:\d+\): key "bad:\{broken\}:state": /);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).toMatch(/delete this key to rebuild the chat's summary$/);
    }
    // A version that is not a number also stops a commit, naming the key.
    await bed.raw.hset(key, 'version', 'two', 'state', '{}');
    await expect(store.commit(stateOf('broken', 2), 1)).rejects.toThrow(/key "bad:\{broken\}:state": field version is not a number/);
    // A key of another type.
    await bed.raw.del(key);
    await bed.raw.set(key, 'a string');
    await expect(store.get('broken')).rejects.toThrow(/get\(chat "broken"\): WRONGTYPE .*delete it to rebuild/);
    await expect(store.commit(stateOf('broken', 1), 0)).rejects.toThrow(/WRONGTYPE/);
    expect(await store.get('fine')).toEqual(stateOf('fine', 1));
    await store.delete('broken');
    expect(await store.commit(stateOf('broken', 1), 0)).toBe(true);
    expect(await store.get('broken')).toEqual(stateOf('broken', 1));
  });

  test('options are checked naming the field; a URL\'s credentials never appear in messages', async () => {
    expect(() => new RedisStore({ url: 'http://x' })).toThrow(/options\.url: must be a redis:\/\/ or rediss:\/\/ URL/);
    expect(() => new RedisStore({ url: bed.server.url, client: bed.raw })).toThrow(/options\.url: give url or client, not both/);
    expect(() => new RedisStore({ url: bed.server.url, leaseMs: 0 })).toThrow(/options\.leaseMs: must be a whole number of ms >= 1, got 0/);
    expect(() => new RedisStore({ url: bed.server.url, keyPrefix: 5 as unknown as string })).toThrow(/options\.keyPrefix: must be a string/);
    const secret = new RedisStore({ url: `redis://user:hunter2@127.0.0.1:${bed.server.port}` });
    bed.track(secret);
    expect(secret.name).toBe(`RedisStore(redis://127.0.0.1:${bed.server.port})`);
  });

  test('a given client is used as is and left open by close()', async () => {
    const client = new Redis(bed.server.url);
    const store = new RedisStore({ client, keyPrefix: 'given:' });
    expect(await store.commit(stateOf('g', 1), 0)).toBe(true);
    await store.close();
    expect(await client.hget('given:{g}:state', 'version')).toBe('1');
    client.disconnect();
  });

  test('nothing listening: open() rejects within connectTimeoutMs; calls fail at once, naming the store and the cause', async () => {
    const closedPort = bed.server.port === 1 ? 2 : 1; // a privileged port nothing listens on here
    const started = performance.now();
    await expect(RedisStore.open({ url: `redis://127.0.0.1:${closedPort}`, connectTimeoutMs: 300 }))
      .rejects.toThrow(new RegExp(`RedisStore\\(redis://127\\.0\\.0\\.1:${closedPort}\\): ready\\(\\) within 300 ms: not connected to Redis .*ECONNREFUSED`));
    expect(performance.now() - started).toBeLessThan(1500);
    const store = new RedisStore({ url: `redis://127.0.0.1:${closedPort}` });
    bed.track(store);
    const t0 = performance.now();
    await expect(store.get('a')).rejects.toThrow(/get\(chat "a"\): not connected to Redis/);
    await expect(store.commit(stateOf('a', 1), 0)).rejects.toBeInstanceOf(StoreError);
    expect(performance.now() - t0).toBeLessThan(100);
  });
});
