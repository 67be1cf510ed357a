import { describe, expect, test } from '@jest/globals';
import { compressContext } from '../src/index.js';
import { validateMessages } from '../src/formats/profiles.js';
import { openaiProfile } from '../src/formats/openai-chat/profile.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { corpusDescribe, loadCorpus } from './helpers/corpus.js';
import { pairingProblems } from './helpers/oracle.js';
import { smallestYieldingView } from './helpers/smallest-view.js';
import { expectSafeView } from './helpers/view-checks.js';

const counter = createTokenCounter();

corpusDescribe(describe)('compressContext over the 200 real conversations', () => {
  test('at 25%, 50% and 75% of each conversation, with keepLast default and 2, the kept tail sent whole: every view is valid and safe', () => {
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
          // The oracle's rule: the kept tail is sent whole (keepLastYields false).
          const result = compressContext(conv.messages, { counter, maxContextTokens, keepLast, keepLastYields: false });
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

  test('by default the kept tail yields: within budget wherever the system messages, the last user message and the last unit fit; never larger than the whole tail', () => {
    const conversations = loadCorpus();
    let fits = 0;
    let views = 0;
    let yieldedToFit = 0;
    for (const conv of conversations) {
      const messages = conv.messages;
      const tokens = compressContext(messages, { counter }).report.tokensBefore;
      // The smallest view, read apart from the planner (keepFirst 1, the default).
      const { lastUser, tokens: smallest } = smallestYieldingView(messages, 1, counter);
      for (const share of [0.25, 0.5, 0.75]) {
        const maxContextTokens = Math.max(1, Math.floor(tokens * share));
        const { messages: view, report } = compressContext(messages, { counter, maxContextTokens });
        const whole = compressContext(messages, { counter, maxContextTokens, keepLastYields: false });
        views++;
        expect(pairingProblems(view)).toEqual([]);
        expect(validateMessages(view, openaiProfile)).toEqual([]);
        expect(report.tokensAfter).toBeLessThanOrEqual(whole.report.tokensAfter);
        if (lastUser >= 0) expect(view).toContain(messages[lastUser]);
        if (smallest <= maxContextTokens) {
          fits++;
          expect(report.tokensAfter).toBeLessThanOrEqual(maxContextTokens);
          if (whole.report.overBudget) yieldedToFit++;
        }
      }
    }
    expect(views).toBeGreaterThanOrEqual(600);
    expect(fits).toBeGreaterThan(views / 4);
    // The budgets reached the case the default is for: views the whole tail would have sent over budget.
    expect(yieldedToFit).toBeGreaterThan(views / 20);
  });
});
