import { describe, expect, test } from '@jest/globals';
import { compressContext } from '../src/index.js';
import { validateMessages } from '../src/formats/profiles.js';
import { openaiProfile } from '../src/formats/openai-chat/profile.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { corpusDescribe, loadCorpus } from './helpers/corpus.js';
import { expectSafeView } from './helpers/view-checks.js';

const counter = createTokenCounter();

corpusDescribe(describe)('compressContext over the 200 real conversations', () => {
  test('at 25%, 50% and 75% of each conversation, with keepLast default and 2: every view is valid and safe', () => {
    const conversations = loadCorpus();
    let views = 0;
    let invalid = 0;
    let dropped = 0;
    const overBudget = { default: 0, keepLast2: 0 };
    for (const conv of conversations) {
      const tokens = compressContext(conv.messages, { counter }).report.tokensBefore;
      for (const share of [0.25, 0.5, 0.75]) {
        for (const keepLast of [undefined, 2]) {
          const maxContextTokens = Math.max(1, Math.floor(tokens * share));
          const result = compressContext(conv.messages, { counter, maxContextTokens, keepLast });
          views++;
          if (validateMessages(result.messages, openaiProfile).length > 0) invalid++;
          const facts = expectSafeView({ original: conv.messages, keepFirst: 1, keepLast: keepLast ?? 6, maxContextTokens, result, counter });
          expect(facts.repaired).toBe(false);
          // The budget is below the conversation's size, so a view that fits must have left something out.
          if (!facts.overBudget) expect(facts.dropped).toBeGreaterThan(0);
          if (facts.dropped > 0) dropped++;
          if (facts.overBudget) overBudget[keepLast === 2 ? 'keepLast2' : 'default']++;
        }
      }
    }
    expect(invalid).toBe(0);
    expect(views).toBeGreaterThanOrEqual(600);
    // Over budget only where the protected part alone exceeds the budget (checked per view):
    // keeping the last 6 messages is over budget more often than keeping the last 2.
    expect(dropped).toBeGreaterThan(views / 2);
    expect(overBudget.keepLast2).toBeLessThan(views / 4);
    expect(overBudget.default).toBeGreaterThan(overBudget.keepLast2);
  });
});
