import { afterAll, beforeAll, expect, test } from '@jest/globals';
import OpenAI from 'openai';
import { parseArgs } from '../../src/cli/args.js';
import type { RunningServer } from '../../src/server/index.js';
import { redisDescribe, startRedisServer, type RedisServer } from '../helpers/redis-server.js';
import { startChatStandIn, type ChatStandIn } from '../recall/chat-stand-in.js';
import { recallHistory, startRecallProxy } from '../recall/recall-chat.js';

/**
 * `ctxfold serve --recall --store redis://...` on two proxies sharing one real redis-server: the
 * proxy that folded a chat keeps its originals in Redis, and the *other* proxy answers the model's
 * recall call for that chat from them (what a deployment of many instances needs).
 */

const FACT = 'Noted: the release notes live in /opt/relnotes/v3, signing key id QX-4417.';

let redis: RedisServer;
let model: ChatStandIn;
let a: RunningServer;
let b: RunningServer;
beforeAll(async () => {
  redis = await startRedisServer();
  model = await startChatStandIn();
  a = await startRecallProxy(model, { store: redis.url });
  b = await startRecallProxy(model, { store: redis.url });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await model?.close();
  await redis?.stop();
});


const client = (proxy: RunningServer) => new OpenAI({ apiKey: 'key-r', baseURL: `${proxy.url}/v1`, maxRetries: 0 });

redisDescribe('--recall with --store redis://', () => {
  test('parses, and startServer accepts it', () => {
    const invocation = parseArgs(['serve', '--upstream', 'http://127.0.0.1:9', '--store', 'redis://127.0.0.1:6379', '--recall']);
    expect(invocation).toMatchObject({ kind: 'run', options: { recall: true } });
  });

  test('a chat folded by proxy A has its recall call answered by proxy B from the originals in Redis', async () => {
    const messages = recallHistory(24, FACT);
    await client(a).chat.completions.create({ model: 'm', messages, metadata: { chat_id: 'shared-chat' } });
    await a.drain();
    const before = model.bodies.length;
    model.enqueue({ calls: [{ name: 'ctxfold_recall', arguments: { ids: ['#2'] } }] }, { text: 'The key id is QX-4417.' });
    const response = await client(b).chat.completions.create({ model: 'm', messages: [...messages, { role: 'user', content: 'Where are the release notes?' }], metadata: { chat_id: 'shared-chat' } });

    expect(response.choices[0].message.content).toBe('The key id is QX-4417.');
    const [first, second, ...more] = model.bodies.slice(before);
    expect(more).toEqual([]);
    // B's first view already applies A's summary (the fact is gone from it) and offers the tool.
    expect(JSON.stringify(first.messages)).not.toContain('release notes live in');
    expect(JSON.stringify(first.tools)).toContain('ctxfold_recall');
    // B's second request carries the original text, read from Redis.
    const answer = (second.messages as Record<string, unknown>[]).at(-1)!;
    expect(answer.role).toBe('tool');
    expect(answer.content).toContain(FACT);
  });
});
