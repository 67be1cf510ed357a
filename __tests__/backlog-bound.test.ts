import { afterEach, describe, expect, test } from '@jest/globals';
import { generateConversation } from '../bench/fixtures/conversation.js';
import { validateMessages } from '../src/formats/profiles.js';
import { openaiProfile } from '../src/formats/openai-chat/profile.js';
import { createCompressor, type Compressor, type CompressorEvents } from '../src/runtime/compressor.js';
import { defaultMaxQueuedJobs } from '../src/runtime/queue-bound.js';
import { MemoryStore } from '../src/store/memory-store.js';
import type { Summarizer } from '../src/summarize/summarizer.js';
import { createTokenCounter } from '../src/tokens/counter.js';

/**
 * The summary backlog is bounded: with `maxQueuedJobs` jobs waiting for a slot, a new chat's
 * trigger is refused (`summary:skipped`, `reason: 'backlog-full'`), its request still served with
 * a valid view within budget. Checked by counting, never by timing: the summarizer answers only
 * when the test opens its gate.
 */
const counter = createTokenCounter();
const open: Compressor[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close(0)));
});

/** A summarizer whose calls all wait until the test opens the gate. */
function gatedSummarizer() {
  let openGate!: () => void;
  const gate = new Promise<void>((resolve) => { openGate = resolve; });
  const s = {
    calls: 0,
    open: () => openGate(),
    summarizer: {
      name: 'gated',
      inputBudgetTokens: 1_000_000,
      async summarize(request) {
        s.calls++;
        await gate;
        return `folded ${request.messages.length} messages`;
      },
    } satisfies Summarizer,
  };
  return s;
}

const WINDOW = 4_000;
const history = generateConversation({ messages: 100, seed: 31 });
/** The same chat some turns later: its follow-up job has more to fold. */
const grown = [...history, ...generateConversation({ messages: 61, seed: 32 }).slice(1)];

describe('maxQueuedJobs', () => {
  test('50 new chats over the threshold, concurrency 1, bound 5: 1 job runs, 5 queue, 44 are refused, every view is valid and within budget, and the queued jobs all run', async () => {
    const gated = gatedSummarizer();
    const store = new MemoryStore();
    const c = createCompressor({ maxContextTokens: WINDOW, compressionThresholdTokens: 1_500, keepLast: 6, summarizer: gated.summarizer, store, counter, concurrency: 1, maxQueuedJobs: 5 });
    open.push(c);
    const skipped: CompressorEvents['summary:skipped'][] = [];
    const started: string[] = [];
    c.on('summary:skipped', (e) => skipped.push(e));
    c.on('summary:start', (e) => started.push(e.chatId));
    let peak = 0;
    for (let i = 0; i < 50; i++) {
      const chatId = `new-${i}`;
      const { messages, report } = await c.compress(chatId, history);
      expect(validateMessages(messages, openaiProfile)).toEqual([]);
      expect(report.tokensAfter).toBeLessThanOrEqual(WINDOW);
      expect(report.summarize).toBeDefined(); // over the threshold: each asks for a job
      c.afterResponse(chatId, history, report);
      const jobs = c.stats().jobs!;
      peak = Math.max(peak, jobs.queued);
      expect(jobs.queued).toBeLessThanOrEqual(5);
    }
    const jobs = c.stats().jobs!;
    expect(peak).toBe(5);
    expect(jobs).toMatchObject({ running: 1, queued: 5, queuedPeak: 5, maxQueuedJobs: 5, backlogFull: 44 });
    expect(skipped).toHaveLength(44);
    expect(skipped.every((e) => e.reason === 'backlog-full' && e.queued === 5)).toBe(true);
    expect(skipped.map((e) => e.chatId)).toEqual(Array.from({ length: 44 }, (_, i) => `new-${i + 6}`));
    expect(c.stats().summariesSkipped).toBe(44);

    // A busy chat's follow-up is not a queue entry: coalesced, running or queued, even with the queue full.
    expect(c.schedule('new-0', grown)).toBe('coalesced');
    expect(c.schedule('new-3', grown)).toBe('coalesced');
    // A new chat is refused, as the newest trigger.
    expect(c.schedule('new-late', history)).toBe('backlog-full');
    expect(c.stats().jobs).toMatchObject({ queued: 5, coalesced: 2, backlogFull: 45 });

    gated.open();
    await c.drain();
    // Every queued job ran (and the two follow-ups after them); no refused chat has a summary.
    expect(new Set(started)).toEqual(new Set(['new-0', 'new-1', 'new-2', 'new-3', 'new-4', 'new-5']));
    expect(started).toHaveLength(8);
    expect(c.stats().summariesDone).toBe(8);
    for (let i = 0; i < 6; i++) expect((await store.get(`new-${i}`))?.summary).toMatch(/^folded /);
    for (let i = 6; i < 50; i++) expect(await store.get(`new-${i}`)).toBeUndefined();
    expect(c.stats().jobs).toMatchObject({ running: 0, queued: 0, waiting: 0, queuedPeak: 5, backlogFull: 45 });
    // The chat refused comes back on its next request, and is queued now that there is room.
    expect(c.schedule('new-6', history)).toBe('started');
    await c.drain();
    expect((await store.get('new-6'))?.summary).toMatch(/^folded /);
  });

  test('0 queues none: a job runs only on a free slot', async () => {
    const gated = gatedSummarizer();
    const c = createCompressor({ maxContextTokens: WINDOW, compressionThresholdTokens: 1_500, keepLast: 6, summarizer: gated.summarizer, counter, concurrency: 2, maxQueuedJobs: 0 });
    open.push(c);
    expect(['a', 'b', 'c', 'd'].map((id) => c.schedule(id, history))).toEqual(['started', 'started', 'backlog-full', 'backlog-full']);
    expect(c.stats().jobs).toMatchObject({ running: 2, queued: 0, queuedPeak: 0, backlogFull: 2 });
    gated.open();
    await c.drain();
    expect(c.stats().summariesDone).toBe(2);
  });

  test('the default is 16 per concurrency slot', () => {
    const one = createCompressor({ summarizer: null, counter, concurrency: 3 });
    const two = createCompressor({ summarizer: null, counter });
    open.push(one, two);
    expect(one.stats().jobs!.maxQueuedJobs).toBe(48);
    expect(two.stats().jobs!.maxQueuedJobs).toBe(defaultMaxQueuedJobs(2));
    expect(defaultMaxQueuedJobs(2)).toBe(32);
  });

  test.each([-1, 1.5, '5'])('maxQueuedJobs %p is refused, naming the option', (bad) => {
    expect(() => createCompressor({ counter, maxQueuedJobs: bad as number })).toThrow(/options\.maxQueuedJobs/);
  });
});
