import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { CtxfoldError, UpstreamError } from '../../src/errors.js';
import { startServer, type RunningServer, type ServerOptions } from '../../src/server/index.js';
import { json, startUpstream, type StandInUpstream } from '../helpers/upstream-server.js';

/**
 * The proxy's connections to its upstream: idle ones are closed before an upstream with Node's
 * default keep-alive (5 s) would close them, and never while an answer is awaited; a connection reset before any byte of the answer is
 * retried once on a fresh connection, never once a byte came back; which upstream a 502 / 504
 * names (its origin, nothing of its path or key), and that the error is a CtxfoldError.
 */

let upstream: StandInUpstream;
beforeAll(async () => {
  upstream = await startUpstream();
});
afterAll(async () => {
  await upstream.close();
});

const chat = JSON.stringify({ model: 'test-model', messages: [{ role: 'user', content: 'hi' }] });
const post = (proxy: RunningServer, body = chat, headers: Record<string, string> = {}) =>
  fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-caller-secret', ...headers }, body });

/** Runs `body` against a proxy started with `options`, and closes it. */
async function withProxy<T>(options: Partial<ServerOptions> & { upstream: string }, body: (proxy: RunningServer) => Promise<T>): Promise<T> {
  const proxy = await startServer({ port: 0, store: 'memory', logLevel: 'silent', ...options });
  try {
    return await body(proxy);
  } finally {
    await proxy.close();
  }
}

describe('which upstream an error names', () => {
  test('a 502 names the origin it could not reach, never the base path or a key', async () => {
    await withProxy({ upstream: 'http://127.0.0.1:9/tenant-7f3a/v1', upstreamKey: 'sk-proxy-secret' }, async (proxy) => {
      const r = await post(proxy);
      expect(r.status).toBe(502);
      const { error } = (await r.json()) as { error: { message: string; code: string } };
      expect(error.code).toBe('ctxfold_upstream_unreachable');
      expect(error.message).toMatch(/^upstream http:\/\/127\.0\.0\.1:9: could not be reached \(ECONNREFUSED\)$/);
      const a = await fetch(`${proxy.url}/v1/messages`, { method: 'POST', body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }) });
      expect(await a.json()).toEqual({ type: 'error', error: { type: 'api_error', message: 'upstream http://127.0.0.1:9: could not be reached (ECONNREFUSED)' } });
    });
  });

  test('a 504 names the origin that did not answer', async () => {
    upstream.handle(() => undefined); // never answers
    const origin = new URL(upstream.baseURL).origin;
    await withProxy({ upstream: upstream.baseURL, upstreamTimeoutMs: 100 }, async (proxy) => {
      const r = await post(proxy);
      expect(r.status).toBe(504);
      expect(((await r.json()) as { error: { message: string } }).error.message).toBe(`upstream ${origin}: did not answer within 100 ms`);
    });
  });

  test('UpstreamError is a CtxfoldError with its own kind, named by the origin alone', () => {
    const error = new UpstreamError('https://user.example:8443/v1/secret?key=sk-1', 'unreachable', 'could not be reached (ECONNRESET)');
    expect(error).toBeInstanceOf(CtxfoldError);
    expect(CtxfoldError.isInstance(error)).toBe(true);
    expect(UpstreamError.isInstance(error)).toBe(true);
    expect([error.name, error.failure, error.upstream, error.message]).toEqual(['UpstreamError', 'unreachable', 'https://user.example:8443', 'upstream https://user.example:8443: could not be reached (ECONNRESET)']);
  });
});

const answer = { id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] };

describe('a connection reset before the answer', () => {
  test('is retried once on a connection never used before: the client gets the answer', async () => {
    await withProxy({ upstream: upstream.baseURL }, async (proxy) => {
      const ports: number[] = [];
      upstream.handle((_q, res, req) => {
        ports.push(req.socket.remotePort!);
        json(res, 200, answer);
      });
      // Two requests at once: the proxy's pool holds two open connections.
      expect((await Promise.all([post(proxy), post(proxy)])).map((r) => r.status)).toEqual([200, 200]);
      const pooled = new Set(ports);
      const before = upstream.requests.length;
      let resets = 0;
      upstream.handle((_q, res, req) => {
        ports.push(req.socket.remotePort!);
        if (resets++ === 0) req.socket.destroy(); // on a pooled connection, before any byte of an answer
        else json(res, 200, answer);
      });
      const r = await post(proxy);
      expect([r.status, await r.json()]).toEqual([200, answer]);
      expect(upstream.requests.length - before).toBe(2);
      const [reset, retried] = ports.slice(-2);
      expect(pooled.has(reset!)).toBe(true);
      expect(pooled.has(retried!)).toBe(false);
    });
  });

  test('is retried once only: a second reset is a 502 naming the upstream, after exactly two requests', async () => {
    await withProxy({ upstream: upstream.baseURL }, async (proxy) => {
      upstream.handle((_q, _res, req) => { req.socket.destroy(); });
      const before = upstream.requests.length;
      const r = await post(proxy);
      expect(r.status).toBe(502);
      expect(((await r.json()) as { error: { message: string } }).error.message).toMatch(/^upstream http:\/\/127\.0\.0\.1:\d+: could not be reached \((ECONNRESET|EPIPE)\)$/);
      expect(upstream.requests.length - before).toBe(2);
    });
  });
});

describe('a connection reset once the answer started', () => {
  test('part of the status line and headers, then a reset: not retried, the client gets a 502, the upstream saw one request', async () => {
    await withProxy({ upstream: upstream.baseURL }, async (proxy) => {
      upstream.handle((_q, _res, req) => {
        req.socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n');
        setTimeout(() => req.socket.destroy(), 20);
      });
      const before = upstream.requests.length;
      const r = await post(proxy);
      expect(r.status).toBe(502);
      expect(upstream.requests.length - before).toBe(1);
    });
  });

  test('headers and part of the body, then a reset: not retried, the client sees the body cut off, the upstream saw one request', async () => {
    await withProxy({ upstream: upstream.baseURL }, async (proxy) => {
      upstream.handle((_q, res, req) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '400' });
        res.write('{"id":"c","object":"chat.comp');
        setTimeout(() => req.socket.destroy(), 20);
      });
      const before = upstream.requests.length;
      const r = await post(proxy);
      expect(r.status).toBe(200);
      await expect(r.text()).rejects.toThrow();
      expect(upstream.requests.length - before).toBe(1);
    });
  });
});

/** Resolves true once `done()` holds, false when it still does not after `ms` (checked every 10 ms). */
async function within(ms: number, done: () => boolean): Promise<boolean> {
  const until = performance.now() + ms;
  while (!done()) {
    if (performance.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

describe('idle connections to the upstream', () => {
  test('an idle pooled connection is closed by the proxy after upstreamKeepAliveMs, well before the upstream\'s own 5 s', async () => {
    await withProxy({ upstream: upstream.baseURL, upstreamKeepAliveMs: 100 }, async (proxy) => {
      let closed = false;
      let port = 0;
      upstream.handle((_q, res, req) => {
        port = req.socket.remotePort!;
        req.socket.once('close', () => { closed = true; });
        json(res, 200, answer);
      });
      expect((await post(proxy)).status).toBe(200);
      // The stand-in (Node's default keepAliveTimeout, 5 s) would close it only after 5 s.
      expect(await within(2_500, () => closed)).toBe(true);
      // The next request goes out on a new connection, and is answered.
      upstream.handle((_q, res, req) => {
        expect(req.socket.remotePort).not.toBe(port);
        json(res, 200, answer);
      });
      expect((await post(proxy)).status).toBe(200);
    });
  });

  test('a connection in use is never closed for being idle: an answer slower than the limit, and a stream with pauses longer than it, come whole', async () => {
    await withProxy({ upstream: upstream.baseURL, upstreamKeepAliveMs: 50 }, async (proxy) => {
      const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
      upstream.handle(async (_q, res) => {
        await pause(250);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"o"}}]}\n\n');
        await pause(250);
        res.end('data: [DONE]\n\n');
      });
      const r = await post(proxy, JSON.stringify({ model: 'test-model', stream: true, messages: [{ role: 'user', content: 'hi' }] }));
      expect(r.status).toBe(200);
      expect(await r.text()).toContain('data: [DONE]');
    });
  });

  test('upstreamKeepAliveMs 0 opens a new connection for every request', async () => {
    await withProxy({ upstream: upstream.baseURL, upstreamKeepAliveMs: 0 }, async (proxy) => {
      const ports: number[] = [];
      upstream.handle((_q, res, req) => {
        ports.push(req.socket.remotePort!);
        json(res, 200, answer);
      });
      for (let i = 0; i < 3; i++) expect((await post(proxy)).status).toBe(200);
      expect(new Set(ports).size).toBe(3);
    });
  });
});
