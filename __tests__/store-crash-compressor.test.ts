import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../src/store/sqlite-store.js';
import { killLoop } from './helpers/crash-loop.js';
import { assertBuilt } from './helpers/redis-workers.js';

// A compressor on a SqliteStore file (WAL), its process killed with SIGKILL in the middle of its
// requests and summary jobs, again and again; after each kill the file is opened anew and checked.

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ctxfold-crash-compressor-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('a compressor on SQLite killed at random points', () => {
  // Long on purpose (50 processes in sequence); the loop itself is bounded, so it ends well before.
  test('50 kills mid-request and mid-job: the state is always a valid prefix, no acknowledged commit lost', async () => {
    assertBuilt(['src/store/sqlite-store.ts', 'src/runtime/compressor.ts', 'src/runtime/summary-job.ts']);
    const file = join(dir, 'chats.db');
    const t0 = performance.now();
    const store = SqliteStore.open(file);
    try {
      const result = await killLoop({ kind: 'sqlite', target: file, keyPrefix: '', leaseMs: 0, store, kills: 50, seed: 0x5eed, killsPerChat: 10, maxDelayMs: 400 });
      process.stdout.write(`sqlite kills: ${JSON.stringify(result.phases)}; ${result.requests} requests, ${result.acks} commits acknowledged, ${result.failedJobs} jobs failed; ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
      expect(result.problems).toEqual([]);
      // The kills must have landed inside the work, or this proved nothing.
      expect(result.duringRequest).toBeGreaterThanOrEqual(5);
      expect(result.duringJob).toBeGreaterThanOrEqual(5);
      expect(result.acks).toBeGreaterThan(50);
    } finally {
      await store.close();
    }
  }, 600_000);
});
