import { afterAll, afterEach, beforeAll, expect, test } from '@jest/globals';
import { Redis } from 'ioredis';
import { RedisStore } from '../../src/store/redis-store.js';
import { redisDescribe, startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { assertBuilt, startWorker, type JobRecord, type Worker } from '../helpers/redis-workers.js';
import { killLoop } from '../helpers/crash-loop.js';

let server: RedisServer;
let raw: Redis;
const workers: Worker[] = [];

beforeAll(async () => {
  assertBuilt();
  server = await startRedisServer();
  raw = new Redis(server.url);
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.close()));
});
afterAll(async () => {
  raw?.disconnect();
  await server?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

redisDescribe('a process killed in the middle of a summary', () => {
  test('SIGKILL mid-summary: its lease expires (never released) and the other process then folds the chat', async () => {
    const prefix = 'kill:';
    const leaseMs = 500;
    // A slow summarizer: the job is surely running when the process dies.
    const [a, b] = await Promise.all(['A', 'B'].map((name) => startWorker(name, server.url, prefix, leaseMs, 800)));
    workers.push(a!, b!);
    const log = async () => (await raw.lrange(`${prefix}log`, 0, -1)).map((line) => JSON.parse(line) as JobRecord);

    expect((await a!.request(1, 12)).ok).toBe(true);
    for (let i = 0; i < 200 && !(await log()).some((r) => r.e === 'start' && r.name === 'A'); i++) await sleep(10);
    const fenceOfA = Number(await raw.get(`${prefix}{chat-1}:fence`));
    expect(fenceOfA).toBeGreaterThanOrEqual(1);
    a!.child.kill('SIGKILL');
    await new Promise((resolve) => a!.child.once('exit', resolve));

    // Right after the kill the dead process's lease still stands: B skips the chat.
    expect((await b!.request(1, 13)).ok).toBe(true);
    // The lease was never released: it lapses by itself within leaseMs of its last renewal.
    const pttl = await raw.pttl(`${prefix}{chat-1}:lease`);
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(leaseMs);
    await sleep(pttl + 20);
    expect(await raw.exists(`${prefix}{chat-1}:lease`)).toBe(0);

    expect((await b!.request(1, 14)).ok).toBe(true);
    const { records, stats } = await b!.drain();
    expect(stats.summariesSkipped).toBe(1);
    expect(records.filter((r) => r.e === 'done').map((r) => r.version)).toEqual([1]);
    const store = await RedisStore.open({ url: server.url, keyPrefix: prefix });
    try {
      const state = await store.get('chat-1');
      expect(state?.version).toBe(1);
      expect(state?.summary).toMatch(/folded by B/);
    } finally {
      await store.close();
    }
    // B's lease came after A's: a larger fence.
    expect(Number(await raw.get(`${prefix}{chat-1}:fence`))).toBe(fenceOfA + 1);
    expect(await raw.hget(`${prefix}{chat-1}:state`, 'fence')).toBe(String(fenceOfA + 1));
  });
});

redisDescribe('a compressor on Redis killed at random points', () => {
  // Long on purpose (50 processes in sequence); the loop itself is bounded, so it ends well before.
  test('50 kills mid-request and mid-job: the state is always a valid prefix, no acknowledged commit lost', async () => {
    assertBuilt(['src/store/redis-store.ts', 'src/runtime/lease-job.ts', 'src/runtime/compressor.ts', 'src/runtime/summary-job.ts']);
    const keyPrefix = 'crash:';
    const t0 = performance.now();
    const store = await RedisStore.open({ url: server.url, keyPrefix, commandTimeoutMs: 5000 });
    try {
      // A short lease: the one a killed worker held lapses soon, so the next worker folds again.
      const result = await killLoop({ kind: 'redis', target: server.url, keyPrefix, leaseMs: 400, store, kills: 50, seed: 0xbead, killsPerChat: 10, maxDelayMs: 400 });
      process.stdout.write(`redis kills: ${JSON.stringify(result.phases)}; ${result.requests} requests, ${result.acks} commits acknowledged, ${result.failedJobs} jobs failed; ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
      expect(result.problems).toEqual([]);
      // The kills must have landed inside the work, or this proved nothing.
      expect(result.duringRequest).toBeGreaterThanOrEqual(5);
      expect(result.duringJob).toBeGreaterThanOrEqual(5);
      // Enough acknowledged commits to check: a loaded host finishes fewer jobs between kills.
      expect(result.acks).toBeGreaterThanOrEqual(20);
    } finally {
      await store.close();
    }
  }, 600_000);
});
