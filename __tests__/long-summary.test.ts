import { describe, expect, test } from '@jest/globals';
import { createCompressor, createExtractiveSummarizer, createTokenCounter, MemoryStore, type OpenAIChatMessage, type Summarizer, type SummarizeRequest } from '../src/index.js';
import { generateSupportAgentConversation } from '../bench/fixtures/domains/index.js';
import { fairBudget, viewTokens } from '../bench/budget.js';

/**
 * A background fold of a summarizer that states its facts writes a longer summary for the views
 * right after it (`compactTokens` set), and the request path sends it whole only while it fits
 * beside everything kept after it, then in one compact text until the next fold; the threshold
 * counts the compact size. Judged by what the view sends (the summary message's text, tokens
 * counted by a counter of the test's own), not by the planner's report.
 */

const counter = createTokenCounter();
const options = { keepFirst: 1, keepLast: 6, toolOutputTrim: { minChars: 500 } } as const;

/** The index of each request of a conversation: a history ending right before an assistant message. */
function requestEnds(history: readonly OpenAIChatMessage[]): number[] {
  const ends: number[] = [];
  for (let end = 1; end < history.length; end++) if (history[end].role === 'assistant' && history[end - 1].role !== 'assistant') ends.push(end);
  return ends;
}

/** Text of the first message holding `marker`, else undefined. */
function textWith(view: readonly unknown[], marker: string): string | undefined {
  for (const m of view as { content?: unknown }[]) {
    const text = typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? '');
    if (text.includes(marker)) return text;
  }
  return undefined;
}

describe('a long background summary and its compact form', () => {
  test('views send the whole summary, then one compact text, never over the budget, and the threshold counts the compact size', async () => {
    const history = generateSupportAgentConversation({ messages: 240, seed: 7 });
    const ends = requestEnds(history);
    const { budget } = fairBudget(history.slice(0, ends[Math.floor(ends.length * 0.6)]), 0.1, counter);
    const threshold = Math.floor(0.75 * budget);
    const store = new MemoryStore();
    const summarizer = createExtractiveSummarizer();
    const c = createCompressor({ ...options, maxContextTokens: budget, compressionThresholdTokens: threshold, summarizer, store });
    try {
      // Serve the chat until a fold commits a long summary.
      let k = 0;
      let state;
      for (; k < ends.length; k++) {
        const request = history.slice(0, ends[k]);
        const { report } = await c.compress('chat', request);
        c.afterResponse('chat', request, report);
        await c.drain();
        state = await store.get('chat');
        if (state?.compactTokens !== undefined) break;
      }
      expect(state?.compactTokens).toBeDefined();
      const long = state!;
      expect(counter.text(long.summary)).toBeGreaterThan(long.compactTokens!);
      const compact = summarizer.shorten!(long.summary, long.compactTokens!);
      expect(counter.text(compact)).toBeLessThanOrEqual(long.compactTokens!);
      // The next requests, no job started in between: which text of the summary does each view send?
      const sent: ('whole' | 'compact' | 'shorter')[] = [];
      const title = long.summary.split('\n')[0];
      for (let j = k; j < Math.min(ends.length, k + 12); j++) {
        const result = await c.compress('chat', history.slice(0, ends[j]));
        const view = result.messages as OpenAIChatMessage[];
        expect(viewTokens(view, counter)).toBeLessThanOrEqual(budget);
        const text = textWith(view, title);
        if (text === undefined) break; // the history moved past what the summary may cover in view
        sent.push(text.includes(long.summary) ? 'whole' : text.includes(compact) ? 'compact' : 'shorter');
        if (sent.at(-1) === 'whole') {
          // The whole text counts at its compact size for the threshold: no fold is asked for
          // while the view with the compact text stays under it.
          const extra = counter.text(long.summary) - counter.text(compact);
          if (result.report.tokensAfter - extra < threshold - 16) expect(result.report.summarize).toBeUndefined();
        }
      }
      expect(sent[0]).toBe('whole');
      // The turns after it grow until the whole text no longer fits: the compact one is sent.
      expect(sent).toContain('compact');
      // whole*, then compact*, then shorter*: the text changes at most twice between folds.
      const order = { whole: 0, compact: 1, shorter: 2 } as const;
      for (let i = 1; i < sent.length; i++) expect(order[sent[i]]).toBeGreaterThanOrEqual(order[sent[i - 1]]);
    } finally {
      await c.close();
    }
  });

  test('a fold of a summarizer that states its facts reads the covered messages again while they are few; any other builds on the summary in force', async () => {
    const seen: { reports: boolean; previous: boolean; first: string }[] = [];
    const spy = (reportsFacts: boolean): Summarizer => ({
      name: 'spy',
      inputBudgetTokens: 1_000_000,
      ...(reportsFacts ? { reportsFacts: true } : {}),
      summarize: async (request: SummarizeRequest) => {
        seen.push({ reports: reportsFacts, previous: request.previousSummary !== undefined, first: request.messages[0]?.text ?? '' });
        return `summary of ${request.messages.length} messages\nFacts:\n- (0 of 0 facts kept, ${request.messages.length} messages read)`;
      },
    });
    const history: OpenAIChatMessage[] = [{ role: 'system', content: 'You help.' }];
    for (let i = 0; i < 40; i++) history.push({ role: 'user', content: `question ${i} ${'word '.repeat(30)}` }, { role: 'assistant', content: `answer ${i} ${'word '.repeat(30)}` });
    for (const reportsFacts of [true, false]) {
      const c = createCompressor({ keepFirst: 1, keepLast: 4, maxContextTokens: 1500, compressionThresholdTokens: 1100, summarizer: spy(reportsFacts) });
      try {
        for (let end = 2; end <= history.length; end += 2) {
          const request = history.slice(0, end);
          const { report } = await c.compress('chat', request);
          c.afterResponse('chat', request, report);
          await c.drain();
        }
      } finally {
        await c.close();
      }
    }
    const mine = seen.filter((s) => s.reports);
    const others = seen.filter((s) => !s.reports);
    expect(mine.length).toBeGreaterThan(1);
    expect(others.length).toBeGreaterThan(1);
    // Every fold after the first: from the first message after the head again, no summary given.
    for (const s of mine) expect([s.previous, s.first.startsWith('question 0 ')]).toEqual([false, true]);
    for (const s of others.slice(1)) expect(s.previous).toBe(true);
  });
});
