import { describe, expect, test } from '@jest/globals';
import { generateConversation } from '../bench/fixtures/conversation.js';
import { createCompressor, type Compressor, type CompressorEvents } from '../src/runtime/compressor.js';
import { CLOSE_COMMIT_WAIT_MS, DEFAULT_CLOSE_GRACE_MS } from '../src/runtime/scheduler.js';
import { MemoryStore } from '../src/store/memory-store.js';
import type { ChatState } from '../src/store/state.js';
import type { Summarizer } from '../src/summarize/summarizer.js';
import { createTokenCounter } from '../src/tokens/counter.js';

/**
 * `close()` settles within its documented bound (`graceMs + CLOSE_COMMIT_WAIT_MS`, the grace
 * defaulting to `DEFAULT_CLOSE_GRACE_MS`) whatever the summarizer does, reports what it gave up
 * (`summary:abandoned`), and nothing of an abandoned job is ever committed. Before, `close()`
 * without a grace waited for a summarizer that never answers until the job's time limit (120 s).
 *
 * Timing is measured, never raced against a tight timer: each close is raced against a bound
 * several times the documented one (so a broken close fails instead of hanging the suite), and
 * its elapsed time is compared with the documented bound plus generous slack for a loaded host.
 */
const counter = createTokenCounter();
const SLACK_MS = 3_000;

/** A deferred promise. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => { resolve = r; });
  return { promise, resolve };
}

/** A summarizer whose answer the test holds: it ignores its abort signal, and answers (if ever) when released. */
function heldSummarizer() {
  const called = deferred();
  const answer = deferred<string>();
  let calls = 0;
  const summarizer: Summarizer = {
    name: 'held',
    inputBudgetTokens: 1_000_000,
    summarize: () => {
      calls++;
      called.resolve();
      return answer.promise; // the signal is never looked at
    },
  };
  return { summarizer, called: called.promise, release: (text: string) => answer.resolve(text), calls: () => calls };
}

/** Milliseconds `close` took, or `'hung'` when it had not settled after `bound * 4`. */
async function timedClose(c: Compressor, bound: number, graceMs?: number): Promise<number | 'hung'> {
  const started = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<'hung'>((r) => { timer = setTimeout(() => r('hung'), bound * 4); });
  try {
    const outcome = await Promise.race([c.close(graceMs).then(() => 'settled' as const), hung]);
    return outcome === 'hung' ? 'hung' : performance.now() - started;
  } finally {
    clearTimeout(timer);
  }
}

/** A memory store that records every commit it took (readable after the compressor closed it). */
class RecordingStore extends MemoryStore {
  readonly committed: ChatState[] = [];
  override async commit(state: ChatState, expectedVersion: number): Promise<boolean> {
    const done = await super.commit(state, expectedVersion);
    if (done) this.committed.push(state);
    return done;
  }
}

/** A compressor on `store` whose history of 120 messages asks for a summary of chat `chatId`, with its events recorded. */
async function compressorWithJob(summarizer: Summarizer, store = new RecordingStore(), chatId = 'c', options: { concurrency?: number } = {}) {
  const c = createCompressor({ maxContextTokens: 6000, compressionThresholdTokens: 3000, keepLast: 4, summarizer, store, counter, ...options });
  const events: { abandoned: CompressorEvents['summary:abandoned'][]; failed: unknown[]; done: number; warnings: string[] } = { abandoned: [], failed: [], done: 0, warnings: [] };
  c.on('summary:abandoned', (e) => events.abandoned.push(e));
  c.on('summary:failed', (e) => events.failed.push(e.error));
  c.on('summary:done', () => { events.done++; });
  c.on('warning', (e) => events.warnings.push(e.code));
  const history = generateConversation({ messages: 120, seed: 12 });
  const trigger = async (id: string) => {
    const { report } = await c.compress(id, history);
    expect(report.summarize).toBeDefined();
    c.afterResponse(id, history, report);
  };
  await trigger(chatId);
  return { c, store, events, trigger };
}

/** Lets timers and microtasks run for a while, so late work of an abandoned job would have done what it does. */
const settle = () => new Promise((r) => setTimeout(r, 50));

describe('close() is bounded whatever the summarizer does', () => {
  test('without a grace: a summarizer that never answers and ignores its signal is abandoned after the default grace, reported, nothing committed', async () => {
    const held = heldSummarizer();
    const { c, store, events } = await compressorWithJob(held.summarizer);
    await held.called;
    const bound = DEFAULT_CLOSE_GRACE_MS + CLOSE_COMMIT_WAIT_MS;
    const elapsed = await timedClose(c, bound);
    expect(elapsed).not.toBe('hung');
    expect(elapsed as number).toBeLessThan(bound + SLACK_MS);
    // It waited for the grace: the job was given its time.
    expect(elapsed as number).toBeGreaterThanOrEqual(DEFAULT_CLOSE_GRACE_MS - 50);
    expect(events.abandoned).toEqual([{ chatId: 'c', stage: 'running' }]);
    expect(events.failed).toEqual([]);
    // The summarizer answers after all: nothing of the abandoned job is written.
    held.release('a summary that came too late');
    await settle();
    expect(store.committed).toEqual([]);
    expect(events.done).toBe(0);
  });

  test('close(graceMs): abandoned at the end of the given grace; close(0) at once', async () => {
    for (const graceMs of [200, 0]) {
      const held = heldSummarizer();
      const { c, store, events } = await compressorWithJob(held.summarizer);
      await held.called;
      const elapsed = await timedClose(c, graceMs + CLOSE_COMMIT_WAIT_MS, graceMs);
      expect({ graceMs, hung: elapsed === 'hung' }).toEqual({ graceMs, hung: false });
      expect(elapsed as number).toBeLessThan(graceMs + CLOSE_COMMIT_WAIT_MS + SLACK_MS);
      expect(events.abandoned).toEqual([{ chatId: 'c', stage: 'running' }]);
      held.release('late');
      await settle();
      expect(store.committed).toEqual([]);
    }
  });

  test('a job that answers within the grace is committed, and nothing is abandoned', async () => {
    const held = heldSummarizer();
    const { c, store, events } = await compressorWithJob(held.summarizer);
    await held.called;
    setTimeout(() => held.release('the summary, in time'), 100);
    const elapsed = await timedClose(c, DEFAULT_CLOSE_GRACE_MS + CLOSE_COMMIT_WAIT_MS, DEFAULT_CLOSE_GRACE_MS);
    expect(elapsed).not.toBe('hung');
    expect(events.abandoned).toEqual([]);
    expect(events.done).toBe(1);
    expect(store.committed.map((s) => s.summary)).toEqual([expect.stringMatching(/^the summary, in time/)]);
  });

  test('a job waiting for a concurrency slot never starts: abandoned as waiting', async () => {
    const held = heldSummarizer();
    const { c, events, trigger } = await compressorWithJob(held.summarizer, new RecordingStore(), 'first', { concurrency: 1 });
    await held.called;
    await trigger('second');
    const elapsed = await timedClose(c, 100 + CLOSE_COMMIT_WAIT_MS, 100);
    expect(elapsed).not.toBe('hung');
    expect(held.calls()).toBe(1);
    expect(events.abandoned).toEqual(expect.arrayContaining([{ chatId: 'first', stage: 'running' }, { chatId: 'second', stage: 'waiting' }]));
    expect(events.abandoned).toHaveLength(2);
  });

  test('a job already writing its summary when the grace ends is let finish (within CLOSE_COMMIT_WAIT_MS): committed, not abandoned', async () => {
    const writing = deferred();
    const gate = deferred();
    class SlowStore extends RecordingStore {
      override async commit(state: ChatState, expectedVersion: number): Promise<boolean> {
        writing.resolve();
        await gate.promise;
        return super.commit(state, expectedVersion);
      }
    }
    const summarizer: Summarizer = { name: 'quick', inputBudgetTokens: 1_000_000, summarize: async () => 'the summary' };
    const { c, store, events } = await compressorWithJob(summarizer, new SlowStore());
    await writing.promise;
    setTimeout(() => gate.resolve(), 100);
    const elapsed = await timedClose(c, CLOSE_COMMIT_WAIT_MS, 0);
    expect(elapsed).not.toBe('hung');
    expect(elapsed as number).toBeLessThan(CLOSE_COMMIT_WAIT_MS + SLACK_MS);
    expect(events.abandoned).toEqual([]);
    expect(events.done).toBe(1);
    expect(store.committed.map((s) => s.summary)).toEqual([expect.stringMatching(/^the summary/)]);
  });

  test('a write that outlasts CLOSE_COMMIT_WAIT_MS is left to the store, with a warning; close still settles', async () => {
    const writing = deferred();
    class StuckStore extends RecordingStore {
      override async commit(): Promise<boolean> {
        writing.resolve();
        return new Promise<boolean>(() => undefined);
      }
    }
    const summarizer: Summarizer = { name: 'quick', inputBudgetTokens: 1_000_000, summarize: async () => 'the summary' };
    const { c, events } = await compressorWithJob(summarizer, new StuckStore());
    await writing.promise;
    const elapsed = await timedClose(c, CLOSE_COMMIT_WAIT_MS, 0);
    expect(elapsed).not.toBe('hung');
    expect(elapsed as number).toBeLessThan(CLOSE_COMMIT_WAIT_MS + SLACK_MS);
    expect(events.warnings).toContain('close-commit-unsettled');
    expect(events.abandoned).toEqual([]);
  });

  test('a grace that is negative or not a number is refused, naming it; a longer one than a timer keeps is that long', async () => {
    const c = createCompressor({ maxContextTokens: 6000, counter });
    for (const bad of [-1, Number.NaN, '5' as unknown as number]) await expect(c.close(bad)).rejects.toThrow(/^graceMs: must be a number of milliseconds >= 0/);
    // Infinity waits (a timer would fire at once on it): with nothing running, close settles at once.
    await c.close(Number.POSITIVE_INFINITY);
    const held = heldSummarizer();
    const { c: busy, events } = await compressorWithJob(held.summarizer);
    await held.called;
    let settled = false;
    const closing = busy.close(Number.POSITIVE_INFINITY).then(() => { settled = true; });
    await settle();
    expect(settled).toBe(false);
    expect(events.abandoned).toEqual([]);
    held.release('the summary');
    await closing;
    expect(events.done).toBe(1);
  });
});
