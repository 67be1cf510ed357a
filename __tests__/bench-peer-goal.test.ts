import { describe, expect, test } from '@jest/globals';
import type { RequestRecord } from '../bench/call.js';
import { peerGoal } from '../bench/goals.js';
import { summarize } from '../bench/summary.js';

/**
 * The goal "faster than every peer's best configuration" compares ctxfold with a peer on the
 * requests both ran: in a replay the peers run on a subset of ctxfold's requests, and medians over
 * different requests say nothing about who is faster.
 */
const rec = (system: string, point: number, ms: number): RequestRecord => ({ workload: 'w', mode: 'replay', system, point: `0:${point}`, messages: point, budget: 100, ms });

describe('peerGoal (benchmark)', () => {
  test('ctxfold faster on every request the peer ran holds, although its median over all its requests is higher', () => {
    // ctxfold runs on 6 requests, growing; the peer on the first 3 only (the small ones).
    const records = [1, 2, 3, 4, 5, 6].map((p) => rec('ctxfold', p, p * 10));
    records.push(rec('peer', 1, 11), rec('peer', 2, 21), rec('peer', 3, 31));
    const rows = summarize(records);
    expect(rows.find((r) => r.system === 'ctxfold')!.medianMs).toBeGreaterThan(rows.find((r) => r.system === 'peer')!.medianMs);
    expect(peerGoal(rows).holds).toBe(true);
  });

  test('slower on the shared requests misses, naming the peer, the ratio and the request count', () => {
    const records = [1, 2, 3, 4].map((p) => rec('ctxfold', p, 10));
    records.push(rec('peer + memo', 1, 8), rec('peer + memo', 2, 8), rec('peer + memo', 3, 12), rec('peer', 1, 50));
    const goal = peerGoal(summarize(records));
    expect(goal.holds).toBe(false);
    expect(goal.measured).toContain('peer + memo w/replay (ctxfold/peer 1.25 on the same 3 requests');
    expect(goal.measured).not.toContain('peer w/replay');
  });

  test('JSON.parse, slice(-N) and other ctxfold systems are not peers; no peer row is "not measured"', () => {
    const records = [rec('ctxfold', 1, 10), rec('JSON.parse', 1, 1), rec('slice(-N)', 1, 1), rec('ctxfold wrap', 1, 1)];
    expect(peerGoal(summarize(records))).toMatchObject({ holds: undefined, measured: 'not measured' });
  });
});
