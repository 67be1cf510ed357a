import type { IncomingHttpHeaders } from 'node:http';

/**
 * Request headers that belong to one connection (RFC 9110 §7.6.1), or that the proxy sets itself:
 * never forwarded. `accept-encoding` is replaced by `identity`, so the bytes relayed back are the
 * upstream's own (fetch would otherwise decode a compressed body).
 */
const NOT_FORWARDED = new Set([
  'host', 'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade',
  'proxy-authorization', 'proxy-authenticate', 'content-length', 'accept-encoding', 'expect',
]);

/** Response headers not relayed: per connection, or no longer true once fetch has read the body. */
const NOT_RELAYED = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

/** The key the proxy adds itself, and in which header the upstream wants it. */
export interface UpstreamKey {
  readonly value: string;
  /** `bearer`: `Authorization: Bearer <key>` (OpenAI-compatible APIs); `x-api-key`: Anthropic's header. */
  readonly header: 'bearer' | 'x-api-key';
}

/**
 * `<upstream><rest>`: the proxy's `/v1/<rest>` lands on the upstream base URL (which already ends
 * in its API version, as an SDK's `baseURL` does: `https://api.openai.com/v1`), query kept.
 */
export function upstreamUrl(base: URL, proxyPath: string, search: string): string {
  const rest = proxyPath.startsWith('/v1/') ? proxyPath.slice(3) : proxyPath;
  const root = base.href.endsWith('/') ? base.href.slice(0, -1) : base.href;
  return `${root}${rest}${search}`;
}

/**
 * The headers sent upstream: the client's own, without hop-by-hop and proxy headers and without
 * `x-ctxfold-*` (the proxy's), with `accept-encoding: identity`; with `key`, the client's
 * `authorization` / `x-api-key` are replaced by the proxy's key. The caller's key, when it is the
 * one used, is forwarded as it came and kept nowhere else.
 */
export function forwardHeaders(incoming: IncomingHttpHeaders, key: UpstreamKey | undefined, contentType: string | undefined): Headers {
  const connectionTokens = new Set(String(incoming.connection ?? '').toLowerCase().split(',').map((t) => t.trim()).filter(Boolean));
  const out = new Headers();
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || NOT_FORWARDED.has(name) || connectionTokens.has(name) || name.startsWith('x-ctxfold-')) continue;
    if (key !== undefined && (name === 'authorization' || name === 'x-api-key')) continue;
    if (Array.isArray(value)) for (const v of value) out.append(name, v);
    else out.set(name, value);
  }
  out.set('accept-encoding', 'identity');
  if (contentType !== undefined) out.set('content-type', contentType);
  if (key !== undefined) {
    if (key.header === 'x-api-key') out.set('x-api-key', key.value);
    else out.set('authorization', `Bearer ${key.value}`);
  }
  return out;
}

/**
 * The upstream response's headers as the client gets them: hop-by-hop headers removed; when the
 * body was sent encoded anyway (fetch decodes it), `content-encoding` and `content-length` go too,
 * since they describe bytes the client will not receive.
 */
export function relayedHeaders(upstream: Headers): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  const encoded = upstream.has('content-encoding') && upstream.get('content-encoding') !== 'identity';
  upstream.forEach((value, name) => {
    if (NOT_RELAYED.has(name)) return;
    if (encoded && (name === 'content-encoding' || name === 'content-length')) return;
    if (name === 'set-cookie') return; // appended below, one header per cookie
    out[name] = value;
  });
  const cookies = upstream.getSetCookie();
  if (cookies.length > 0) out['set-cookie'] = cookies;
  return out;
}

/** Why a call to the upstream failed before it answered. */
export type UpstreamFailure = 'timeout' | 'client-gone' | 'unreachable';

/** The upstream did not answer: timed out, the client left, or the connection failed. */
export class UpstreamError extends Error {
  constructor(readonly failure: UpstreamFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UpstreamError';
  }
}

/** One call upstream. */
export interface UpstreamCall {
  readonly url: string;
  readonly method: string;
  readonly headers: Headers;
  readonly body?: Uint8Array;
  /** Aborted when the client disconnects: the fetch (and the body being read) is aborted with it. */
  readonly clientGone: AbortSignal;
  /** Limit, in ms, for the upstream to start answering, and then between two chunks of its body. */
  readonly timeoutMs: number;
}

/** A response being relayed; `chunks()` yields its body as it arrives and `cancel()` stops it. */
export interface UpstreamResponse {
  readonly response: Response;
  /** The body, chunk by chunk; throws `UpstreamError` when the upstream goes silent for `timeoutMs` or the client leaves. */
  chunks(): AsyncGenerator<Uint8Array>;
  /** Aborts the call (idempotent). */
  cancel(): void;
}

/**
 * Calls the upstream with the global `fetch`. The call is aborted when the client disconnects or
 * when the upstream is silent for `timeoutMs` (before its headers, or between two body chunks),
 * so a hung upstream never holds a request, and a client that left never keeps the upstream working.
 */
export async function callUpstream(call: UpstreamCall): Promise<UpstreamResponse> {
  const controller = new AbortController();
  let timedOut = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new UpstreamError('timeout', `the upstream did not answer within ${call.timeoutMs} ms`));
    }, call.timeoutMs);
  };
  const onClientGone = () => controller.abort(new UpstreamError('client-gone', 'the client disconnected'));
  if (call.clientGone.aborted) onClientGone();
  else call.clientGone.addEventListener('abort', onClientGone, { once: true });
  const done = () => {
    clearTimeout(timer);
    call.clientGone.removeEventListener('abort', onClientGone);
  };
  const failure = (error: unknown): UpstreamError => {
    if (timedOut) return new UpstreamError('timeout', `the upstream did not answer within ${call.timeoutMs} ms`);
    if (call.clientGone.aborted) return new UpstreamError('client-gone', 'the client disconnected');
    const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
    const detail = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : (error as Error).message;
    return new UpstreamError('unreachable', `the upstream could not be reached (${detail})`, { cause: error });
  };

  arm();
  let response: Response;
  try {
    response = await fetch(call.url, { method: call.method, headers: call.headers, body: call.body, signal: controller.signal, redirect: 'manual' });
  } catch (error) {
    done();
    throw failure(error);
  }
  clearTimeout(timer);
  return {
    response,
    cancel() {
      done();
      if (!controller.signal.aborted) controller.abort(new UpstreamError('client-gone', 'relay stopped'));
    },
    async *chunks() {
      const reader = response.body?.getReader();
      if (!reader) {
        done();
        return;
      }
      try {
        for (;;) {
          let step: Awaited<ReturnType<typeof reader.read>>;
          // The limit runs while the upstream is awaited, not while a slow client is.
          arm();
          try {
            step = await reader.read();
          } catch (error) {
            throw failure(error);
          } finally {
            clearTimeout(timer);
          }
          if (step.done) return;
          yield step.value;
        }
      } finally {
        done();
        reader.releaseLock();
        if (!controller.signal.aborted) await response.body?.cancel().catch(() => undefined);
      }
    },
  };
}
