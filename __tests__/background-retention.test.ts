import { describe, expect, test } from '@jest/globals';
import { compressWithSummary, createCompressor, createExtractiveSummarizer, createTokenCounter, type OpenAIChatMessage } from '../src/index.js';
import { fairBudget } from '../bench/budget.js';
import { extractFacts, retentionOfFacts } from '../bench/economy/fact-checker.js';
import { corpusDescribe, loadCorpus } from './helpers/corpus.js';

/**
 * What a chat served in the background keeps against the one-shot fold of the same request, at the
 * fair budget (the floor every valid view sends plus a quarter of the rest), judged by the
 * benchmark's fact checker (it shares no code with src/summarize). The corpus's system prompt is
 * most of each budget: the low-water mark lies under what must be sent, so a summary held to a
 * share of the mark kept about 40% of what the one-shot keeps (35% of facts against 86% on every
 * 20th conversation). A summary that takes what the budget leaves (less a share for the next turns)
 * and takes the kept tail in when it leaves facts out keeps about 80% of it.
 */

const counter = createTokenCounter();
const options = { keepFirst: 1, keepLast: 6, toolOutputTrim: { minChars: 500 }, counter } as const;

/** The request's view once every earlier request was served and its job settled, as a chat server sends it. */
async function background(history: OpenAIChatMessage[], budget: number): Promise<OpenAIChatMessage[]> {
  const c = createCompressor({ ...options, maxContextTokens: budget, summarizer: createExtractiveSummarizer() });
  try {
    for (let end = 1; end <= history.length; end++) {
      if (end < history.length && history[end].role !== 'assistant') continue;
      if (history[end - 1].role === 'assistant') continue;
      const request = history.slice(0, end);
      const { report } = await c.compress('chat', request);
      c.afterResponse('chat', request, report);
      await c.drain();
    }
    return (await c.compress('chat', history)).messages as OpenAIChatMessage[];
  } finally {
    await c.close();
  }
}

corpusDescribe(describe)('the background path keeps close to what the one-shot fold keeps', () => {
  test('every 20th corpus conversation at F = 0.25: background >= 0.7 x one-shot (mean share of facts in view)', async () => {
    let oneShot = 0;
    let served = 0;
    const picked = loadCorpus().filter((_, i) => i % 20 === 0);
    for (const { messages } of picked) {
      const history = (messages.at(-1)?.role === 'assistant' ? messages.slice(0, -1) : messages) as OpenAIChatMessage[];
      const { budget } = fairBudget(history, 0.25, counter);
      const facts = extractFacts(history);
      const one = await compressWithSummary(history, { ...options, maxContextTokens: budget, summarizer: createExtractiveSummarizer() });
      oneShot += retentionOfFacts(facts, one.messages).share;
      served += retentionOfFacts(facts, await background(history, budget)).share;
    }
    expect(picked.length).toBeGreaterThanOrEqual(5);
    expect(served / picked.length).toBeGreaterThanOrEqual(0.7 * (oneShot / picked.length));
  });
});
