import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { ChatScheduler, type TriggerOutcome } from '../src/runtime/scheduler.js';
import { propertyParams } from './helpers/property-runs.js';

/**
 * Over any interleaving of triggers (new chats and busy ones), job completions (successes and
 * failures) and turns of the event loop, a `ChatScheduler` never has more than `maxQueuedJobs`
 * jobs waiting for a slot nor more than `concurrency` running, every trigger it took runs, and
 * every job it refused is reported once.
 */

type Step =
  | { readonly kind: 'trigger'; readonly chat: number }
  | { readonly kind: 'finish'; readonly which: number; readonly fails: boolean }
  | { readonly kind: 'turn' };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('trigger' as const), chat: fc.nat({ max: 11 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('finish' as const), which: fc.nat({ max: 7 }), fails: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('turn' as const) }) },
);

/** Lets every settled promise's continuations run (p-queue's next task, a chat's follow-up). */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('ChatScheduler backlog', () => {
  test('queued never exceeds maxQueuedJobs; running never exceeds concurrency; what was taken runs, what was refused is reported', async () => {
    await fc.assert(fc.asyncProperty(
      fc.integer({ min: 1, max: 3 }),
      fc.integer({ min: 0, max: 4 }),
      fc.array(step, { maxLength: 60 }),
      async (concurrency, maxQueuedJobs, steps) => {
        const running: { payload: number; done: () => void; fail: () => void }[] = [];
        const ran: number[] = [];
        let refused = 0;
        const scheduler = new ChatScheduler<number>((_chat, payload) => new Promise<void>((resolve, reject) => {
          ran.push(payload);
          running.push({ payload, done: resolve, fail: () => reject(new Error('job failed')) });
        }).finally(() => { running.splice(running.findIndex((r) => r.payload === payload), 1); }), { concurrency, maxQueuedJobs }, {
          onBacklogFull: (_chat, queued) => {
            refused++;
            expect(queued).toBe(maxQueuedJobs);
          },
        });
        const outcomes = new Map<number, TriggerOutcome>();
        let peak = 0;
        const check = () => {
          expect(scheduler.queued).toBeLessThanOrEqual(maxQueuedJobs);
          expect(running.length).toBeLessThanOrEqual(concurrency);
          peak = Math.max(peak, scheduler.queued);
        };
        let payload = 0;
        for (const s of steps) {
          if (s.kind === 'trigger') {
            const p = payload++;
            outcomes.set(p, scheduler.trigger(`chat-${s.chat}`, p));
          } else if (s.kind === 'finish') {
            const job = running[s.which % Math.max(1, running.length)];
            if (job) (s.fails ? job.fail : job.done)();
          } else {
            await turn();
          }
          check();
          // Microtasks between steps: where a follow-up and a new trigger can meet.
          await Promise.resolve();
          check();
        }
        // Let everything run to its end.
        let drained = false;
        const draining = scheduler.drain().then(() => { drained = true; });
        while (!drained) {
          for (const job of [...running]) job.done();
          await turn();
          check();
        }
        await draining;
        expect(scheduler.queuedPeak).toBe(peak);
        expect(scheduler.queued).toBe(0);
        const taken = [...outcomes].filter(([, o]) => o === 'started').map(([p]) => p);
        // Every job taken ran; nothing ran that was not asked for; each refusal was reported once.
        for (const p of taken) expect(ran).toContain(p);
        expect(new Set(ran).size).toBe(ran.length);
        expect(ran.every((p) => outcomes.get(p) === 'started' || outcomes.get(p) === 'coalesced')).toBe(true);
        const refusedTriggers = [...outcomes.values()].filter((o) => o === 'backlog-full').length;
        expect(refused).toBeGreaterThanOrEqual(refusedTriggers);
      },
    ), propertyParams());
  });
});
