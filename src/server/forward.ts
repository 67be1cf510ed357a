import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { sendError, type ErrorShape } from './json-errors.js';
import { relay } from './relay.js';
import type { UpstreamAgent } from './upstream-agent.js';
import { callUpstream, forwardHeaders, upstreamUrl, UpstreamError, type UpstreamKey } from './upstream.js';

/** Status recorded for a request whose client left before it was answered (nginx's convention). */
export const CLIENT_CLOSED = 499;

/** A signal aborted when the client's connection closes before its response was finished. */
export function clientGoneSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

/** What forwarding one request to the upstream needs. */
export interface ForwardCall {
  readonly upstream: URL;
  /** The proxy's connection pool towards `upstream`. */
  readonly agent: UpstreamAgent;
  readonly path: string;
  readonly search: string;
  readonly method: string;
  readonly body?: Uint8Array;
  /** Set when the body is not the client's own bytes. */
  readonly contentType?: string;
  readonly key?: UpstreamKey;
  readonly timeoutMs: number;
  readonly errors: ErrorShape;
  /** Aborted when the client disconnects. */
  readonly clientGone: AbortSignal;
  /** Headers added to the client's response. */
  readonly extraHeaders?: Record<string, string>;
  /** Sees each body chunk of a response with status `status` before the client does (undefined: none watched). */
  readonly watch?: (status: number, contentType: string | null) => ((chunk: Uint8Array) => void) | undefined;
}

/** How one forwarded request ended. */
export interface ForwardResult {
  /** The status the client got (the upstream's, the proxy's own error, or 499 when it left first). */
  readonly status: number;
  /** True when the upstream's whole response reached the client. */
  readonly complete: boolean;
  /** Seconds until the upstream's headers, when it answered. */
  readonly upstreamSeconds?: number;
  /** Why it did not complete, in one line (never a header or body). */
  readonly problem?: string;
}

/**
 * Sends the request upstream and relays the answer as it comes: status, headers and body bytes
 * untouched (errors included). If the upstream cannot be reached the client gets 502, if it stays
 * silent past the limit 504, both in its error shape and naming the upstream's origin (never its
 * path, query or a key); if the client leaves, the upstream call is aborted.
 */
export async function forward(req: IncomingMessage, res: ServerResponse, call: ForwardCall): Promise<ForwardResult> {
  const started = performance.now();
  let upstream;
  try {
    upstream = await callUpstream({
      url: upstreamUrl(call.upstream, call.path, call.search),
      method: call.method,
      headers: forwardHeaders(req.headers, call.key, call.contentType),
      body: call.body,
      agent: call.agent,
      clientGone: call.clientGone,
      timeoutMs: call.timeoutMs,
    });
  } catch (error) {
    // Whatever failed, the message names the upstream's origin (never its path, query or a key).
    const named = error instanceof UpstreamError ? error : new UpstreamError(call.upstream, 'unreachable', `could not be called (${error instanceof Error ? error.message : String(error)})`, { cause: error });
    const { failure, message } = named;
    if (failure === 'client-gone') {
      res.destroy();
      return { status: CLIENT_CLOSED, complete: false, problem: message };
    }
    const status = failure === 'timeout' ? 504 : 502;
    sendError(res, call.errors, { status, message, code: failure === 'timeout' ? 'ctxfold_upstream_timeout' : 'ctxfold_upstream_unreachable' });
    return { status, complete: false, problem: message };
  }
  const upstreamSeconds = (performance.now() - started) / 1000;
  const { status } = upstream;
  const contentType = upstream.headers['content-type'];
  const seen = call.watch?.(status, contentType ?? null);
  const end = await relay(upstream, res, seen ?? (() => undefined), call.extraHeaders);
  if (end.complete) return { status, complete: true, upstreamSeconds };
  const problem = end.error instanceof Error ? end.error.message : String(end.error);
  return { status: call.clientGone.aborted ? CLIENT_CLOSED : status, complete: false, upstreamSeconds, problem };
}
