import { describe, expect, test } from '@jest/globals';
import { createCompressor, summarizerFromFunction } from '../src/index.js';
import { ChatScheduler, MAX_TRIGGERS_PASSED_OVER, triggersPassedOver } from '../src/runtime/scheduler.js';

/**
 * A chat whose summary job fails every time (a summarizer that refuses its history, a message it
 * cannot read) used to start a new job, often a paid summarizer call, on every request. Its jobs
 * are now tried less and less often; one success clears the count.
 */
describe('a chat whose summary jobs keep failing is tried less and less often', () => {
  test('triggers passed over after n failures in a row: 0, 1, 3, 7, then the cap', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 30].map(triggersPassedOver)).toEqual([0, 1, 3, 7, 15, 15, 15, 15]);
    expect(MAX_TRIGGERS_PASSED_OVER).toBe(15);
  });

  test('20 triggers of an always-failing chat make 5 attempts (the first two at once), another chat is not held back', async () => {
    const attempts = new Map<string, number>();
    const backoffs: number[] = [];
    const scheduler = new ChatScheduler<number>(async (chatId) => {
      attempts.set(chatId, (attempts.get(chatId) ?? 0) + 1);
      if (chatId === 'broken') throw new Error('refused');
    }, {}, { onBackoff: (_chat, failures) => backoffs.push(failures) });
    const outcomes: string[] = [];
    for (let k = 0; k < 20; k++) {
      outcomes.push(scheduler.trigger('broken', k));
      scheduler.trigger('healthy', k);
      await scheduler.drain();
    }
    // Attempts at triggers 1, 2, 4, 8 and 16; the ones between are passed over.
    expect(outcomes.map((o, k) => (o === 'started' ? k + 1 : 0)).filter((k) => k > 0)).toEqual([1, 2, 4, 8, 16]);
    expect(attempts.get('broken')).toBe(5);
    expect(attempts.get('healthy')).toBe(20);
    expect(backoffs).toEqual([2, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5]);
    await scheduler.close();
  });

  test('one success clears the count: every later trigger runs', async () => {
    let calls = 0;
    const scheduler = new ChatScheduler<number>(async () => {
      calls++;
      if (calls <= 3) throw new Error('not yet');
    });
    const outcomes: string[] = [];
    for (let k = 0; k < 12; k++) {
      outcomes.push(scheduler.trigger('chat', k));
      await scheduler.drain();
    }
    // Fails at triggers 1, 2, 4; succeeds at 8; then runs on each trigger.
    expect(outcomes).toEqual(['started', 'started', 'backoff', 'started', 'backoff', 'backoff', 'backoff', 'started', 'started', 'started', 'started', 'started']);
    expect(calls).toBe(8);
    await scheduler.close();
  });

  test('a failure the owner does not count (a store that is down) is retried at once', async () => {
    let calls = 0;
    const scheduler = new ChatScheduler<number>(async () => {
      calls++;
      throw new Error('store down');
    }, {}, { countsAsFailing: () => false });
    for (let k = 0; k < 6; k++) {
      expect(scheduler.trigger('chat', k)).toBe('started');
      await scheduler.drain();
    }
    expect(calls).toBe(6);
    await scheduler.close();
  });

  test('through createCompressor: a refusing summarizer is called 5 times where 23 requests asked for a summary, each pass-over reported, and a summary lands once it works', async () => {
    let refusing = true;
    let calls = 0;
    const summarizer = summarizerFromFunction(async () => {
      calls++;
      if (refusing) throw new Error('the summarizer refused this history');
      return 'Summary: the earlier turns asked about the weather.';
    }, { name: 'refusing' });
    const compressor = createCompressor({ maxContextTokens: 2_000, compressionThresholdTokens: 1_000, summarizer, summaryFailMode: 'silent' });
    const skipped: unknown[] = [];
    let failed = 0;
    let done = 0;
    compressor.on('summary:skipped', (e) => skipped.push(e));
    compressor.on('summary:failed', () => { failed++; });
    compressor.on('summary:done', () => { done++; });
    const messages: Record<string, unknown>[] = [{ role: 'system', content: 'Answer briefly.' }];
    const turn = async (k: number) => {
      messages.push({ role: 'user', content: `question ${k}: ${'about the weather '.repeat(20)}` }, { role: 'assistant', content: `answer ${k}: ${'it is sunny '.repeat(20)}` });
      const { report } = await compressor.compress('chat-1', messages);
      compressor.afterResponse('chat-1', messages, report);
      await compressor.drain();
    };
    for (let k = 0; k < 30; k++) await turn(k);
    // 23 of the 30 requests were over the threshold and asked for a summary (one call each before):
    // attempts at the 1st, 2nd, 4th, 8th and 16th of them, the 18 others passed over.
    expect(failed).toBe(5);
    expect(calls).toBe(5);
    expect(skipped).toHaveLength(18);
    expect(skipped[0]).toEqual({ chatId: 'chat-1', reason: 'failing', failures: 2 });
    expect(compressor.stats().summariesSkipped).toBe(18);
    // Once the summarizer works, the next attempt (after 15 passed over) commits a summary.
    refusing = false;
    for (let k = 30; done === 0 && k < 50; k++) await turn(k);
    expect(done).toBe(1);
    expect(calls).toBe(6);
    expect(skipped).toHaveLength(1 + 3 + 7 + 15);
    await compressor.close();
  });
});
