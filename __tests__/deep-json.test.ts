import { describe, expect, test } from '@jest/globals';
import { createCompressor, createExtractiveSummarizer } from '../src/index.js';
import { factsFromContent, JSON_DEPTH_READ } from '../src/summarize/facts.js';

/**
 * A tool output that is JSON nested thousands of levels deep (a crafted or broken one; only a few
 * kilobytes) overflowed the stack of the fact reader. The summary job then failed, and since the
 * message stays in the range every later job folds, every summary of that chat failed after it,
 * silently in the default `summaryFailMode`.
 */
const DEPTH = 20_000;
const deepArrays = `${'['.repeat(DEPTH)}1${']'.repeat(DEPTH)}`;
const deepObjects = `${'{"a":'.repeat(DEPTH)}1${'}'.repeat(DEPTH)}`;

describe('JSON nested thousands of levels deep', () => {
  test('is read for facts down to JSON_DEPTH_READ levels, without overflowing', () => {
    for (const text of [deepArrays, deepObjects]) expect(() => factsFromContent(text, 100)).not.toThrow();
    // What lies within the depth read is still found; what lies below it is not read.
    const shallow = JSON.stringify({ order: { order_id: 'QX7P2K', items: [{ sku: 'AB-1234' }] } });
    expect(factsFromContent(shallow, 100).map((f) => f.value)).toEqual(expect.arrayContaining(['QX7P2K', 'AB-1234']));
    let below: unknown = { order_id: 'ZZ9Y8X' };
    for (let k = 0; k < JSON_DEPTH_READ + 5; k++) below = { a: below };
    expect(factsFromContent(JSON.stringify(below), 100).map((f) => f.value)).not.toContain('ZZ9Y8X');
  });

  test('the extractive summarizer summarizes it as a tool result, a call argument and a message', async () => {
    const summarizer = createExtractiveSummarizer();
    const signal = new AbortController().signal;
    for (const messages of [
      [{ role: 'tool' as const, text: '', calls: [], results: [{ id: 'c1', name: 'tree', content: deepArrays }] }],
      [{ role: 'assistant' as const, text: '', calls: [{ id: 'c1', name: 'tree', arguments: deepObjects }], results: [] }],
      [{ role: 'user' as const, text: deepObjects, calls: [], results: [] }],
    ]) {
      await expect(summarizer.summarize({ messages, signal, maxTokens: 500 })).resolves.toMatch(/\S/);
    }
  });

  test('a chat holding one such tool result still gets its background summaries', async () => {
    const compressor = createCompressor({ maxContextTokens: 3000, compressionThresholdTokens: 2000 });
    let done = 0;
    let failed = 0;
    compressor.on('summary:done', () => { done++; });
    compressor.on('summary:failed', () => { failed++; });
    const messages: Record<string, unknown>[] = [
      { role: 'system', content: 'You help with trees.' },
      { role: 'user', content: 'Load the tree.' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'load_tree', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: deepArrays },
      { role: 'assistant', content: 'Loaded.' },
    ];
    for (let turn = 0; turn < 8; turn++) {
      messages.push({ role: 'user', content: `question ${turn}: ${'word '.repeat(200)}` }, { role: 'assistant', content: `answer ${turn}: ${'word '.repeat(200)}` });
      const { report } = await compressor.compress('tree-chat', messages);
      compressor.afterResponse('tree-chat', messages, report);
      await compressor.drain();
    }
    await compressor.close();
    expect(failed).toBe(0);
    expect(done).toBeGreaterThan(0);
  });
});
