import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { request as httpRequest } from 'node:http';
import { generateConversation } from '../../bench/fixtures/conversation.js';
import { convertMessages } from '../../src/formats/convert.js';
import { validateMessages } from '../../src/formats/profiles.js';
import { startServer, type RunningServer, type ServerOptions } from '../../src/server/index.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { compressContext } from '../../src/runtime/compress.js';
import { toolRoundsChat } from '../helpers/tool-rounds.js';
import { anthropicMessage, anthropicStream, json, startUpstream, type StandInUpstream } from '../helpers/upstream-server.js';

/**
 * The proxy's HTTP behaviour against a scripted upstream on 127.0.0.1: routes and their errors in
 * each API's own shape, the body limit, upstream errors passed through byte for byte, upstream
 * timeouts, client disconnects propagated upstream, the passthrough route, health and metrics,
 * the Anthropic route (fold, usage, summary), and what is (not) forwarded.
 */

let upstream: StandInUpstream;
let proxy: RunningServer;
let store: MemoryStore;

/** Starts a proxy in front of the stand-in with `options`; the caller closes it. */
const proxyWith = (options: Partial<ServerOptions> = {}) => startServer({ upstream: upstream.baseURL, port: 0, store: 'memory', logLevel: 'silent', ...options });

beforeAll(async () => {
  upstream = await startUpstream();
  store = new MemoryStore();
  proxy = await proxyWith({ store, maxContextTokens: 3_000, keepLast: 4 });
});
afterAll(async () => {
  await proxy.close();
  await upstream.close();
});

const chatBody = (messages: unknown[], extra: Record<string, unknown> = {}) => JSON.stringify({ model: 'test-model', messages, ...extra });
const post = (path: string, body: string, headers: Record<string, string> = {}, base = proxy.url) =>
  fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test', ...headers }, body });

/** A long OpenAI Chat history with tool calls, well over 3,000 tokens. */
const longChat = generateConversation({ messages: 120, seed: 11 });

describe('routes and the proxy\'s own errors', () => {
  test('an unknown path is a 404 JSON error in the OpenAI shape; under /v1/messages in the Anthropic shape', async () => {
    const r = await fetch(`${proxy.url}/v1/embeddings`, { method: 'POST', body: '{}' });
    expect(r.status).toBe(404);
    expect(r.headers.get('content-type')).toBe('application/json');
    const body = await r.json() as { error: { message: string; type: string; code: string } };
    expect(body.error).toEqual({ message: expect.stringContaining('no route POST /v1/embeddings'), type: 'invalid_request_error', param: null, code: 'ctxfold_not_found' });
    const a = await fetch(`${proxy.url}/v1/messages/count_tokens`, { method: 'POST', body: '{}' });
    expect(a.status).toBe(404);
    expect(await a.json()).toEqual({ type: 'error', error: { type: 'not_found_error', message: expect.stringContaining('no route') } });
    expect(upstream.requests.filter((q) => q.path.includes('embeddings') || q.path.includes('count_tokens'))).toEqual([]);
  });

  test('a known path with the wrong method is a 405 naming the method, with Allow', async () => {
    const r = await fetch(`${proxy.url}/v1/chat/completions`);
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe('POST');
    expect(((await r.json()) as { error: { message: string } }).error.message).toBe('/v1/chat/completions takes POST, got GET');
  });

  test('a body over --max-body-bytes is a 413 in the route\'s error shape, whether its length is declared or not, and nothing reaches the upstream', async () => {
    const small = await proxyWith({ maxBodyBytes: 1_000 });
    try {
      const before = upstream.requests.length;
      const big = chatBody([{ role: 'user', content: 'x'.repeat(2_000) }]);
      const r = await post('/v1/chat/completions', big, {}, small.url);
      expect(r.status).toBe(413);
      expect(((await r.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'ctxfold_body_too_large', message: expect.stringContaining('--max-body-bytes') });
      const a = await post('/v1/messages', big, {}, small.url);
      expect(a.status).toBe(413);
      expect(await a.json()).toEqual({ type: 'error', error: { type: 'request_too_large', message: expect.stringContaining('1000 bytes') } });
      // Chunked, no content-length: refused once it grows past the limit.
      const port = new URL(small.url).port;
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.write(big.slice(0, 600));
        req.end(big.slice(600));
      });
      expect(status).toBe(413);
      expect(upstream.requests.length).toBe(before);
    } finally {
      await small.close();
    }
  });

  test('a body that is not JSON is a 400 naming the problem', async () => {
    const r = await post('/v1/chat/completions', '{"model": "m", "messages": [');
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'ctxfold_invalid_json', message: expect.stringContaining('not valid JSON') });
  });

  test('a history ctxfold cannot read is a 400 naming the field, in the route\'s shape', async () => {
    const r = await post('/v1/chat/completions', chatBody([{ role: 'user', content: 'hi' }], { max_tokens: 5_000 }));
    expect(r.status).toBe(400);
    const error = ((await r.json()) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe('ctxfold_invalid_input');
    expect(error.message).toContain('request.max_tokens');
  });

  test('GET /healthz answers ok', async () => {
    const r = await fetch(`${proxy.url}/healthz`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ status: 'ok' });
  });
});

describe('passing through', () => {
  test('GET /v1/models goes upstream with its query and the caller\'s key, and its answer comes back as it was', async () => {
    upstream.handle((_q, res) => json(res, 200, { object: 'list', data: [{ id: 'm1', object: 'model' }] }, { 'x-request-id': 'req_models' }));
    const r = await fetch(`${proxy.url}/v1/models?limit=2`, { headers: { authorization: 'Bearer sk-models' } });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-request-id')).toBe('req_models');
    expect(await r.json()).toEqual({ object: 'list', data: [{ id: 'm1', object: 'model' }] });
    const seen = upstream.requests.at(-1)!;
    expect([seen.method, seen.path, seen.search, seen.headers.authorization]).toEqual(['GET', '/v1/models', '?limit=2', 'Bearer sk-models']);
  });

  test('upstream errors come back with their status, headers and exact bytes, and schedule nothing', async () => {
    const odd = '{"error":  {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}\n';
    upstream.handle((_q, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7', 'x-ratelimit-remaining-requests': '0' });
      res.end(odd);
    });
    const r = await post('/v1/chat/completions', chatBody(longChat), { 'x-ctxfold-chat-id': 'rate-limited' });
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('7');
    expect(r.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(await r.text()).toBe(odd);
    for (const [status, bytes, type] of [[500, 'upstream exploded', 'text/plain'], [400, '{"error":{"message":"bad","type":"invalid_request_error","param":"messages","code":null}}', 'application/json']] as const) {
      upstream.handle((_q, res) => {
        res.writeHead(status, { 'content-type': type });
        res.end(bytes);
      });
      const e = await post('/v1/chat/completions', chatBody([{ role: 'user', content: 'hi' }]));
      expect([e.status, await e.text()]).toEqual([status, bytes]);
    }
    await proxy.drain();
    expect(await store.get(`${(await tenantOfKey('sk-test'))}:rate-limited`)).toBeUndefined();
  });

  test('an unreachable upstream is a 502 in the route\'s shape', async () => {
    const nowhere = await startServer({ upstream: 'http://127.0.0.1:9/v1', port: 0, store: 'memory', logLevel: 'silent' });
    try {
      const r = await post('/v1/chat/completions', chatBody([{ role: 'user', content: 'hi' }]), {}, nowhere.url);
      expect(r.status).toBe(502);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('ctxfold_upstream_unreachable');
    } finally {
      await nowhere.close();
    }
  });

  test('a body with no history to fold (Responses continuing previous_response_id) goes out byte for byte; so does one whose view is the whole history', async () => {
    upstream.handle((_q, res) => json(res, 200, { id: 'resp_1', object: 'response', status: 'completed', output: [] }));
    const continued = '{"model":"test-model",  "previous_response_id":"resp_0", "input":[{"role":"user","content":"and then?"}], "temperature": 1.0}';
    await post('/v1/responses', continued);
    expect(upstream.requests.at(-1)!.rawBody).toBe(continued);
    const short = '{ "model": "test-model", "messages": [ {"role": "user", "content": "hi"} ], "temperature": 1.0, "n": 1 }';
    upstream.handle((_q, res) => json(res, 200, { id: 'c', object: 'chat.completion', choices: [] }));
    await post('/v1/chat/completions', short);
    expect(upstream.requests.at(-1)!.rawBody).toBe(short);
  });

  test('hop-by-hop and x-ctxfold-* headers stay at the proxy; accept-encoding is identity; other headers go upstream', async () => {
    upstream.handle((_q, res) => json(res, 200, { id: 'c', object: 'chat.completion', choices: [] }));
    await post('/v1/chat/completions', chatBody([{ role: 'user', content: 'hi' }]), {
      'x-ctxfold-chat-id': 'c1', 'x-ctxfold-tenant': 't1', 'openai-organization': 'org_1', 'accept-encoding': 'gzip, br', 'x-custom': 'kept', connection: 'keep-alive',
    });
    const h = upstream.requests.at(-1)!.headers;
    expect(h['x-ctxfold-chat-id']).toBeUndefined();
    expect(h['x-ctxfold-tenant']).toBeUndefined();
    expect(h['openai-organization']).toBe('org_1');
    expect(h['x-custom']).toBe('kept');
    expect(h['accept-encoding']).toBe('identity');
    expect(h.authorization).toBe('Bearer sk-test');
  });
});

/** The tenant id the proxy derives from a bearer key (as `tenant.ts` does; imported here to name store keys). */
async function tenantOfKey(key: string): Promise<string> {
  const { tenantOf, DEFAULT_TENANT_HEADER } = await import('../../src/server/tenant.js');
  return tenantOf({ authorization: `Bearer ${key}` }, { proxyHoldsKey: false, tenantHeader: DEFAULT_TENANT_HEADER });
}

describe('timeouts and disconnects', () => {
  test('an upstream silent past --upstream-timeout-ms is a 504 in the route\'s shape, and the upstream call is abandoned', async () => {
    const quick = await proxyWith({ upstreamTimeoutMs: 150 });
    try {
      upstream.handle(() => undefined); // never answers
      const cut = upstream.nextCutOff();
      const r = await post('/v1/chat/completions', chatBody([{ role: 'user', content: 'hi' }]), {}, quick.url);
      expect(r.status).toBe(504);
      expect(((await r.json()) as { error: { code: string; type: string } }).error).toMatchObject({ code: 'ctxfold_upstream_timeout', type: 'server_error' });
      await cut;
      const a = await post('/v1/messages', JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }), {}, quick.url);
      expect(a.status).toBe(504);
      expect(await a.json()).toEqual({ type: 'error', error: { type: 'timeout_error', message: expect.stringContaining('150 ms') } });
    } finally {
      await quick.close();
    }
  });

  test('a stream\'s status and headers reach the client before its first event; a body of known length comes whole with its headers', async () => {
    const own = await proxyWith();
    try {
      let release!: () => void;
      const released = new Promise<void>((resolve) => { release = resolve; });
      upstream.handle(async (_q, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.flushHeaders();
        await released; // the first token comes only once the client holds the headers
        res.end('data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n');
      });
      const r = await post('/v1/chat/completions', chatBody([{ role: 'user', content: 'hi' }], { stream: true }), {}, own.url);
      expect([r.status, r.headers.get('content-type')]).toEqual([200, 'text/event-stream']);
      release();
      expect(await r.text()).toContain('data: [DONE]');

      const answer = JSON.stringify({ id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] });
      upstream.handle((_q, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(answer)) });
        res.end(answer);
      });
      const whole = await post('/v1/chat/completions', chatBody([{ role: 'user', content: 'hi' }]), {}, own.url);
      expect([whole.status, whole.headers.get('content-length'), await whole.text()]).toEqual([200, String(Buffer.byteLength(answer)), answer]);
    } finally {
      await own.close();
    }
  });

  test('a stream that stalls past the limit is cut: the client sees an incomplete response, not a clean end', async () => {
    const quick = await proxyWith({ upstreamTimeoutMs: 200 });
    try {
      upstream.handle((_q, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"par"}}]}\n\n');
      });
      const r = await post('/v1/chat/completions', chatBody([{ role: 'user', content: 'hi' }], { stream: true }), {}, quick.url);
      expect(r.status).toBe(200);
      await expect(r.text()).rejects.toThrow();
    } finally {
      await quick.close();
    }
  });

  test('an encoded answer reaches the client byte for byte with its content-encoding; one that breaks off mid-body is cut, not ended cleanly, and schedules nothing', async () => {
    const { gzipSync } = await import('node:zlib');
    const ownStore = new MemoryStore();
    const own = await proxyWith({ store: ownStore, maxContextTokens: 3_000, keepLast: 4 });
    try {
      const packed = gzipSync(JSON.stringify({ id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] }));
      upstream.handle((_q, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(packed.length) });
        res.end(packed);
      });
      const raw = await new Promise<{ status?: number; encoding?: string; bytes: Buffer }>((resolve, reject) => {
        const target = new URL(`${own.url}/v1/chat/completions`);
        const q = httpRequest(target, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' } }, (res) => {
          const parts: Buffer[] = [];
          res.on('data', (c: Buffer) => parts.push(c));
          res.on('end', () => resolve({ status: res.statusCode, encoding: res.headers['content-encoding'], bytes: Buffer.concat(parts) }));
        });
        q.on('error', reject);
        q.end(chatBody([{ role: 'user', content: 'hi' }]));
      });
      expect([raw.status, raw.encoding]).toEqual([200, 'gzip']);
      expect(raw.bytes.equals(packed)).toBe(true);

      upstream.handle((_q, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '400' });
        res.write('{"id":"c","object":"chat.completion","choi');
        setTimeout(() => res.socket?.destroy(), 20);
      });
      const r = await post('/v1/chat/completions', chatBody(longChat), { 'x-ctxfold-chat-id': 'broken-off' }, own.url);
      expect(r.status).toBe(200);
      await expect(r.text()).rejects.toThrow();
      await own.drain();
      expect(await ownStore.get(`${(await tenantOfKey('sk-test'))}:broken-off`)).toBeUndefined();
    } finally {
      await own.close();
    }
  });

  test('a client that disconnects while the upstream works aborts the upstream call (before headers, and mid-stream)', async () => {
    upstream.handle(() => undefined); // works forever
    let cut = upstream.nextCutOff();
    const arrived = upstream.requests.length;
    const c = new AbortController();
    const first = fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', body: chatBody([{ role: 'user', content: 'wait' }]), signal: c.signal }).catch(() => 'aborted');
    while (upstream.requests.length === arrived) await new Promise((resolve) => setTimeout(resolve, 5));
    c.abort();
    expect(await first).toBe('aborted');
    expect((await cut).body?.messages).toEqual([{ role: 'user', content: 'wait' }]);

    // Mid-stream: the upstream has sent one event and keeps the stream open.
    upstream.handle((_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"par"}}]}\n\n');
    });
    cut = upstream.nextCutOff();
    const m = new AbortController();
    const r = await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', body: chatBody([{ role: 'user', content: 'stream' }], { stream: true }), signal: m.signal });
    const reader = r.body!.getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toContain('"par"');
    m.abort();
    expect((await cut).body?.messages).toEqual([{ role: 'user', content: 'stream' }]);
  });
});

describe('Anthropic Messages', () => {
  test('/v1/messages folds an Anthropic history (system and tools counted, both kept), forwards x-api-key and anthropic-version, and schedules the summary with the billed input', async () => {
    const converted = convertMessages(generateConversation({ messages: 150, seed: 5 }), { from: 'openai', to: 'anthropic' });
    const messages = converted.messages as unknown[];
    const system = 'You are a careful assistant.';
    const tools = [{ name: 'search', description: 'search things', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }];
    const anthropicStore = new MemoryStore();
    const lines: string[] = [];
    const small = await proxyWith({ store: anthropicStore, config: { models: { 'claude-test': { maxContextTokens: 4_000 } } }, logLevel: 'info', logDestination: { write: (line: string) => lines.push(line) } });
    try {
      upstream.handle((q, res) => {
        if (q.body?.stream === true) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.end(anthropicStream('streamed answer', 3_000).join(''));
        } else json(res, 200, anthropicMessage('answer', 1_000, 2_000));
      });
      const headers = { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01', authorization: '' };
      const body = { model: 'claude-test', max_tokens: 500, system, tools, messages, metadata: { chat_id: 'claude-chat' } };
      const r = await fetch(`${small.url}/v1/messages`, { method: 'POST', headers, body: JSON.stringify(body) });
      expect(r.status).toBe(200);
      expect(await r.json()).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'answer' }] });
      const seen = upstream.requests.at(-1)!;
      expect(seen.headers['x-api-key']).toBe('sk-ant-test');
      expect(seen.headers['anthropic-version']).toBe('2023-06-01');
      expect(seen.body!.system).toBe(system);
      expect(seen.body!.tools).toEqual(tools);
      expect(seen.body!.max_tokens).toBe(500);
      const sent = seen.body!.messages as unknown[];
      expect(sent.length).toBeLessThan(messages.length);
      expect(validateMessages(sent, 'anthropic')).toEqual([]);

      const s = await fetch(`${small.url}/v1/messages`, { method: 'POST', headers, body: JSON.stringify({ ...body, stream: true }) });
      expect(await s.text()).toBe(anthropicStream('streamed answer', 3_000).join(''));
      await small.drain();
      const tenant = (await import('../../src/server/tenant.js')).tenantOf({ 'x-api-key': 'sk-ant-test' }, { proxyHoldsKey: false, tenantHeader: 'x-ctxfold-tenant' });
      const state = await anthropicStore.get(`${tenant}:claude-chat`);
      expect(state?.version).toBeGreaterThanOrEqual(1);
      const metrics = await (await fetch(`${small.url}/metrics`)).text();
      expect(metrics).toMatch(/ctxfold_requests_total\{route="messages",status="200"\} 2/);
      // Usage read from the body (input + cache read) and from the stream's message_start.
      const logged = lines.map((l) => JSON.parse(l) as { msg: string; route?: string; billedInputTokens?: number; chatSource?: string }).filter((l) => l.msg === 'request' && l.route === 'messages');
      expect(logged.map((l) => [l.billedInputTokens, l.chatSource])).toEqual([[3_000, 'metadata'], [3_000, 'metadata']]);
    } finally {
      await small.close();
    }
  });
});

describe('keepLastYields', () => {
  test('by default a kept tail over the window gives way: its older rounds go, the last user message and the newest round are still sent; keepLastYields false sends it whole', async () => {
    // One user turn, then eight tool rounds with bulky results: keepLast 8 alone is far over 2,000 tokens.
    const messages = [{ role: 'system', content: 'You read pages.' }, ...toolRoundsChat('Read every page and tell me what they share.')];
    const sentBy = async (keepLastYields: boolean | undefined): Promise<Array<Record<string, unknown>>> => {
      const p = await proxyWith({ maxContextTokens: 2_000, keepLast: 8, ...(keepLastYields === undefined ? {} : { keepLastYields }) });
      try {
        upstream.handle((_q, res) => json(res, 200, { id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] }));
        const r = await post('/v1/chat/completions', chatBody(messages, { max_tokens: 100 }), { 'x-ctxfold-chat-id': `yields-${String(keepLastYields)}` }, p.url);
        expect(r.status).toBe(200);
        await r.text();
        return upstream.requests.at(-1)!.body!.messages as Array<Record<string, unknown>>;
      } finally {
        await p.close();
      }
    };
    const whole = await sentBy(false);
    expect(whole).toEqual(messages);
    const yielded = await sentBy(undefined);
    expect(await sentBy(true)).toEqual(yielded);
    expect(validateMessages(yielded, 'openai')).toEqual([]);
    expect(yielded.slice(0, 2)).toEqual(messages.slice(0, 2));
    expect(yielded.slice(-2)).toEqual(messages.slice(-2));
    expect(yielded.length).toBeLessThan(messages.length);
    // Within the window less the reply's max_tokens, as ctxfold counts (the view compressed again is left as it is).
    const again = compressContext(yielded as never, { maxContextTokens: 2_000 - 100 });
    expect([again.report.overBudget, again.messages]).toEqual([false, yielded]);
    expect(compressContext(messages as never, { maxContextTokens: 2_000 - 100, keepLast: 8, keepLastYields: false }).report.overBudget).toBe(true);
  });
});

describe('body memory', () => {
  test('two unnamed chats of one tenant, interleaved: each body is read against its own chat\'s last one', async () => {
    const m = await proxyWith({ store: new MemoryStore(), maxContextTokens: 100_000 });
    try {
      upstream.handle((_q, res) => json(res, 200, { id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] }));
      const other = generateConversation({ messages: 40, seed: 12 });
      for (let n = 10; n <= 30; n += 10) {
        for (const chat of [longChat, other]) expect((await post('/v1/chat/completions', chatBody(chat.slice(0, n)), {}, m.url)).status).toBe(200);
      }
      const text = await (await fetch(`${m.url}/metrics`)).text();
      // Each chat's 20- and 30-message bodies reuse its own 10 and 20 (60), and the second chat's
      // first body the system message it opens with like the first chat (1).
      expect(text).toMatch(/^ctxfold_body_items_reused_total 61$/m);
    } finally {
      await m.close();
    }
  });
});

describe('metrics', () => {
  test('/metrics exposes requests, tokens before/after, summaries by outcome, queue depth, lock contention, store warnings, latency histograms and the body memory (own registry)', async () => {
    const own = new MemoryStore();
    const m = await proxyWith({ store: own, maxContextTokens: 3_000, keepLast: 4 });
    try {
      upstream.handle((_q, res) => json(res, 200, { id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 2_900, completion_tokens: 1, total_tokens: 2_901 } }));
      for (let n = 60; n <= 120; n += 20) await post('/v1/chat/completions', chatBody(longChat.slice(0, n)), { 'x-ctxfold-chat-id': 'metrics-chat' }, m.url);
      await fetch(`${m.url}/v1/nope`);
      await m.drain();
      const r = await fetch(`${m.url}/metrics`);
      expect(r.headers.get('content-type')).toContain('text/plain');
      const text = await r.text();
      expect(text).toMatch(/^ctxfold_requests_total\{route="chat.completions",status="200"\} 4$/m);
      expect(text).toMatch(/^ctxfold_requests_total\{route="not_found",status="404"\} 1$/m);
      const before = Number(/^ctxfold_tokens_before_total\{route="chat.completions"\} (\d+)/m.exec(text)?.[1]);
      const after = Number(/^ctxfold_tokens_after_total\{route="chat.completions"\} (\d+)/m.exec(text)?.[1]);
      expect(before).toBeGreaterThan(after);
      expect(after).toBeGreaterThan(0);
      expect(Number(/^ctxfold_summaries_total\{outcome="started"\} (\d+)/m.exec(text)?.[1])).toBeGreaterThan(0);
      expect(Number(/^ctxfold_summaries_total\{outcome="done"\} (\d+)/m.exec(text)?.[1])).toBeGreaterThan(0);
      expect(text).toMatch(/^ctxfold_summaries_total\{outcome="failed"\} 0$/m);
      expect(text).toMatch(/^ctxfold_summaries_total\{outcome="stale"\} 0$/m);
      expect(text).toMatch(/^ctxfold_summary_queue_depth 0$/m);
      expect(text).toMatch(/^ctxfold_summary_jobs_running 0$/m);
      expect(text).toMatch(/^ctxfold_summary_lock_contended_total \d+$/m);
      expect(text).toMatch(/^ctxfold_warnings_total\{code="store-unavailable"\} 0$/m);
      expect(text).toMatch(/^ctxfold_upstream_latency_seconds_count\{route="chat.completions"\} 4$/m);
      expect(text).toMatch(/^ctxfold_proxy_overhead_seconds_count\{route="chat.completions"\} 4$/m);
      expect(text).toMatch(/^ctxfold_process_cpu_user_seconds_total /m);
      // The chat's bodies grew by 20 messages each: the 60, 80 and 100 before were taken from its last body.
      expect(text).toMatch(/^ctxfold_body_items_reused_total 240$/m);
      expect(text).toMatch(new RegExp(`^ctxfold_body_memory_bytes ${Buffer.byteLength(chatBody(longChat.slice(0, 120)))}$`, 'm'));
      // Another proxy's registry is its own: its counts start at nothing.
      const fresh = await (await fetch(`${proxy.url}/metrics`)).text();
      expect(fresh).not.toMatch(/status="200"\} 4$/m);
    } finally {
      await m.close();
    }
  });
});
