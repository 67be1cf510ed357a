import { request as httpRequest, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { UpstreamError } from '../errors.js';
import type { UpstreamAgent } from './upstream-agent.js';

/**
 * Request headers that belong to one connection (RFC 9110 §7.6.1), or that the proxy sets itself:
 * never forwarded. `accept-encoding` is replaced by `identity`, so the bytes relayed back are the
 * upstream's own and the proxy can read the usage in them.
 */
const NOT_FORWARDED = new Set([
  'host', 'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade',
  'proxy-authorization', 'proxy-authenticate', 'content-length', 'accept-encoding', 'expect',
]);

/** Response headers not relayed: they belong to one connection. */
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
 * one used, is forwarded as it came and kept nowhere else. Names are lower case, as Node gives them.
 */
export function forwardHeaders(incoming: IncomingHttpHeaders, key: UpstreamKey | undefined, contentType: string | undefined): OutgoingHttpHeaders {
  const connection = incoming.connection;
  const connectionTokens = connection === undefined || connection === 'keep-alive' || connection === 'close'
    ? undefined
    : new Set(String(connection).toLowerCase().split(',').map((t) => t.trim()).filter(Boolean));
  const out: OutgoingHttpHeaders = {};
  for (const name in incoming) {
    const value = incoming[name];
    if (value === undefined || NOT_FORWARDED.has(name) || connectionTokens?.has(name) || name.startsWith('x-ctxfold-')) continue;
    if (key !== undefined && (name === 'authorization' || name === 'x-api-key')) continue;
    out[name] = value;
  }
  out['accept-encoding'] = 'identity';
  if (contentType !== undefined) out['content-type'] = contentType;
  if (key !== undefined) {
    if (key.header === 'x-api-key') out['x-api-key'] = key.value;
    else out.authorization = `Bearer ${key.value}`;
  }
  return out;
}

/**
 * The upstream response's headers as the client gets them: hop-by-hop headers removed, every
 * other one as it came (the body is relayed byte for byte, so `content-length` and
 * `content-encoding` stay true).
 */
export function relayedHeaders(upstream: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in upstream) {
    const value = upstream[name];
    if (value === undefined || NOT_RELAYED.has(name)) continue;
    out[name] = value;
  }
  return out;
}

/** The upstream's failures are `UpstreamError`s, of the `CtxfoldError` hierarchy. */
export { UpstreamError, type UpstreamFailure } from '../errors.js';

/** One call upstream. */
export interface UpstreamCall {
  readonly url: string;
  readonly method: string;
  readonly headers: OutgoingHttpHeaders;
  readonly body?: Uint8Array;
  /** The pool the call's connection comes from (`createUpstreamAgent`, for the URL's scheme). */
  readonly agent: UpstreamAgent;
  /** Aborted when the client disconnects: the call (and the body being read) is aborted with it. */
  readonly clientGone: AbortSignal;
  /** Limit, in ms, for the upstream to start answering, and then between two chunks of its body. */
  readonly timeoutMs: number;
}

/** A response being relayed; `chunks()` yields its body as it arrives and `cancel()` stops it. */
export interface UpstreamResponse {
  readonly status: number;
  /** As Node reads them: lower-case names, `set-cookie` an array. */
  readonly headers: IncomingHttpHeaders;
  /** The body, chunk by chunk; throws `UpstreamError` when the upstream goes silent for `timeoutMs` or the client leaves. */
  chunks(): AsyncGenerator<Uint8Array>;
  /** Aborts the call (idempotent). */
  cancel(): void;
}

/** Errors of a connection the upstream closed or reset (`socket hang up` is an ECONNRESET too). */
const CLOSED = new Set(['ECONNRESET', 'EPIPE']);

/** An attempt whose connection was closed before any byte of the answer came back: it may be sent again. */
interface Closed {
  readonly closed: UpstreamError;
}

/**
 * Calls the upstream with Node's own `http`/`https` client on a keep-alive pool. The call is
 * aborted when the client disconnects or when the upstream is silent for `timeoutMs` (before its
 * headers, or between two body chunks), so a hung upstream never holds a request, and a client
 * that left never keeps the upstream working. The body's bytes are relayed as they came.
 * A connection closed or reset before any byte of the answer came back (an upstream closing an
 * idle keep-alive connection just as the request went out on it) is sent again once, on a new
 * connection of its own; once a byte came back the request is never sent again.
 */
export async function callUpstream(call: UpstreamCall): Promise<UpstreamResponse> {
  const first = await attempt(call, call.agent);
  if (!('closed' in first)) return first;
  const second = await attempt(call, false);
  if ('closed' in second) throw second.closed;
  return second;
}

/** One request on `agent` (`false`: a connection of its own, closed after it). */
function attempt(call: UpstreamCall, agent: UpstreamAgent | false): Promise<UpstreamResponse | Closed> {
  const url = new URL(call.url);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  let failure: UpstreamError | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const headers: OutgoingHttpHeaders = call.body === undefined ? call.headers : { ...call.headers, 'content-length': call.body.byteLength };
  let req: ClientRequest;
  try {
    req = send(url, { method: call.method, headers, agent });
  } catch (error) {
    // A request Node refuses to make (a header it cannot send): still named by the upstream's origin.
    const code = (error as { code?: unknown }).code;
    return Promise.reject(new UpstreamError(url, 'unreachable', `could not be called (${typeof code === 'string' ? code : (error as Error).message})`, { cause: error }));
  }
  // What the connection had read before this request: more by the time it fails means the answer began.
  let readBefore: number | undefined;
  req.once('socket', (socket) => { readBefore = socket.bytesRead; });
  const abort = (error: UpstreamError) => {
    failure ??= error;
    req.destroy(error);
  };
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => abort(new UpstreamError(url, 'timeout', `did not answer within ${call.timeoutMs} ms`)), call.timeoutMs);
  };
  const onClientGone = () => abort(new UpstreamError(url, 'client-gone', 'the client disconnected'));
  const done = () => {
    clearTimeout(timer);
    call.clientGone.removeEventListener('abort', onClientGone);
  };
  /** `what` went wrong, with the error's code (or message) after it. */
  const failed = (error: unknown, what = 'could not be reached'): UpstreamError => {
    if (failure !== undefined) return failure;
    const code = (error as { code?: unknown }).code;
    const detail = typeof code === 'string' ? code : (error as Error).message;
    return new UpstreamError(url, 'unreachable', `${what} (${detail})`, { cause: error });
  };
  return new Promise<UpstreamResponse | Closed>((resolve, reject) => {
    const onEarlyError = (error: unknown) => {
      done();
      const code = (error as { code?: unknown }).code;
      const unanswered = readBefore !== undefined && req.socket !== null && req.socket.bytesRead === readBefore;
      if (failure === undefined && typeof code === 'string' && CLOSED.has(code) && unanswered) resolve({ closed: failed(error) });
      else reject(failed(error));
    };
    req.on('error', onEarlyError);
    req.once('response', (response: IncomingMessage) => {
      clearTimeout(timer);
      req.off('error', onEarlyError);
      // Errors from here on surface through the body's iterator.
      req.on('error', () => undefined);
      resolve({
        status: response.statusCode ?? 502,
        headers: response.headers,
        cancel() {
          done();
          if (!req.destroyed) abort(new UpstreamError(url, 'client-gone', 'relay stopped'));
          response.destroy();
        },
        async *chunks() {
          const it = response[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
          try {
            for (;;) {
              let step: IteratorResult<Buffer>;
              // The limit runs while the upstream is awaited, not while a slow client is.
              arm();
              try {
                step = await it.next();
              } catch (error) {
                throw failed(error, 'broke off its answer');
              } finally {
                clearTimeout(timer);
              }
              if (step.done) {
                if (failure !== undefined) throw failure;
                if (!response.complete) throw new UpstreamError(url, 'unreachable', 'broke off its answer (the connection closed before it was complete)');
                return;
              }
              yield step.value;
            }
          } finally {
            done();
            if (!response.complete) response.destroy();
            await it.return?.();
          }
        },
      });
    });
    if (call.clientGone.aborted) return onClientGone();
    call.clientGone.addEventListener('abort', onClientGone, { once: true });
    arm();
    req.end(call.body);
  });
}
