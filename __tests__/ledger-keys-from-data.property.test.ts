import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { createExtractiveSummarizer } from '../src/index.js';
import { propertyRuns } from './helpers/property-runs.js';

/**
 * A summary's keys come from data, never from prose: values a conversation's sentences mention
 * are written without keys made of the sentences' words, while a value under a JSON key keeps
 * that key. Judged on the summary's text alone: its fact lines of prose messages hold no `key=`
 * (the generated prose writes none), and the tool's JSON key stands before its value. A summary
 * whose fact lines name positions (`@n`) says what they mean.
 */

const word = fc.stringMatching(/^[a-z]{4,9}$/);
const code = fc.tuple(fc.stringMatching(/^[A-Z]{2,3}$/), fc.integer({ min: 100_000, max: 9_999_999 })).map(([p, n]) => `${p}${n}`);
const amount = fc.integer({ min: 100, max: 99_999 }).map((n) => `$${n}.${String(n % 100).padStart(2, '0')}`);

describe('ledger keys come from data', () => {
  test('values in sentences are written bare; a value under a JSON key keeps the key', async () => {
    const summarizer = createExtractiveSummarizer();
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.array(word, { minLength: 2, maxLength: 4 }), amount, word, code), { minLength: 12, maxLength: 30 }),
        fc.tuple(word, word).map(([a, b]) => `${a}_${b}`),
        code,
        async (sentences, field, stored) => {
          const messages = [
            { role: 'assistant', text: '', calls: [{ id: 'c1', name: 'lookup', arguments: '{}' }], results: [] },
            { role: 'tool', text: '', calls: [], results: [{ id: 'c1', name: 'lookup', content: JSON.stringify({ [field]: stored }) }] },
          ];
          for (const [words, money, w, c] of sentences) {
            messages.push({ role: 'user', text: `and the ${w}?`, calls: [], results: [] } as never);
            messages.push({ role: 'assistant', text: `The ${words.join(' ')} comes to ${money} for ${w} ${c}.`, calls: [], results: [] } as never);
          }
          const summary = await summarizer.summarize({ messages, countTokens: (t: string) => Math.ceil(t.length / 4), signal: new AbortController().signal } as never);
          const proseFacts = summary.split('\n').filter((l) => /^- \[(?:assistant|user)\b/.test(l));
          for (const line of proseFacts) expect(line).not.toContain('=');
          // Positions (`@n`) in fact lines are explained where the model reads them.
          if (/^- \[[^\]]*@\d/m.test(summary)) expect(summary).toMatch(/@n = message n\b/);
          expect(summary).toContain(`${field}=${stored}`);
        },
      ),
      { numRuns: Math.min(propertyRuns(), 200), seed: 4607 },
    );
  });
});
