import { describe, expect, test } from '@jest/globals';
import { runCold } from '../bench/runner.js';
import { DeadlineExceeded } from '../bench/peer-counter.js';
import type { BenchSystem } from '../bench/systems.js';
import type { Workload } from '../bench/workloads.js';
import { summarize } from '../bench/summary.js';
import type { OpenAIChatMessage } from '../src/index.js';

/**
 * A cold call is one sample of a noisy machine: each generated history is cold-called
 * `coldRepeats` times per system, each time with fresh state, and the rows report the median.
 */
const history: OpenAIChatMessage[] = [
  { role: 'system', content: 'You help.' },
  { role: 'user', content: 'Say hi.' },
  { role: 'assistant', content: 'Hi.' },
  { role: 'user', content: 'Again.' },
];
const workload = (kind: Workload['kind']): Workload => ({ name: 'w', kind, histories: [history], points: [[]], peerPoints: [new Set()], sampling: 'test' });

/** A system that records the state it was given and sends the history whole. */
function recorder(name: string, seen: object[], fail = false): BenchSystem {
  return {
    name,
    settings: 'test',
    prepare: (_body, parsed) => parsed,
    run: (messages, ctx) => {
      seen.push(ctx.counter, ctx.historyCache);
      if (fail) throw new DeadlineExceeded(1);
      return messages;
    },
    view: (out) => out as OpenAIChatMessage[],
  };
}

describe('runCold (benchmark)', () => {
  test('a generated history is cold-called coldRepeats times per system, each with a fresh counter and cache, each repetition its own point', async () => {
    const seenA: object[] = [];
    const seenB: object[] = [];
    const systems = [recorder('ctxfold', seenA), recorder('peer', seenB)];
    const { records } = await runCold(workload('generated'), { systems, deadlineSeconds: 5, coldRepeats: 4, log: () => {} });
    expect(records.filter((r) => r.system === 'ctxfold')).toHaveLength(4);
    expect(records.filter((r) => r.system === 'peer')).toHaveLength(4);
    expect(new Set(seenA).size).toBe(8); // 4 counters and 4 caches, none reused
    expect(new Set(records.filter((r) => r.system === 'peer').map((r) => r.point))).toEqual(new Set(['0:4', '0:4#1', '0:4#2', '0:4#3']));
    // The rows compare each peer repetition with ctxfold's same repetition, over all four.
    const peerRow = summarize(records).find((r) => r.system === 'peer' && r.mode === 'cold')!;
    expect(peerRow.requests).toBe(4);
    expect(peerRow.ctxfoldRatio).toBeDefined();
  });

  test('a corpus conversation is cold-called once; a system that timed out is not called again', async () => {
    const seen: object[] = [];
    const once = await runCold(workload('corpus'), { systems: [recorder('ctxfold', seen)], deadlineSeconds: 5, coldRepeats: 4, log: () => {} });
    expect(once.records).toHaveLength(1);
    const slow: object[] = [];
    const { records, timedOut } = await runCold(workload('generated'), { systems: [recorder('ctxfold', []), recorder('slow peer', slow, true)], deadlineSeconds: 5, coldRepeats: 3, log: () => {} });
    expect(timedOut).toEqual(new Set(['slow peer']));
    expect(records.filter((r) => r.system === 'slow peer')).toEqual([expect.objectContaining({ timeout: true })]);
    expect(records.filter((r) => r.system === 'ctxfold')).toHaveLength(3);
  });
});
