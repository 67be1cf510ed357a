import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { generateConversation } from '../../bench/fixtures/conversation.js';
import { startServer, type RunningServer } from '../../src/server/index.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import { openaiChatLens } from '../../src/formats/openai-chat/lens.js';
import { startUpstream, type StandInUpstream } from '../helpers/upstream-server.js';

/** An explicit maxContextTokens (`--max-tokens`) wins over ctxfold's table of known windows (gpt-4o: 128k). */
let upstream: StandInUpstream;
let proxy: RunningServer;

beforeAll(async () => {
  upstream = await startUpstream();
  proxy = await startServer({ upstream: upstream.baseURL, port: 0, store: 'memory', logLevel: 'silent', maxContextTokens: 3_000, summarizer: null });
});
afterAll(async () => {
  await proxy.close();
  await upstream.close();
});

test('model gpt-4o with maxContextTokens 3000: a ~15k-token history is folded to at most 3000', async () => {
  const history = generateConversation({ messages: 160, seed: 5 });
  const counter = createTokenCounter({ model: 'gpt-4o' });
  const total = (ms: readonly unknown[]) => counter.requestOverhead + ms.reduce<number>((n, m) => n + counter.message(m as never, openaiChatLens), 0);
  const before = total(history);
  expect(before).toBeGreaterThan(12_000);
  const r = await fetch(`${proxy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test', 'x-ctxfold-chat-id': 'explicit' },
    body: JSON.stringify({ model: 'gpt-4o', messages: history }),
  });
  expect(r.status).toBe(200);
  const sent = upstream.requests.at(-1)!.body!.messages as unknown[];
  expect(total(sent)).toBeLessThanOrEqual(3_000);
});
