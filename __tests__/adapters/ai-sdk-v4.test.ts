import { describe, expect, test } from '@jest/globals';
import { loadAi7 } from '../helpers/ai-sdk-sdk.js';
import { replayThroughSdk } from '../helpers/ai-sdk-replay.js';
import { adapterScenarios } from '../helpers/ai-sdk-suite.js';

/** ai 7 declares `engines.node >= 22` and is only ever loaded under it. */
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);
const suite = NODE_MAJOR >= 22 ? describe : describe.skip;

suite(NODE_MAJOR >= 22
  ? 'ctxfoldMiddleware with ai 7 (LanguageModelV4, MockLanguageModelV4)'
  : `ctxfoldMiddleware with ai 7: SKIPPED, ai 7 needs Node >= 22 and this is Node ${process.versions.node}`, () => {
  adapterScenarios(loadAi7);

  test('a 2,000-message tool-calling chat replayed turn by turn: every prompt valid and within budget, one summary job at a time, the history never mutated', async () => {
    const found = await replayThroughSdk(await loadAi7(), { messages: 2000, seed: 2025, maxContextTokens: 16_000, maxOutputTokens: 1000 });
    console.log(`ai 7 replay: ${found.requests} requests (${found.viaGenerateText} through generateText) over ${found.sourceMessages} messages (${found.historyMessages} ModelMessages) in ${found.ms} ms; ${found.withSummary} with a summary; ${found.overBudget} over budget; summary jobs ${JSON.stringify(found.summaryJobs)}`);
    expect(found.requests).toBeGreaterThan(500);
    expect(found.viaGenerateText).toBeGreaterThanOrEqual(8);
    expect(found.invalid).toEqual([]);
    expect(found.miscounted).toEqual([]);
    expect(found.overWhileFitting).toEqual([]);
    expect(found.overBudget).toBeLessThan(found.requests * 0.05);
    expect(found.summaryJobs.mostAtOnce).toBe(1);
    expect(found.summaryJobs.started).toBeGreaterThan(0);
    expect(found.summaryJobs.started).toBe(found.summaryJobs.done + found.summaryJobs.failed + found.summaryJobs.stale);
    expect(found.withSummary).toBeGreaterThan(found.requests / 2);
    expect(found.guard).toEqual({ calls: found.requests });
    expect(found.history).toEqual(found.snapshot);
  }, 300_000);
});
