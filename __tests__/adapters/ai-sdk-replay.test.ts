import { describe, expect, test } from '@jest/globals';
import { loadAi6 } from '../helpers/ai-sdk-sdk.js';
import { replayThroughSdk } from '../helpers/ai-sdk-replay.js';

describe('a 2,000-message tool-calling chat replayed turn by turn through ai 6 (generateText, MockLanguageModelV3)', () => {
  test('every prompt the model receives is valid and within budget, one summary job at a time, the history never mutated', async () => {
    const found = await replayThroughSdk(await loadAi6(), { messages: 2000, seed: 2024, maxContextTokens: 16_000, maxOutputTokens: 1000 });
    console.log(`ai 6 replay: ${found.requests} requests (${found.viaGenerateText} through generateText) over ${found.sourceMessages} messages (${found.historyMessages} ModelMessages) in ${found.ms} ms; ${found.withSummary} with a summary; ${found.overBudget} over budget (protected part too big); largest prompt ${found.largestPromptTokens} tokens; summary jobs ${JSON.stringify(found.summaryJobs)}`);
    expect(found.sourceMessages).toBe(2000);
    expect(found.viaGenerateText).toBeGreaterThanOrEqual(8);
    expect(found.requests).toBeGreaterThan(500);
    expect(found.invalid).toEqual([]);
    expect(found.miscounted).toEqual([]);
    expect(found.overWhileFitting).toEqual([]);
    expect(found.overBudget).toBeLessThan(found.requests * 0.05);
    expect(found.summaryJobs.mostAtOnce).toBe(1);
    expect(found.summaryJobs.started).toBeGreaterThan(0);
    expect(found.summaryJobs.started).toBe(found.summaryJobs.done + found.summaryJobs.failed + found.summaryJobs.stale);
    expect(found.summaryJobs.failed).toBe(0);
    expect(found.withSummary).toBeGreaterThan(found.requests / 2);
    expect(found.guard).toEqual({ calls: found.requests });
    expect(found.history).toEqual(found.snapshot);
  }, 300_000);
});
