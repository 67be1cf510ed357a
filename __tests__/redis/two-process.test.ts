import { afterAll, afterEach, beforeAll, expect, test } from '@jest/globals';
import { Redis } from 'ioredis';
import { RedisStore } from '../../src/store/redis-store.js';
import { redisDescribe, startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { assertBuilt, committed, count, overlaps, percentile, range, startWorker, type Drained, type JobRecord, type Served, type Worker } from '../helpers/redis-workers.js';

// Two separate node processes, each a compressor on a RedisStore over the same real redis-server,
// as two instances of a chat service behind a load balancer. They run the built code (dist/).

let server: RedisServer;
const workers: Worker[] = [];

beforeAll(async () => {
  assertBuilt();
  server = await startRedisServer();
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

redisDescribe('two processes sharing one Redis', () => {
  test('1,000 requests over 50 chats split between them: one summary job per chat at a time, no summary lost or overwritten, every view valid', async () => {
    const prefix = 'two:';
    const [a, b] = await twoWorkers(prefix, 2000, 25);
    const CHATS = 50;
    const PER_CHAT = 20;
    const served: Served[] = [];
    const started = performance.now();
    // Each chat is a conversation: its requests go one after another, alternating processes.
    await Promise.all(range(CHATS).map(async (chat) => {
      for (let k = 0; k < PER_CHAT; k++) served.push(await (k % 2 === chat % 2 ? a! : b!).request(chat, 4 + k));
    }));
    const requestsMs = performance.now() - started;
    const drained: Drained[] = await Promise.all([a!.drain(), b!.drain()]);
    const records = drained.flatMap((d) => d.records);

    expect(served).toHaveLength(CHATS * PER_CHAT);
    expect(served.filter((s) => !s.ok)).toEqual([]);
    expect(served.filter((s) => s.violations !== 0 || s.overBudget)).toEqual([]);

    // The processes really shared the chats: most chats got commits from both.
    const committers = new Map<string, Set<string>>();
    for (const r of records) if (r.e === 'done') committers.set(r.chat, (committers.get(r.chat) ?? new Set()).add(r.name));
    const shared = [...committers.values()].filter((names) => names.size === 2).length;
    expect(shared).toBeGreaterThanOrEqual(CHATS / 5);
    expect(drained.map((d) => [d.stats.summariesFailed, d.stats.summariesStale, d.stats.storeFailures])).toEqual([[0, 0, 0], [0, 0, 0]]);

    // One job per chat at a time, in the order Redis ran the jobs' own commands: per chat the log
    // alternates start and end of the same process (start pushed after the lease was granted, end
    // before it was released, both on the connection that took and released it).
    const raw = new Redis(server.url);
    const log = (await raw.lrange(`${prefix}log`, 0, -1)).map((line) => JSON.parse(line) as JobRecord);
    raw.disconnect();
    const holder = new Map<string, number>();
    const outOfTurn: string[] = [];
    for (const r of log) {
      if (r.e === 'start') {
        if (holder.has(r.chat)) outOfTurn.push(`${r.chat}: pid ${r.pid} started while pid ${holder.get(r.chat)} held it`);
        holder.set(r.chat, r.pid);
      } else if (r.e === 'end') {
        if (holder.get(r.chat) !== r.pid) outOfTurn.push(`${r.chat}: pid ${r.pid} ended a job it did not hold`);
        holder.delete(r.chat);
      }
    }
    expect(outOfTurn).toEqual([]);
    expect(holder.size).toBe(0);
    expect(log.filter((r) => r.e === 'start')).toHaveLength(count(records, 'start'));
    // The same on the machine's clock, from each process's own records.
    const { jobs, overlapping } = overlaps(records);
    expect(overlapping).toEqual([]);
    expect(jobs).toBe(count(records, 'start'));

    // Nothing lost or overwritten: per chat the committed versions are exactly 1..n, each once,
    // and the stored state is version n.
    const store = await RedisStore.open({ url: server.url, keyPrefix: prefix });
    try {
      const versions = committed(records);
      expect(versions.size).toBe(CHATS);
      for (const chat of range(CHATS)) {
        const list = versions.get(`chat-${chat}`) ?? [];
        expect({ chat, list }).toEqual({ chat, list: range(list.length) });
        expect({ chat, stored: (await store.get(`chat-${chat}`))?.version }).toEqual({ chat, stored: list.length });
      }
      const total = [...versions.values()].reduce((sum, list) => sum + list.length, 0);
      expect(total).toBe(count(records, 'done'));
      process.stdout.write(`two processes: ${served.length} requests in ${requestsMs.toFixed(0)} ms with 50 chats in flight (p50 ${percentile(served, 0.5).toFixed(1)} ms, p99 ${percentile(served, 0.99).toFixed(1)} ms per request, mostly queueing), ${jobs} summary jobs, ${total} commits, ${shared} chats folded by both, ${drained.map((d) => d.stats.summariesSkipped).join('+')} jobs skipped (leased elsewhere)\n`);
    } finally {
      await store.close();
    }
  });
});
