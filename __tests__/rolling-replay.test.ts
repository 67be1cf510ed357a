import { describe, expect, test } from '@jest/globals';
import { generateConversation } from '../bench/fixtures/conversation.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { createCompressor } from '../src/runtime/compressor.js';
import { createExtractiveSummarizer } from '../src/summarize/extractive.js';
import { entryTokens } from '../src/summarize/rolling.js';
import type { Summarizer } from '../src/summarize/summarizer.js';
import { createTokenCounter } from '../src/tokens/counter.js';

const counter = createTokenCounter();
const BUDGET = 3000;

/** The extractive summarizer with a small input budget, recording what each call was given. */
function recording(): { summarizer: Summarizer; inputs: number[] } {
  const inner = createExtractiveSummarizer({ inputBudgetTokens: BUDGET, countTokens: counter.text });
  const inputs: number[] = [];
  return {
    inputs,
    summarizer: {
      name: inner.name,
      inputBudgetTokens: inner.inputBudgetTokens,
      summarize(request) {
        let tokens = request.previousSummary ? counter.text(request.previousSummary) : 0;
        for (const e of request.messages) tokens += entryTokens(e, counter.text);
        inputs.push(tokens);
        return inner.summarize(request);
      },
    },
  };
}

/** Replays a conversation turn by turn (each request carries the whole history so far). */
async function replay(messages: OpenAIChatMessage[]) {
  const { summarizer, inputs } = recording();
  const c = createCompressor({ maxContextTokens: 12_000, compressionThresholdTokens: 8_000, keepLast: 8, summarizer, counter });
  const wrapped = c.wrap(async (r: { messages: OpenAIChatMessage[]; chatId: string }) => r.messages);
  const callsAt = new Map<number, number>();
  for (let k = 1; k <= messages.length; k++) {
    if (messages[k - 1].role !== 'user' && k !== messages.length) continue;
    await wrapped({ messages: messages.slice(0, k), chatId: 'long' });
    await c.drain();
    callsAt.set(k, inputs.length);
  }
  await c.close();
  return { inputs, callsAt };
}

describe('rolling summaries over a 2,000-message conversation', () => {
  test('no summarizer call exceeds its input budget, and calls grow linearly', async () => {
    const messages = generateConversation({ messages: 2000, seed: 99 });
    const { inputs, callsAt } = await replay(messages);
    expect(inputs.length).toBeGreaterThan(10);
    expect(Math.max(...inputs)).toBeLessThanOrEqual(BUDGET);
    const callsBy = (n: number) => {
      let best = 0;
      for (const [k, calls] of callsAt) if (k <= n) best = Math.max(best, calls);
      return best;
    };
    const half = callsBy(1000);
    const full = callsBy(2000);
    console.log(`rolling replay: ${inputs.length} summarizer calls (${half} by message 1000, ${full} by 2000), largest input ${Math.max(...inputs)} of ${BUDGET} tokens`);
    // Linear: the second thousand messages cost about as many calls as the first (not more and more).
    expect(full / half).toBeGreaterThan(1.5);
    expect(full / half).toBeLessThan(2.6);
  });
});
