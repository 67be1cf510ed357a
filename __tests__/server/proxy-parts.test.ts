import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { checkConfig, limitsFor } from '../../src/server/model-limits.js';
import { resolveServerOptions } from '../../src/server/options.js';
import { SseReader } from '../../src/server/sse-reader.js';
import { callerKey } from '../../src/server/tenant.js';
import { forwardHeaders, relayedHeaders, upstreamUrl } from '../../src/server/upstream.js';
import { chatOf } from '../../src/server/chat-id.js';
import { propertyParams } from '../helpers/property-runs.js';
import { createCompressor } from '../../src/runtime/compressor.js';
import { generateConversation } from '../../bench/fixtures/conversation.js';
import { scriptedSummarizer } from '../helpers/test-summarizers.js';

/** The proxy's small parts, each on its own: the event-stream reader, config and limits, headers, chat ids. */

describe('SseReader', () => {
  const events = ['{"a":1}', '{"b":"ü 中文 \u{1F600}"}', '[DONE]', 'line one\nline two'];
  const wire = (eol: string) => events.map((e) => `event: x${eol}${e.split('\n').map((l) => `data: ${l}`).join(eol)}${eol}${eol}`).join('');

  test('every event comes out whole, however the bytes are split, with LF, CRLF or CR line ends', () => {
    fc.assert(fc.property(fc.constantFrom('\n', '\r\n', '\r'), fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 30, size: 'max' }), (eol, cuts) => {
      const bytes = Buffer.from(wire(eol), 'utf8');
      const seen: string[] = [];
      const reader = new SseReader((d) => seen.push(d));
      let at = 0;
      for (const cut of cuts) {
        if (at >= bytes.length) break;
        reader.push(bytes.subarray(at, at + cut));
        at += cut;
      }
      reader.push(bytes.subarray(at));
      reader.end();
      expect(seen).toEqual(events);
    }), propertyParams());
  });

  test('an event not closed by a blank line is delivered at the end; comments and other fields are skipped', () => {
    const seen: string[] = [];
    const reader = new SseReader((d) => seen.push(d));
    reader.push(Buffer.from(': keep-alive\nid: 7\nretry: 100\ndata:{"x":1}\n\ndata: tail'));
    reader.end();
    expect(seen).toEqual(['{"x":1}', 'tail']);
  });

  test('an event\'s name comes with its data, and does not carry over to the next event', () => {
    const seen: [string, string | undefined][] = [];
    const reader = new SseReader((d, name) => seen.push([d, name]));
    reader.push(Buffer.from('event: response.created\ndata: {"a":1}\n\nevent:plain\ndata: 2\n\ndata: 3\n\nevent: lonely\n\ndata: 4\n\n'));
    reader.end();
    expect(seen).toEqual([['{"a":1}', 'response.created'], ['2', 'plain'], ['3', undefined], ['4', undefined]]);
  });
});

describe('per-model limits', () => {
  const config = checkConfig({ models: { 'gpt-4o': { maxContextTokens: 64_000 }, 'local-llama': { maxContextTokens: 8_192, compressionThresholdTokens: 6_000 } } });

  test('config first (exact name or the same family), then an explicit --max-tokens, then ctxfold\'s table of known models, else none', () => {
    expect(limitsFor('gpt-4o', config, 10_000, undefined)).toEqual({ maxContextTokens: 64_000, source: 'config' });
    expect(limitsFor('gpt-4o-2024-08-06', config, 10_000, 5_000)).toEqual({ maxContextTokens: 64_000, compressionThresholdTokens: 5_000, source: 'config' });
    expect(limitsFor('local-llama', config, 10_000, 5_000)).toEqual({ maxContextTokens: 8_192, compressionThresholdTokens: 6_000, source: 'config' });
    expect(limitsFor('claude-sonnet-4-5', config, undefined, undefined)).toEqual({ maxContextTokens: 200_000, source: 'known-model' });
    expect(limitsFor('claude-sonnet-4-5', config, 10_000, undefined)).toEqual({ maxContextTokens: 10_000, source: 'max-tokens' });
    expect(limitsFor('my-finetune', config, 10_000, undefined)).toEqual({ maxContextTokens: 10_000, source: 'max-tokens' });
    expect(limitsFor(undefined, config, undefined, undefined)).toEqual({ source: 'none' });
  });

  test.each([
    [[1], 'config: must be a JSON object'],
    [{ model: {} }, 'config.model: unknown field; the config file has only "models"'],
    [{ models: [] }, 'config.models: must be an object whose keys are model names'],
    [{ models: { m: 5 } }, 'config.models["m"]: must be an object like {"maxContextTokens": 128000}'],
    [{ models: { m: {} } }, 'config.models["m"].maxContextTokens: must be an integer >= 1 (the model\'s context window in tokens), got undefined'],
    [{ models: { m: { maxContextTokens: 1.5 } } }, 'config.models["m"].maxContextTokens: must be an integer >= 1'],
    [{ models: { m: { maxContextTokens: 10, window: 3 } } }, 'config.models["m"].window: unknown field; known: maxContextTokens, compressionThresholdTokens'],
    [{ models: { m: { maxContextTokens: 10, compressionThresholdTokens: 0 } } }, 'config.models["m"].compressionThresholdTokens: must be an integer >= 1, got 0'],
  ])('config %j is refused naming the field: %s', (value, message) => {
    expect(() => checkConfig(value)).toThrow(message);
  });
});

describe('server options', () => {
  test.each([
    [{ upstream: '' }, 'options.upstream: is required'],
    [{ upstream: 'not a url' }, 'options.upstream: must be an http(s) URL'],
    [{ upstream: 'http://x/v1?key=1' }, 'options.upstream: must be a base URL without query or fragment'],
    [{ upstream: 'http://x/v1', port: -1 }, 'options.port: must be an integer from 0 to 65535, got -1'],
    [{ upstream: 'http://x/v1', maxBodyBytes: 0 }, 'options.maxBodyBytes: must be an integer from 1 up, got 0'],
    [{ upstream: 'http://x/v1', store: 'mysql://db' }, 'options.store: must be sqlite:PATH, redis://HOST:PORT (or rediss://), or memory, got "mysql://db"'],
    [{ upstream: 'http://x/v1', tenantHeader: 'Authorization' }, 'options.tenantHeader: must not be authorization'],
    [{ upstream: 'http://x/v1', tenantHeader: 'bad header' }, 'options.tenantHeader: must be an HTTP header name'],
    [{ upstream: 'http://x/v1', upstreamKeepAliveMs: -1 }, 'options.upstreamKeepAliveMs: must be an integer from 0 up, got -1'],
    [{ upstream: 'http://x/v1', upstreamKeepAliveMs: 1.5 }, 'options.upstreamKeepAliveMs: must be an integer from 0 up, got 1.5'],
  ])('%j is refused: %s', (options, message) => {
    expect(() => resolveServerOptions(options as never)).toThrow(message);
  });

  test('an idle upstream connection is kept 4 s by default: under the 5 s of Node\'s http server', () => {
    expect(resolveServerOptions({ upstream: 'http://x/v1' }).upstreamKeepAliveMs).toBe(4_000);
    expect(resolveServerOptions({ upstream: 'http://x/v1', upstreamKeepAliveMs: 0 }).upstreamKeepAliveMs).toBe(0);
  });
});

describe('headers and URLs', () => {
  test('the proxy\'s /v1/PATH lands on UPSTREAM/PATH, query kept, with or without a trailing slash', () => {
    expect(upstreamUrl(new URL('https://api.example.com/v1'), '/v1/chat/completions', '?a=1')).toBe('https://api.example.com/v1/chat/completions?a=1');
    expect(upstreamUrl(new URL('http://127.0.0.1:8000/openai/v1/'), '/v1/models', '')).toBe('http://127.0.0.1:8000/openai/v1/models');
  });

  test('hop-by-hop headers, those the connection header names, and x-ctxfold-* stay; a held key replaces the caller\'s', () => {
    const incoming = { host: 'proxy', connection: 'keep-alive, x-hop', 'x-hop': '1', 'keep-alive': 'timeout=5', 'content-length': '10', 'x-ctxfold-chat-id': 'c', authorization: 'Bearer caller', 'x-api-key': 'caller', 'x-other': ['a', 'b'] };
    const passed = forwardHeaders(incoming, undefined, undefined);
    expect(Object.keys(passed).sort()).toEqual(['accept-encoding', 'authorization', 'x-api-key', 'x-other']);
    expect(passed['x-other']).toEqual(['a', 'b']);
    expect(passed['accept-encoding']).toBe('identity');
    const held = forwardHeaders(incoming, { value: 'proxy-key', header: 'bearer' }, 'application/json');
    expect([held.authorization, held['x-api-key'], held['content-type']]).toEqual(['Bearer proxy-key', undefined, 'application/json']);
    const anthropic = forwardHeaders(incoming, { value: 'proxy-key', header: 'x-api-key' }, undefined);
    expect([anthropic.authorization, anthropic['x-api-key']]).toEqual([undefined, 'proxy-key']);
    const plain = forwardHeaders({ connection: 'keep-alive', 'keep-alive': 'timeout=5', 'x-kept': '1' }, undefined, undefined);
    expect(Object.keys(plain).sort()).toEqual(['accept-encoding', 'x-kept']);
  });

  test('response headers: hop-by-hop dropped, every other one as it came (the body is relayed byte for byte, encoded or not); cookies stay apart', () => {
    const h = { 'content-type': 'application/json', 'content-length': '12', connection: 'close', 'keep-alive': 'timeout=5', 'set-cookie': ['a=1', 'b=2'] };
    expect(relayedHeaders(h)).toEqual({ 'content-type': 'application/json', 'content-length': '12', 'set-cookie': ['a=1', 'b=2'] });
    const gz = { 'content-encoding': 'gzip', 'content-length': '12', 'x-request-id': 'r', 'transfer-encoding': 'chunked' };
    expect(relayedHeaders(gz)).toEqual({ 'content-encoding': 'gzip', 'content-length': '12', 'x-request-id': 'r' });
  });

  test('the caller\'s key: a bearer token, else x-api-key', () => {
    expect(callerKey({ authorization: 'Bearer sk-1' })).toBe('sk-1');
    expect(callerKey({ authorization: 'bearer   sk-2 ' })).toBe('sk-2');
    expect(callerKey({ authorization: 'Basic abc', 'x-api-key': 'sk-3' })).toBe('sk-3');
    expect(callerKey({})).toBeUndefined();
  });
});

describe('chat ids', () => {
  const history = [{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }];
  test('header, then metadata.chat_id, then user, then a fingerprint of the opening that includes the instructions, always under the tenant', () => {
    expect(chatOf({ 'x-ctxfold-chat-id': 'h' }, { metadata: { chat_id: 'm' }, user: 'u' }, history, 't')).toEqual({ chatId: 't:h', source: 'header' });
    expect(chatOf({}, { metadata: { chat_id: 'm' }, user: 'u' }, history, 't')).toEqual({ chatId: 't:m', source: 'metadata' });
    expect(chatOf({}, { user: 'u' }, history, 't')).toEqual({ chatId: 't:u', source: 'user' });
    const plain = chatOf({}, {}, history, 't');
    expect(plain.source).toBe('fingerprint');
    expect(plain.chatId).toMatch(/^t:fp:[0-9a-f]{16}$/);
    expect(chatOf({}, {}, history, 'u').chatId.slice(1)).toBe(plain.chatId.slice(1));
    expect(chatOf({}, { system: 'other instructions' }, history, 't').chatId).not.toBe(plain.chatId);
    expect(chatOf({}, { instructions: 'other instructions' }, history, 't').chatId).not.toBe(plain.chatId);
    // A chat UI's own header (Open WebUI: x-openwebui-chat-id) comes first when configured; x-ctxfold-chat-id still works.
    expect(chatOf({ 'x-openwebui-chat-id': 'w', 'x-ctxfold-chat-id': 'h' }, {}, history, 't', 'x-openwebui-chat-id')).toEqual({ chatId: 't:w', source: 'header' });
    expect(chatOf({ 'x-ctxfold-chat-id': 'h' }, {}, history, 't', 'x-openwebui-chat-id')).toEqual({ chatId: 't:h', source: 'header' });
  });
});

describe('compressor job counts (the queue-depth and lock metrics)', () => {
  test('waiting, running, coalesced and queued follow what the scheduler does, and are zero once drained', async () => {
    const summarizer = scriptedSummarizer(() => 150);
    const c = createCompressor({ maxContextTokens: 3_000, summarizer, concurrency: 1 });
    const history = generateConversation({ messages: 100, seed: 4 });
    expect(c.stats().jobs).toEqual({ waiting: 0, running: 0, coalesced: 0, queued: 0, queuedPeak: 0, maxQueuedJobs: 16, backlogFull: 0 });
    expect(c.schedule('a', history)).toBe('started'); // runs at once: a free slot
    expect(c.schedule('b', history)).toBe('started'); // waits for the slot
    expect(c.stats().jobs).toEqual({ waiting: 1, running: 1, coalesced: 0, queued: 1, queuedPeak: 1, maxQueuedJobs: 16, backlogFull: 0 });
    expect(c.schedule('a', history)).toBe('coalesced'); // a's lock is held: one follow-up
    expect(c.schedule('a', history)).toBe('coalesced'); // still one follow-up
    expect(c.stats().jobs).toEqual({ waiting: 2, running: 1, coalesced: 2, queued: 1, queuedPeak: 1, maxQueuedJobs: 16, backlogFull: 0 }); // a's follow-up takes no queue place yet
    await c.drain();
    expect(c.stats().jobs).toEqual({ waiting: 0, running: 0, coalesced: 2, queued: 0, queuedPeak: 1, maxQueuedJobs: 16, backlogFull: 0 });
    expect(summarizer.maxConcurrent).toBe(1);
    await c.close();
  });
});
