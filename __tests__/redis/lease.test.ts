import { afterAll, afterEach, beforeAll, expect, test } from '@jest/globals';
import { Redis } from 'ioredis';
import { createCompressor, type Compressor } from '../../src/index.js';
import { StoreError } from '../../src/errors.js';
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';
import { hasLeases } from '../../src/store/lease.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { RedisStore, type RedisStoreOptions } from '../../src/store/redis-store.js';
import type { ChatState } from '../../src/store/state.js';
import type { Summarizer } from '../../src/summarize/summarizer.js';
import { pairingProblems } from '../helpers/oracle.js';
import { redisDescribe, startRedisServer, type RedisServer } from '../helpers/redis-server.js';

let server: RedisServer;
let raw: Redis;
const stores: RedisStore[] = [];
const compressors: Compressor[] = [];
let prefixSeq = 0;

beforeAll(async () => {
  server = await startRedisServer();
  raw = new Redis(server.url);
});
afterAll(async () => {
  raw?.disconnect();
  await server?.stop();
});
afterEach(async () => {
  for (const c of compressors.splice(0)) await c.close(50);
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

/** `count` stores on the test server, each with its own connection, sharing one fresh key prefix (as separate processes would). */
async function sharing(count: number, options: Omit<RedisStoreOptions, 'url' | 'keyPrefix'> = {}): Promise<{ prefix: string; stores: RedisStore[] }> {
  const prefix = `l${prefixSeq++}:`;
  const made = await Promise.all(Array.from({ length: count }, () => RedisStore.open({ url: server.url, keyPrefix: prefix, ...options })));
  stores.push(...made);
  return { prefix, stores: made };
}

function stateOf(chatId: string, version: number, summary = `summary ${version}`): ChatState {
  return {
    chatId, version, summary, coveredIds: [`m${version}`], summarizer: 't', tokensBefore: 10, tokensAfter: 1,
    createdAt: '2024-01-01T00:00:00.000Z', updatedAt: '2024-01-01T00:00:00.000Z',
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const until = async (condition: () => boolean | Promise<boolean>, ms = 5000) => {
  const end = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error('condition never held');
    await sleep(5);
  }
};

redisDescribe('per-chat leases on RedisStore', () => {
  test('the capability is detected by the type guard: RedisStore has leases, MemoryStore has not', async () => {
    const { stores: [store] } = await sharing(1);
    expect(hasLeases(store!)).toBe(true);
    expect(hasLeases(new MemoryStore())).toBe(false);
  });

  test('two holders: the second is refused while the first holds it; after release it is granted with a larger fence', async () => {
    const { prefix, stores: [a, b] } = await sharing(2);
    const first = await a!.acquireLease('chat', 5000);
    expect(first).toBeDefined();
    expect(first!.fence).toBeGreaterThanOrEqual(1);
    expect(first!.token).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(await raw.get(`${prefix}{chat}:lease`)).toBe(first!.token);
    const ttl = await raw.pttl(`${prefix}{chat}:lease`);
    expect(ttl).toBeGreaterThan(4000);
    expect(ttl).toBeLessThanOrEqual(5000);
    // Another process, and this same store again: both refused while it is held.
    await expect(b!.acquireLease('chat', 5000)).resolves.toBeUndefined();
    await expect(a!.acquireLease('chat', 5000)).resolves.toBeUndefined();
    // Ten racers for a free chat: exactly one wins.
    const racers = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a! : b!).acquireLease('free', 5000)));
    expect(racers.filter((l) => l !== undefined)).toHaveLength(1);
    await first!.release();
    expect(await raw.exists(`${prefix}{chat}:lease`)).toBe(0);
    const second = await b!.acquireLease('chat', 5000);
    expect(second!.fence).toBe(first!.fence + 1);
    expect(second!.token).not.toBe(first!.token);
    // The default time to live is the store's leaseMs.
    await second!.release();
    const byDefault = await a!.acquireLease('chat');
    expect(byDefault!.ttlMs).toBe(15_000);
    expect(await raw.pttl(`${prefix}{chat}:lease`)).toBeGreaterThan(14_000);
  });

  test('expiry: a lease not renewed ends after its ttl and another holder gets it', async () => {
    const { stores: [a, b] } = await sharing(2);
    const first = await a!.acquireLease('chat', 200);
    await expect(b!.acquireLease('chat', 200)).resolves.toBeUndefined();
    await sleep(250);
    const second = await b!.acquireLease('chat', 1000);
    expect(second).toBeDefined();
    expect(second!.fence).toBeGreaterThan(first!.fence);
  });

  test('renewal: a renewed lease outlives its ttl; once lost, renew answers false and changes nothing', async () => {
    const { prefix, stores: [a, b] } = await sharing(2);
    const lease = (await a!.acquireLease('chat', 300))!;
    for (let i = 0; i < 6; i++) {
      await sleep(100);
      expect(await lease.renew()).toBe(true);
    }
    // 600 ms after it was granted, twice its ttl: still held.
    await expect(b!.acquireLease('chat', 300)).resolves.toBeUndefined();
    await sleep(350);
    const other = (await b!.acquireLease('chat', 5000))!;
    expect(other).toBeDefined();
    expect(await lease.renew()).toBe(false);
    expect(await raw.get(`${prefix}{chat}:lease`)).toBe(other.token);
    expect(await raw.pttl(`${prefix}{chat}:lease`)).toBeGreaterThan(4000);
  });

  test('fenced commit: lands while the lease is held; refused once it expired or was released, and nothing is written', async () => {
    const { stores: [a, b] } = await sharing(2);
    const lease = (await a!.acquireLease('chat', 200))!;
    expect(await lease.commit(stateOf('chat', 1), 0)).toBe(true);
    // A lost compare-and-set under a held lease is false, as for a plain commit.
    expect(await lease.commit(stateOf('chat', 1, 'again'), 0)).toBe(false);
    await sleep(250);
    // Expired, nobody else holds it yet: still refused.
    const refused = await lease.commit(stateOf('chat', 2, 'late'), 1).then(() => undefined, (e: unknown) => e);
    expect(refused).toBeInstanceOf(StoreError);
    expect((refused as Error).message).toMatch(/commit\(chat "chat", version 2, lease fence \d+\): the lease is no longer held \(it expired or was released\), so nothing was written/);
    // Another holder now: the old lease is refused again, the new one writes.
    const next = (await b!.acquireLease('chat', 5000))!;
    await expect(lease.commit(stateOf('chat', 2, 'late'), 1)).rejects.toThrow(/the lease is no longer held/);
    expect(await next.commit(stateOf('chat', 2, 'by the new holder'), 1)).toBe(true);
    await next.release();
    await expect(next.commit(stateOf('chat', 3), 2)).rejects.toThrow(/the lease is no longer held/);
    expect(await a!.get('chat')).toEqual(stateOf('chat', 2, 'by the new holder'));
    // A lease commits only its own chat.
    const other = (await a!.acquireLease('other', 5000))!;
    await expect(other.commit(stateOf('chat', 3), 2)).rejects.toThrow(/state\.chatId: must be the leased chat "other"/);
  });

  test('fencing token: a write by a newer fence stops an older one even if the older token were somehow still in place', async () => {
    const { prefix, stores: [a] } = await sharing(1);
    const lease = (await a!.acquireLease('chat', 5000))!;
    expect(await lease.commit(stateOf('chat', 1), 0)).toBe(true);
    expect(await raw.hget(`${prefix}{chat}:state`, 'fence')).toBe(String(lease.fence));
    // As if a later holder (fence + 1) had written, and this token were still in the lease key.
    await raw.hset(`${prefix}{chat}:state`, 'fence', String(lease.fence + 1));
    await expect(lease.commit(stateOf('chat', 2), 1)).rejects.toThrow(/a lease with a newer fence already wrote this chat, so nothing was written/);
    expect((await a!.get('chat'))?.version).toBe(1);
  });

  test('release by a non-owner is refused: an expired holder releasing leaves the new holder\'s lease in place', async () => {
    const { prefix, stores: [a, b] } = await sharing(2);
    const old = (await a!.acquireLease('chat', 80))!;
    await sleep(110);
    const current = (await b!.acquireLease('chat', 5000))!;
    await old.release();
    expect(await raw.get(`${prefix}{chat}:lease`)).toBe(current.token);
    await expect(a!.acquireLease('chat', 5000)).resolves.toBeUndefined();
    expect(await current.renew()).toBe(true);
    // A key that someone else set is not released either.
    await raw.set(`${prefix}{x}:lease`, 'foreign');
    const x = await b!.acquireLease('x', 5000);
    expect(x).toBeUndefined();
  });

  test('ttl values are checked naming the argument', async () => {
    const { stores: [a] } = await sharing(1);
    await expect(a!.acquireLease('chat', 0)).rejects.toThrow(/acquireLease: ttlMs: must be a whole number of ms >= 1, got 0/);
    await expect(a!.acquireLease('chat', 1.5)).rejects.toThrow(/ttlMs/);
    await expect(a!.acquireLease('', 100)).rejects.toThrow(/chatId: must be a non-empty string/);
  });
});

/** A summarizer whose calls wait until released; counts calls and exposes each call's signal. */
function heldSummarizer(name = 'held') {
  const waiting: (() => void)[] = [];
  const signals: AbortSignal[] = [];
  const summarizer: Summarizer = {
    name,
    inputBudgetTokens: 1_000_000,
    async summarize(req) {
      signals.push(req.signal!);
      await new Promise<void>((resolve) => waiting.push(resolve));
      return `${name}: ${req.messages.map((m) => m.text).filter(Boolean).join(' | ').slice(0, 200)}`;
    },
  };
  return { summarizer, calls: () => signals.length, signals, release: () => waiting.splice(0).forEach((r) => r()) };
}

/** A history of `turns` answered user turns, long enough to be over a 100-token threshold after a few. */
function history(turns: number): OpenAIChatMessage[] {
  const out: OpenAIChatMessage[] = [{ role: 'system', content: 'Be brief.' }];
  for (let t = 1; t <= turns; t++) {
    out.push({ role: 'user', content: `Note ${t}: item ${t} is K${t}00 ${'word '.repeat(30)}` });
    out.push({ role: 'assistant', content: `Noted item ${t}.` });
  }
  out.push({ role: 'user', content: 'What are my codes?' });
  return out;
}

const planning = { maxContextTokens: 400, compressionThresholdTokens: 100, keepLast: 2 } as const;

redisDescribe('the compressor on a store with leases', () => {
  test('two compressors sharing Redis: while one folds a chat, the other skips it (event and count), then folds it after', async () => {
    const { stores: [sa, sb] } = await sharing(2);
    const heldA = heldSummarizer('a');
    const heldB = heldSummarizer('b');
    const a = createCompressor({ ...planning, store: sa!, summarizer: heldA.summarizer });
    const b = createCompressor({ ...planning, store: sb!, summarizer: heldB.summarizer });
    compressors.push(a, b);
    const skipped: string[] = [];
    b.on('summary:skipped', (e) => skipped.push(`${e.chatId} ${e.reason}`));
    const chatA = a.wrap(async (req: { chatId: string; messages: OpenAIChatMessage[] }) => req.messages);
    const chatB = b.wrap(async (req: { chatId: string; messages: OpenAIChatMessage[] }) => req.messages);
    await chatA({ chatId: 'c', messages: history(6) });
    await until(() => heldA.calls() === 1);
    await chatB({ chatId: 'c', messages: history(7) });
    await b.drain();
    expect(skipped).toEqual(['c leased-elsewhere']);
    expect(b.stats().summariesSkipped).toBe(1);
    expect(heldB.calls()).toBe(0);
    heldA.release();
    await a.drain();
    expect((await sa!.get('c'))?.summarizer).toBe('a');
    // The lease is free again: b's next request folds the chat on top of a's summary.
    await chatB({ chatId: 'c', messages: history(9) });
    await until(() => heldB.calls() === 1);
    heldB.release();
    await b.drain();
    const state = await sb!.get('c');
    expect(state?.version).toBe(2);
    expect(state?.summarizer).toBe('b');
    expect(a.stats().summariesDone + b.stats().summariesDone).toBe(2);
  });

  test('a lease lost while the job runs aborts it: summary:failed names the lost lease, nothing is written', async () => {
    const { prefix, stores: [store] } = await sharing(1, { leaseMs: 300 });
    const held = heldSummarizer();
    const c = createCompressor({ ...planning, store: store!, summarizer: held.summarizer });
    compressors.push(c);
    const failed: unknown[] = [];
    c.on('summary:failed', (e) => failed.push(e.error));
    await c.wrap(async () => 'ok')({ chatId: 'c', messages: history(6) });
    await until(() => held.calls() === 1);
    // The job keeps its lease past its ttl by renewing it...
    await sleep(450);
    expect(await raw.get(`${prefix}{c}:lease`)).not.toBeNull();
    // ...until someone else takes it over (as if it had expired during a pause).
    await raw.set(`${prefix}{c}:lease`, 'another holder', 'PX', 5000);
    await until(() => held.signals[0]!.aborted);
    await c.drain();
    expect(failed).toHaveLength(1);
    expect(String((failed[0] as Error).message)).toMatch(/chat "c": the lease \(fence \d+\) was lost while its summary job ran, so the job stopped and wrote nothing/);
    held.release();
    expect(await store!.get('c')).toBeUndefined();
    // The other holder's lease is left alone.
    expect(await raw.get(`${prefix}{c}:lease`)).toBe('another holder');
  });

  test('a job past its time limit releases the lease at once, even when its work ignores the abort', async () => {
    const { prefix, stores: [sa, sb] } = await sharing(2);
    let finishHung!: () => void;
    const hung: Summarizer = {
      name: 'hung', inputBudgetTokens: 1_000_000,
      summarize: () => new Promise((resolve) => { finishHung = () => resolve('late summary'); }),
    };
    const a = createCompressor({ ...planning, store: sa!, summarizer: hung, jobTimeoutMs: 150 });
    compressors.push(a);
    await a.wrap(async () => 'ok')({ chatId: 'c', messages: history(6) });
    await until(async () => (await raw.exists(`${prefix}{c}:lease`)) === 1);
    await a.drain(); // returns at the time limit
    expect(await raw.exists(`${prefix}{c}:lease`)).toBe(0);
    // Another process can take the chat at once; the hung work finishing later writes nothing.
    const next = await sb!.acquireLease('c');
    expect(next).toBeDefined();
    finishHung();
    await sleep(20);
    expect(await sa!.get('c')).toBeUndefined();
    await next!.release();
  });
});

redisDescribe('Redis unreachable', () => {
  test('requests are served at once without the summary (a warning each), summaries fail, and resume when Redis returns', async () => {
    const own = await startRedisServer();
    try {
      const store = await RedisStore.open({ url: own.url });
      stores.push(store);
      const e = createCompressor({ ...planning, store }); // the extractive summarizer
      compressors.push(e);
      const warnings: string[] = [];
      const failures: string[] = [];
      e.on('warning', (w) => warnings.push(w.code));
      e.on('summary:failed', (f) => failures.push((f.error as Error).message));
      const chat = e.wrap(async (req: { chatId: string; messages: OpenAIChatMessage[] }) => req.messages);
      await chat({ chatId: 'c', messages: history(6) });
      await e.drain();
      expect((await store.get('c'))?.version).toBe(1);

      await own.kill();
      await until(() => store.client.status !== 'ready');
      const started = performance.now();
      for (let i = 0; i < 20; i++) {
        const view = await chat({ chatId: 'c', messages: history(7 + i) });
        expect(pairingProblems(view)).toEqual([]);
        expect(view.some((m) => String(m.content).startsWith('[Summary of'))).toBe(false);
      }
      const perRequest = (performance.now() - started) / 20;
      await e.drain();
      expect(warnings.filter((w) => w === 'store-unavailable')).toHaveLength(20);
      expect(e.stats().storeFailures).toBe(20);
      expect(failures.length).toBeGreaterThan(0);
      expect(failures[0]).toMatch(/RedisStore\(redis:\/\/127\.0\.0\.1:\d+\): acquireLease\(chat "c"\): not connected to Redis/);
      expect(perRequest).toBeLessThan(50);

      await own.restart(); // no persistence: Redis comes back empty
      await store.ready(3000);
      const done: number[] = [];
      e.on('summary:done', (d) => done.push(d.version));
      await chat({ chatId: 'c', messages: history(30) });
      await e.drain();
      expect(done).toEqual([1]);
      const view = await chat({ chatId: 'c', messages: history(30) });
      expect(view.some((m) => String(m.content).startsWith('[Summary of'))).toBe(true);
    } finally {
      await own.stop();
    }
  });
});
