import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';

/** The connection pool of one proxy towards its upstream; `destroy()` it on shutdown. */
export type UpstreamAgent = HttpAgent;

/**
 * A connection pool for `upstream` (HTTP or HTTPS, by its scheme), with no limit on sockets. A
 * connection idle for `keepAliveMs` is closed by the proxy (sooner when the upstream's
 * `Keep-Alive: timeout=N` asks for it: a second under N), so it is gone before an upstream that
 * closes idle connections after a little longer (Node's http server: 5 s) races a request sent
 * on it. A connection in use is never closed for being idle: Node's pool closes only free ones on
 * that timeout, and the call's own limit (`timeoutMs`) governs a slow answer. 0: no reuse, a new
 * connection per request.
 */
export function createUpstreamAgent(upstream: URL, keepAliveMs: number): UpstreamAgent {
  // Without `timeout`, Node's pool ignores the upstream's Keep-Alive hint and keeps idle sockets for ever.
  const options = keepAliveMs > 0 ? { keepAlive: true, timeout: keepAliveMs } : { keepAlive: false };
  return upstream.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
}
