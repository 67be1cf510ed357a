import { afterEach, expect, test } from '@jest/globals';
import { recallAnsweringStream } from '../../src/adapters/ai-sdk/recall-stream.js';
import { createCompressor, type Compressor } from '../../src/runtime/compressor.js';
import { createTokenCounter } from '../../src/tokens/counter.js';

/** `recallAnsweringStream` on its own: what happens when the application stops reading mid-round. */
const open: Compressor[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close(200)));
});

test('cancelling the stream while a recall round is held cancels the model stream and asks the model nothing more', async () => {
  const compressor = createCompressor({ format: 'ai-sdk', maxContextTokens: 4000, recall: true, counter: createTokenCounter() });
  open.push(compressor);
  const history = [{ role: 'user', content: [{ type: 'text', text: 'Where are the settings?' }] }];
  const { report } = await compressor.compress('c', history);
  let cancelledWith: unknown;
  // The model makes a whole recall call and then holds its stream open (no finish yet).
  const first = new ReadableStream<unknown>({
    start(controller) {
      controller.enqueue({ type: 'stream-start', warnings: [] });
      controller.enqueue({ type: 'tool-input-start', id: 'r1', toolName: 'ctxfold_recall' });
      controller.enqueue({ type: 'tool-input-end', id: 'r1' });
      controller.enqueue({ type: 'tool-call', toolCallId: 'r1', toolName: 'ctxfold_recall', input: '{"query":"settings"}' });
    },
    cancel(reason) {
      cancelledWith = reason;
    },
  });
  let asked = 0;
  const out = recallAnsweringStream(first, {
    compressor,
    chatId: 'c',
    history,
    extras: {},
    report,
    stream: async () => {
      asked++;
      return new ReadableStream();
    },
    onReport: () => undefined,
  });
  const reader = out.getReader();
  const pending = reader.read();
  await new Promise((resolve) => setTimeout(resolve, 20));
  await reader.cancel('stop');
  await new Promise((resolve) => setTimeout(resolve, 20));
  expect(cancelledWith).toBe('stop');
  expect(asked).toBe(0);
  await expect(pending).resolves.toEqual({ done: true, value: undefined });
});
