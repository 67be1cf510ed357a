import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { createCompressor, createExtractiveSummarizer, createTokenCounter, MemoryStore, type OpenAIChatMessage, type Summarizer } from '../src/index.js';
import { generateConversation, modelRequestEnds } from '../bench/fixtures/conversation.js';
import { protectedFloor } from '../bench/budget.js';
import { propertyParams } from './helpers/property-runs.js';

/**
 * A background summary is made only where it is of use: where a view could hold it, or with
 * recall on (the job keeps the originals it covers, which recall answers with). When what is never
 * dropped (the head, system messages and the kept tail) already fills the window, a summary would
 * be made and left out of every view: a summarizer call (an LLM call, with an LLM summarizer) for
 * nothing, on every request until the kept tail moves on. Judged from outside: the summarizer's
 * calls, and a lower bound of the protected part written apart from the planner (`protectedFloor`).
 * The kept tail is sent whole here (`keepLastYields: false`): by default it yields to the window,
 * and what it yields can be summarized into the view.
 */

const counter = createTokenCounter();

/** The extractive summarizer, counting its calls. */
function countingSummarizer(): { summarizer: Summarizer; calls: () => number } {
  const extractive = createExtractiveSummarizer();
  let calls = 0;
  return { summarizer: { ...extractive, summarize: (request) => { calls++; return extractive.summarize(request); } }, calls: () => calls };
}

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

/** Serves the requests of `history` from `from` on, one tool round at a time; returns the summarizer calls made once the current turn alone was over the window. */
async function replay(compressor: ReturnType<typeof createCompressor>, history: OpenAIChatMessage[], calls: () => number): Promise<{ overBudget: number; noted: number; callsWhileOver: number }> {
  let overBudget = 0;
  let noted = 0;
  let callsBeforeOver = -1;
  for (let end = 16; end <= history.length; end += 2) {
    const request = history.slice(0, end);
    const { report } = await compressor.compress('c', request);
    // (Over only because of the current turn: its rounds are kept whole, with the request.)
    if (report.overBudget && overBudget++ === 0) callsBeforeOver = calls();
    if (report.notes.some((n) => n.startsWith('no background summary: the head, system messages and kept tail alone fill the window'))) noted++;
    compressor.afterResponse('c', request, report);
    await compressor.drain();
  }
  return { overBudget, noted, callsWhileOver: callsBeforeOver < 0 ? 0 : calls() - callsBeforeOver };
}

describe('a background summary is made only where it is of use', () => {
  test('a current turn over the window makes no summarizer call; once the kept tail moves on, a summary is made and sent', async () => {
    const { summarizer, calls } = countingSummarizer();
    const compressor = createCompressor({ maxContextTokens: 2000, compressionThresholdTokens: 1500, keepLast: 8, keepLastYields: false, summarizer, counter });
    try {
      const history = bulkyRounds(12);
      const run = await replay(compressor, history, calls);
      expect(run.overBudget).toBeGreaterThan(5);
      expect(run.noted).toBeGreaterThan(5);
      expect(run.callsWhileOver).toBe(0);
      const callsBeforeMovingOn = calls();

      // The user moves on with short turns: the kept tail is small again, and the turns before it
      // are summarized and sent as a summary.
      history.push({ role: 'assistant', content: 'The pages say lorem ipsum.' });
      for (let k = 0; k < 4; k++) history.push({ role: 'user', content: `Question ${k}?` }, { role: 'assistant', content: `Answer ${k}.` });
      history.push({ role: 'user', content: 'Thanks, one last question?' });
      const { report } = await compressor.compress('c', history);
      expect(report.overBudget).toBe(false);
      compressor.afterResponse('c', history, report);
      await compressor.drain();
      expect(calls()).toBeGreaterThan(callsBeforeMovingOn);
      const next = await compressor.compress('c', history);
      expect(next.report.summary.applied).toBe(true);
      expect(next.report.tokensAfter).toBeLessThanOrEqual(2000);
    } finally {
      await compressor.close();
    }
  });

  test('with recall on, the summary is still made: the originals it covers are what recall answers with', async () => {
    const { summarizer, calls } = countingSummarizer();
    const compressor = createCompressor({ maxContextTokens: 2000, compressionThresholdTokens: 1500, keepLast: 8, keepLastYields: false, summarizer, counter, recall: true, store: new MemoryStore() });
    try {
      const run = await replay(compressor, bulkyRounds(12), calls);
      expect(run.overBudget).toBeGreaterThan(5);
      expect(run.noted).toBe(0);
      expect(run.callsWhileOver).toBeGreaterThan(0);
      // An earlier exchange, dropped from every view, is read back.
      expect((await compressor.recall!.answer('c', { query: 'Earlier question 3' })).text).toContain('is page 3 ready?');
    } finally {
      await compressor.close();
    }
  });

  test('property: while the protected part alone is over the window, a compressor without recall makes no summarizer call', async () => {
    let overRequests = 0;
    await fc.assert(fc.asyncProperty(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 40, max: 160 }), fc.integer({ min: 800, max: 5000 }), fc.integer({ min: 0, max: 10 }), async (seed, length, budget, keepLast) => {
      const history = generateConversation({ messages: length, seed });
      const { summarizer, calls } = countingSummarizer();
      const compressor = createCompressor({ maxContextTokens: budget, keepLast, keepLastYields: false, summarizer, counter });
      try {
        for (const end of modelRequestEnds(history)) {
          const request = history.slice(0, end);
          const { report } = await compressor.compress('p', request);
          const before = calls();
          compressor.afterResponse('p', request, report);
          await compressor.drain();
          if (protectedFloor(request, 1, keepLast, counter) >= budget) {
            overRequests++;
            expect(calls()).toBe(before);
          }
        }
      } finally {
        await compressor.close();
      }
    }), { ...propertyParams(), numRuns: Math.max(20, Math.floor(propertyParams().numRuns / 10)) });
    expect(overRequests).toBeGreaterThan(0);
  });
});
