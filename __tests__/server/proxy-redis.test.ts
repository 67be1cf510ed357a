import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { generateConversation } from '../../bench/fixtures/conversation.js';
import { startServer, type RunningServer } from '../../src/server/index.js';
import { DEFAULT_TENANT_HEADER, tenantOf } from '../../src/server/tenant.js';
import { redisDescribe, startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { json, startUpstream, type StandInUpstream } from '../helpers/upstream-server.js';

/**
 * `--store redis://`: the proxy keeps its chats in a real redis-server on 127.0.0.1; with Redis
 * down it keeps answering (without stored summaries) and counts the store warnings in /metrics;
 * once Redis is back, summaries are read and written again.
 */

let redis: RedisServer;
let upstream: StandInUpstream;
let proxy: RunningServer;

redisDescribe('the proxy on a Redis store', () => {
  beforeAll(async () => {
    redis = await startRedisServer({ persist: true });
    upstream = await startUpstream((_q, res) => json(res, 200, { id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] }));
    proxy = await startServer({ upstream: upstream.baseURL, port: 0, store: redis.url, maxContextTokens: 3_000, keepLast: 4, logLevel: 'silent' });
  });
  afterAll(async () => {
    await proxy?.close();
    await upstream?.close();
    await redis?.stop();
  });

  const send = (messages: unknown[]) => fetch(`${proxy.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: 'Bearer sk-redis', 'x-ctxfold-chat-id': 'r1' }, body: JSON.stringify({ model: 'm', messages }),
  });
  const warnings = async () => Number(/^ctxfold_warnings_total\{code="store-unavailable"\} (\d+)$/m.exec(await (await fetch(`${proxy.url}/metrics`)).text())?.[1]);

  test('summaries land in Redis under the tenant\'s key; with Redis down requests are still answered and counted as store warnings; back up, summaries resume', async () => {
    const history = generateConversation({ messages: 140, seed: 12 });
    expect((await send(history.slice(0, 100))).status).toBe(200);
    await proxy.drain();
    const { RedisStore } = await import('../../src/store/redis.js');
    const reader = await RedisStore.open({ url: redis.url });
    const key = `${tenantOf({ authorization: 'Bearer sk-redis' }, { proxyHoldsKey: false, tenantHeader: DEFAULT_TENANT_HEADER })}:r1`;
    try {
      expect((await reader.get(key))?.version).toBe(1);

      await redis.kill();
      const before = await warnings();
      const during = await send(history.slice(0, 110));
      expect(during.status).toBe(200);
      const sent = upstream.requests.at(-1)!.body!.messages as unknown[];
      expect(sent.length).toBeLessThan(110); // still folded to the window, without the stored summary
      expect(await warnings()).toBeGreaterThan(before);
      await proxy.drain();

      await redis.restart();
      await reader.ready(5_000);
      // The proxy's client reconnects by itself (its own backoff): the next requests fold again.
      let version = 1;
      for (let attempt = 0; attempt < 50 && version < 2; attempt++) {
        expect((await send(history.slice(0, 120 + (attempt % 20)))).status).toBe(200);
        await proxy.drain();
        version = (await reader.get(key))?.version ?? 0;
        if (version < 2) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(version).toBeGreaterThanOrEqual(2);
    } finally {
      await reader.close();
    }
  });
});
