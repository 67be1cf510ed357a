import { afterAll, afterEach, beforeAll, expect, test } from '@jest/globals';
import { RedisStore } from '../../src/store/redis-store.js';
import { redisDescribe, startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { assertBuilt, committed, overlaps, percentile, range, startWorker, type Served, type Worker } from '../helpers/redis-workers.js';
import { checkChat } from '../helpers/crash-checks.js';
import { servingChat } from '../helpers/serving-chat.js';

// Two separate node processes, each a compressor on a RedisStore over the same real redis-server
// (built code, dist/), and the redis-server is killed in the middle of their run.

let server: RedisServer;
const workers: Worker[] = [];

beforeAll(async () => {
  assertBuilt();
  // An append-only file, so what Redis acknowledged survives the kill.
  server = await startRedisServer({ persist: true });
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.close()));
});
afterAll(async () => {
  await server?.stop();
});

async function twoWorkers(prefix: string, leaseMs: number, summarizerMs: number): Promise<Worker[]> {
  const started = await Promise.all(['A', 'B'].map((name) => startWorker(name, server.url, prefix, leaseMs, summarizerMs)));
  workers.push(...started);
  return started;
}

redisDescribe('two processes sharing one Redis, and Redis goes down', () => {
  test('Redis killed mid-run and restarted: requests keep being served, summaries resume, state consistent afterwards', async () => {
    const prefix = 'outage:';
    const leaseMs = 600;
    const [a, b] = await twoWorkers(prefix, leaseMs, 25);
    const CHATS = 20;
    const PER_CHAT = 20;
    const served: (Served & { during: boolean })[] = [];
    let phase: 'up' | 'down' | 'back' = 'up';
    let restartedAt = Infinity;
    let outage: Promise<void> | undefined;
    const pace = () => new Promise((resolve) => setTimeout(resolve, 2));
    await Promise.all(range(CHATS).map(async (chat) => {
      for (let k = 0; k < PER_CHAT; k++) {
        const s = await (k % 2 === chat % 2 ? a! : b!).request(chat, 4 + k);
        served.push({ ...s, during: phase === 'down' });
        // At 40% of the requests Redis is killed (jobs are running); at 70% it is started again.
        if (served.length === Math.floor(CHATS * PER_CHAT * 0.4)) outage = server.kill().then(() => { phase = 'down'; });
        if (served.length === Math.floor(CHATS * PER_CHAT * 0.7)) {
          await outage;
          phase = 'back';
          restartedAt = performance.timeOrigin + performance.now();
          await server.restart();
        }
        await pace();
      }
    }));
    await Promise.all([a!.ready(), b!.ready()]);
    // Leases held when Redis died are persisted and lapse within leaseMs; then every chat asks again.
    await new Promise((resolve) => setTimeout(resolve, leaseMs + 50));
    await Promise.all(range(CHATS).map((chat) => (chat % 2 ? a! : b!).request(chat, 4 + PER_CHAT)));
    const drained = await Promise.all([a!.drain(), b!.drain()]);
    const records = drained.flatMap((d) => d.records);

    expect(served.filter((s) => !s.ok)).toEqual([]);
    expect(served.filter((s) => s.violations !== 0 || s.overBudget)).toEqual([]);
    const during = served.filter((s) => s.during);
    expect(during.length).toBeGreaterThan(20);
    // No request waited for Redis (the workers' command timeout is 5 s): a failed read costs no wait.
    expect(percentile(during, 0.99)).toBeLessThan(500);
    expect(drained.reduce((sum, d) => sum + d.stats.storeFailures, 0)).toBeGreaterThanOrEqual(during.length);

    // Summaries resumed once Redis was back.
    expect(records.filter((r) => r.e === 'done' && r.t > restartedAt).length).toBeGreaterThan(0);
    // Never two jobs of one chat at once, on the machine's clock.
    expect(overlaps(records).overlapping).toEqual([]);

    // State consistent: every stored state reads back valid; no version was committed twice; the
    // stored version is the newest committed one, except for commits whose answer was lost with
    // the connection (at most one per failed job of that chat).
    const store = await RedisStore.open({ url: server.url, keyPrefix: prefix });
    try {
      const versions = committed(records);
      for (const chat of range(CHATS)) {
        const id = `chat-${chat}`;
        const list = versions.get(id) ?? [];
        expect({ id, duplicates: list.length - new Set(list).size }).toEqual({ id, duplicates: 0 });
        const stored = (await store.get(id))?.version ?? 0;
        const newest = list.at(-1) ?? 0;
        const failed = records.filter((r) => r.chat === id && r.e === 'failed').length;
        expect({ id, ok: stored >= newest && stored - newest <= failed }).toEqual({ id, ok: true });
      }
      const failures = records.filter((r) => r.e === 'failed').map((r) => r.error!);
      for (const message of failures) expect(message).toMatch(/RedisStore\(redis:\/\/127\.0\.0\.1:\d+\)|lease|Connection is closed|summary job/);
      process.stdout.write(`outage: ${served.length} requests, ${during.length} served while Redis was down (p99 ${percentile(during, 0.99).toFixed(2)} ms), ${failures.length} summary jobs failed, ${records.filter((r) => r.e === 'done' && r.t > restartedAt).length} commits after the restart\n`);
    } finally {
      await store.close();
    }
  });
});

redisDescribe('one compressor over a growing chat, and Redis goes down for seconds', () => {
  test('Redis killed (kill -9) mid-job and restarted: every request served, the state comes back, versions only grow and the final state extends the one before', async () => {
    const store = await RedisStore.open({ url: server.url, keyPrefix: 'outage-chat:', leaseMs: 1000, commandTimeoutMs: 5000 });
    const app = servingChat(store, 'grows', 10);
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    let turn = 4;
    try {
      // Up: serve until three summaries are committed and a fourth job is running.
      for (; turn < 300 && !(app.acks.length >= 3 && app.jobRunning()); turn++) {
        await app.serve(turn);
        await pause(5);
      }
      expect(app.acks.length).toBeGreaterThanOrEqual(3);
      const ackedBefore = app.acks.length;
      const servedBefore = app.served.length;
      await server.kill();

      // Down, longer than the 4 s an outside probe saw: requests keep coming, about 8 a second.
      const downSince = performance.now();
      for (let n = 0; n < 40 || performance.now() - downSince < 5000; n++, turn++) {
        await app.serve(turn);
        await pause(125);
      }
      const during = app.served.slice(servedBefore);
      const outageMs = performance.now() - downSince;
      await server.restart();
      await store.ready(30_000);

      // Back: the append-only file gave the state back, every acknowledged commit in it.
      const record = { chat: app.chat, acks: app.acks.slice(), previous: undefined };
      const restored = await checkChat(store, store, record, turn);
      expect(restored.problems).toEqual([]);
      expect(restored.state!.version).toBeGreaterThanOrEqual(app.acks.at(-1)!.version);

      // Serve on until new summaries commit (the lease the killed job held lapses within leaseMs).
      const ackedAtRestart = app.acks.length;
      for (let n = 0; n < 400 && app.acks.length < ackedAtRestart + 2; n++, turn++) {
        await app.serve(turn);
        await pause(10);
      }
      await app.compressor.drain();

      expect(app.served.filter((s) => !s.ok || s.violations !== 0)).toEqual([]);
      expect(during.length).toBeGreaterThanOrEqual(40);
      expect(during.filter((s) => !s.degraded)).toEqual([]);
      expect(app.acks.length).toBeGreaterThanOrEqual(ackedAtRestart + 2);
      // Versions only grow over the whole run (a commit whose answer was lost with Redis skips one).
      const versions = app.acks.map((a) => a.version);
      expect(versions).toEqual([...versions].sort((a, b) => a - b));
      expect(new Set(versions).size).toBe(versions.length);
      // The final state: a valid one, extending every acknowledged commit, before the outage and after.
      const final = await checkChat(store, store, { ...record, acks: app.acks, previous: restored.state }, turn);
      expect(final.problems).toEqual([]);
      expect(final.state!.coveredIds.length).toBeGreaterThan(restored.state!.coveredIds.length);
      expect(final.state!.version).toBeGreaterThanOrEqual(app.acks.at(-1)!.version);
      const worst = Math.max(...during.map((s) => s.ms));
      process.stdout.write(`outage (one compressor): ${ackedBefore} commits before, Redis down ${(outageMs / 1000).toFixed(1)} s with ${during.length} requests served degraded (slowest ${worst.toFixed(1)} ms), state back at version ${restored.state!.version}, ${app.acks.length - ackedAtRestart} commits after, final version ${final.state!.version} covering ${final.state!.coveredIds.length} messages\n`);
    } finally {
      await app.compressor.close(1000);
    }
  }, 300_000);
});
