import { describe, expect, test } from '@jest/globals';
import { createCompressor, type CompressorEvents } from '../src/index.js';
import { billedInputTokens } from '../src/runtime/calibration.js';
import { generateConversation } from '../bench/fixtures/conversation.js';

/** A history long enough that a 3,000-token budget cuts it. */
const history = generateConversation({ messages: 120, seed: 5 });

describe('calibration from the usage a provider reports', () => {
  test('the billed input tokens are read from each provider\'s response shape', () => {
    expect(billedInputTokens({ usage: { prompt_tokens: 812, completion_tokens: 9 } })).toBe(812);
    expect(billedInputTokens({ usage: { input_tokens: 640, output_tokens: 3 } })).toBe(640);
    expect(billedInputTokens({ usageMetadata: { promptTokenCount: 77 } })).toBe(77);
    expect(billedInputTokens({ usage: { inputTokens: 55 } })).toBe(55);
    expect(billedInputTokens({ choices: [] })).toBeUndefined();
    expect(billedInputTokens({ usage: { prompt_tokens: 0 } })).toBeUndefined();
    expect(billedInputTokens(null)).toBeUndefined();
  });

  test('wrap reports estimate against billed per model; with calibrate, a model billed above the estimate gets a smaller budget', async () => {
    for (const calibrate of [false, true]) {
      const compressor = createCompressor({ maxContextTokens: 3000, summarizer: null, calibrate });
      const samples: CompressorEvents['calibration'][] = [];
      compressor.on('calibration', (s) => samples.push(s));
      const windows: number[] = [];
      let last = 0;
      compressor.on('compressed', ({ report }) => {
        windows.push(report.maxContextTokens!);
        expect(report.tokensAfter).toBeLessThanOrEqual(report.maxContextTokens!);
        last = report.tokensAfter;
      });
      // A stand-in provider that bills 25% more input tokens than ctxfold counted for the view.
      const handler = compressor.wrap(async () => ({ usage: { prompt_tokens: Math.round(last * 1.25) } }));
      const request = { model: 'model-a', chatId: 'c1', messages: history };
      for (let k = 0; k < 5; k++) await handler(request);
      const stats = compressor.stats().calibration;
      expect(stats.samples).toBe(5);
      expect(stats.byModel['model-a'].samples).toBe(5);
      expect(stats.byModel['model-a'].ratio).toBeGreaterThan(0.79);
      expect(stats.byModel['model-a'].ratio).toBeLessThan(0.81);
      expect(samples.map((s) => s.model)).toEqual(Array(5).fill('model-a'));
      // Without calibrate the window stays; with it, once three responses were seen, it shrinks by the ratio.
      if (!calibrate) expect(windows).toEqual(Array(5).fill(3000));
      else {
        expect(windows.slice(0, 3)).toEqual([3000, 3000, 3000]);
        expect(windows[3]).toBeGreaterThanOrEqual(2390);
        expect(windows[3]).toBeLessThanOrEqual(2410);
      }
      await compressor.close();
    }
  });

  test('afterResponse (what adapters call) records usage and schedules the summary the plan asked for, once per chat at a time', async () => {
    const compressor = createCompressor({ maxContextTokens: 3000 });
    const samples: CompressorEvents['calibration'][] = [];
    const starts: string[] = [];
    compressor.on('calibration', (s) => samples.push(s));
    compressor.on('summary:start', (e) => starts.push(e.chatId));
    const { report } = await compressor.compress('c2', history);
    expect(report.summarize).toBeDefined();
    compressor.afterResponse('c2', history, report, { billedInputTokens: report.tokensAfter * 2, model: 'model-b' });
    compressor.afterResponse('c2', history, report, { billedInputTokens: 0 }); // no usage: nothing recorded
    await compressor.drain();
    expect(samples).toHaveLength(1);
    expect(samples[0]).toMatchObject({ chatId: 'c2', model: 'model-b', estimated: report.tokensAfter, billed: report.tokensAfter * 2, ratio: 0.5 });
    expect(starts).toEqual(['c2']); // the second call folded into the running job
    await compressor.close();
  });
});
