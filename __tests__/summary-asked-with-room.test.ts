import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { compressContext, createCompressor, createExtractiveSummarizer, createTokenCounter, type OpenAIChatMessage, type Summarizer } from '../src/index.js';
import { generateConversation, modelRequestEnds } from '../bench/fixtures/conversation.js';
import { protectedFloor } from '../bench/budget.js';
import { propertyParams } from './helpers/property-runs.js';

/**
 * A summary is asked for only where a view could hold one. When what is never dropped (the head,
 * system messages and the kept tail) is already over the limit, a summary would be made and never
 * sent: a summarizer call (an LLM call, with an LLM summarizer) for nothing, on every request until
 * the kept tail moves on. Judged from outside: the summarizer's calls, and a lower bound of the
 * protected part written apart from the planner (`protectedFloor`).
 */

const counter = createTokenCounter();

/**
 * Six short exchanges (what a summary could fold), then a user request and `rounds` tool rounds
 * whose results (~600 tokens each) make the current turn alone over 2,000 tokens.
 */
function bulkyRounds(rounds: number): OpenAIChatMessage[] {
  const out: OpenAIChatMessage[] = [{ role: 'system', content: 'You read pages for the user.' }];
  for (let k = 0; k < 6; k++) out.push({ role: 'user', content: `Earlier question ${k}: is page ${k} ready?` }, { role: 'assistant', content: `Page ${k} is ready.` });
  out.push({ role: 'user', content: 'Read every page, then tell me what they say.' });
  for (let i = 0; i < rounds; i++) {
    out.push({ role: 'assistant', content: null, tool_calls: [{ id: `call_b${i}`, type: 'function', function: { name: 'read_page', arguments: JSON.stringify({ page: i }) } }] });
    out.push({ role: 'tool', tool_call_id: `call_b${i}`, content: `page ${i}: ${'lorem ipsum dolor sit amet '.repeat(110)}` });
  }
  return out;
}

describe('a summary is asked for only where a view could hold one', () => {
  test('a kept tail over the window asks for no summary; once the tail moves on, one is made and sent', async () => {
    const extractive = createExtractiveSummarizer();
    let calls = 0;
    const summarizer: Summarizer = { ...extractive, summarize: (request) => { calls++; return extractive.summarize(request); } };
    const compressor = createCompressor({ maxContextTokens: 2000, compressionThresholdTokens: 1500, keepLast: 8, summarizer, counter });
    try {
      const history = bulkyRounds(12);
      let overBudget = 0;
      let noted = 0;
      let callsBeforeOver = -1;
      for (let end = 16; end <= history.length; end += 2) {
        const request = history.slice(0, end);
        const { report } = await compressor.compress('c', request);
        // (Over only because of the current turn: its rounds are kept whole, with the request.)
        if (report.overBudget && overBudget++ === 0) callsBeforeOver = calls;
        if (report.notes.some((n) => n.startsWith('no summary asked for: the head, system messages and kept tail'))) noted++;
        compressor.afterResponse('c', request, report);
        await compressor.drain();
      }
      expect(overBudget).toBeGreaterThan(5);
      expect(noted).toBeGreaterThan(5);
      // No call from the first request whose current turn alone was over the window on.
      expect(callsBeforeOver).toBeGreaterThanOrEqual(0);
      expect(calls).toBe(callsBeforeOver);
      const callsBeforeMovingOn = calls;

      // The user moves on with short turns: the kept tail is small again, and the rounds before it
      // are summarized and sent as a summary.
      history.push({ role: 'assistant', content: 'The pages say lorem ipsum.' });
      for (let k = 0; k < 4; k++) history.push({ role: 'user', content: `Question ${k}?` }, { role: 'assistant', content: `Answer ${k}.` });
      history.push({ role: 'user', content: 'Thanks, one last question?' });
      const { report } = await compressor.compress('c', history);
      expect(report.overBudget).toBe(false);
      compressor.afterResponse('c', history, report);
      await compressor.drain();
      expect(calls).toBeGreaterThan(callsBeforeMovingOn);
      const next = await compressor.compress('c', history);
      expect(next.report.summary.applied).toBe(true);
      expect(next.report.tokensAfter).toBeLessThanOrEqual(2000);
    } finally {
      await compressor.close();
    }
  });

  test('property: no summary range is reported when the protected part alone is over the limit', () => {
    let overAndAsked = 0;
    let roomAndAsked = 0;
    fc.assert(fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 20, max: 200 }), fc.integer({ min: 500, max: 6000 }), fc.integer({ min: 0, max: 10 }), fc.double({ min: 0.3, max: 1, noNaN: true }), (seed, length, budget, keepLast, thresholdShare) => {
      const history = generateConversation({ messages: length, seed });
      const ends = modelRequestEnds(history);
      const request = history.slice(0, ends[ends.length - 1]);
      const threshold = Math.max(1, Math.floor(budget * thresholdShare));
      const { report } = compressContext(request, { maxContextTokens: budget, compressionThresholdTokens: threshold, keepLast, counter });
      const floor = protectedFloor(request, 1, keepLast, counter);
      if (floor >= budget) {
        if (report.summarize) overAndAsked++;
        expect(report.summarize).toBeUndefined();
      } else if (report.summarize) {
        roomAndAsked++;
      }
    }), propertyParams());
    expect(overAndAsked).toBe(0);
    // The rule removes only the pointless requests: summaries are still asked for where there is room.
    expect(roomAndAsked).toBeGreaterThan(0);
  });
});
