import { describe, expect, test } from '@jest/globals';
import { generateConversation } from '../bench/fixtures/conversation.js';
import { openaiChatLens } from '../src/formats/openai-chat/lens.js';
import { compressContext, createCompressor, createTokenCounter, MemoryStore } from '../src/index.js';

// A long history is counted in slices before the compressor's plan; where the plan counts lazily
// that count stops past what a view can hold. The views must not change for it.
describe('the sliced count of a long history (createCompressor)', () => {
  const histories = [600, 3000].map((messages) => generateConversation({ messages, seed: 4700 + messages }));

  for (const trim of [false, true]) {
    test(`gives compressContext's views, and with a window counts only what a view can hold (toolOutputTrim ${trim})`, async () => {
      for (const history of histories) {
        for (const maxContextTokens of [2000, 20_000]) {
          const counter = createTokenCounter();
          const compressor = createCompressor({ maxContextTokens, store: new MemoryStore(), summarizer: null, counter, toolOutputTrim: trim, keepLastYields: true });
          const served = await compressor.compress('chat', history);
          const alone = compressContext(history, { maxContextTokens, compressionThresholdTokens: Math.floor(maxContextTokens * 0.75), counter: createTokenCounter(), toolOutputTrim: trim, keepLastYields: true });
          expect(JSON.stringify(served.messages)).toBe(JSON.stringify(alone.messages));
          expect(served.report.tokensAfter).toBe(alone.report.tokensAfter);
          expect(served.report.tokensBeforeExact).toBe(alone.report.tokensBeforeExact);
          // The same history again: the remembered counts (some left uncounted) give the same view.
          const again = await compressor.compress('chat', history.slice());
          expect(JSON.stringify(again.messages)).toBe(JSON.stringify(alone.messages));
          if (!trim && history.length === 3000) {
            // Every text of the history, against what the compressor's counter encoded.
            const full = createTokenCounter();
            for (const m of history) full.message(m, openaiChatLens);
            expect(counter.stats().encoded).toBeLessThan(full.stats().encoded / 2);
          }
        }
      }
    });
  }
});
