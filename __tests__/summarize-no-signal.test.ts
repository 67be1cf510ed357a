import { afterEach, describe, expect, test } from '@jest/globals';
import { createExtractiveSummarizer, createLlmSummarizer, summarizerFromFunction } from '../src/index.js';
import type { TranscriptEntry } from '../src/formats/lens.js';
import { summarizeRolling } from '../src/summarize/rolling.js';
import { startFakeLlmServer, type FakeLlmServer } from './helpers/fake-llm-server.js';

/** A caller in plain JavaScript may call summarize() with no signal: that means never aborted. */
const messages: TranscriptEntry[] = [
  { role: 'user', text: 'Find invoice INV-2024-0042 and tell me its amount.', calls: [], results: [] },
  { role: 'assistant', text: '', calls: [{ id: 'call_1', name: 'find_invoice', arguments: '{"id":"INV-2024-0042"}' }], results: [] },
  { role: 'tool', text: '', calls: [], results: [{ id: 'call_1', name: 'find_invoice', content: '{"id":"INV-2024-0042","amount":"$1,250.00"}' }] },
  { role: 'assistant', text: 'Invoice INV-2024-0042 is for $1,250.00.', calls: [], results: [] },
];

describe('summarize() without a signal', () => {
  let server: FakeLlmServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  test('the extractive summarizer summarizes', async () => {
    const summary = await createExtractiveSummarizer().summarize({ messages });
    expect(summary).toMatch(/INV-2024-0042/);
  });

  test('a summarizer on a function summarizes, and the function is given a signal that is not aborted', async () => {
    const seen: AbortSignal[] = [];
    const summarizer = summarizerFromFunction(async ({ signal }) => {
      seen.push(signal);
      return 'the user asked for invoice INV-2024-0042: $1,250.00';
    });
    expect(await summarizer.summarize({ messages })).toMatch(/INV-2024-0042/);
    expect(seen).toHaveLength(1);
    expect(seen[0].aborted).toBe(false);
  });

  test('the LLM summarizer summarizes against a real endpoint', async () => {
    server = await startFakeLlmServer();
    server.enqueue({ content: 'Invoice INV-2024-0042: $1,250.00.' });
    const summary = await createLlmSummarizer({ baseURL: server.baseURL, model: 'm', retries: 0 }).summarize({ messages });
    expect(summary).toMatch(/INV-2024-0042/);
  });

  test('the rolling driver folds', async () => {
    const { summary, calls } = await summarizeRolling(createExtractiveSummarizer(), { messages });
    expect(summary).toMatch(/INV-2024-0042/);
    expect(calls).toBe(1);
  });

  test('a signal given still aborts', async () => {
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(createExtractiveSummarizer().summarize({ messages, signal: controller.signal })).rejects.toThrow('stop');
  });
});
