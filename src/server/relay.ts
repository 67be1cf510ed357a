import type { ServerResponse } from 'node:http';
import { CtxfoldError } from '../errors.js';
import { relayedHeaders, type UpstreamResponse } from './upstream.js';

/** Why a relay stopped when the client left first. */
const clientGone = () => new CtxfoldError('the client disconnected', { code: 'CTXFOLD_ABORTED' });

/** How a relay ended: the whole body reached the client, or it was cut (client gone, upstream silent or broken). */
export type RelayEnd = { readonly complete: true } | { readonly complete: false; readonly error: unknown };

/** Resolves when the client's buffer drained, or when its connection closed (false then). */
export function drained(res: ServerResponse): Promise<boolean> {
  return new Promise((resolve) => {
    const onDrain = () => { cleanup(); resolve(true); };
    const onClose = () => { cleanup(); resolve(false); };
    const cleanup = () => { res.off('drain', onDrain); res.off('close', onClose); };
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

/**
 * Sends the upstream's status, headers and body to the client as they arrive: each chunk is
 * written as soon as it is read (an event stream reaches the client event by event, never
 * buffered whole), waiting for the client only when its buffer is full. `seen` gets every chunk
 * first. Bytes are never changed. If the body breaks off, the client's connection is ended
 * abruptly (a truncated response must not look complete).
 */
export async function relay(upstream: UpstreamResponse, res: ServerResponse, seen: (chunk: Uint8Array) => void, extraHeaders: Record<string, string> = {}): Promise<RelayEnd> {
  res.writeHead(upstream.status, { ...relayedHeaders(upstream.headers), ...extraHeaders });
  // A body of unknown length (an event stream): headers go out now, so a client waiting on a slow
  // first token already knows the status. A body of known length follows at once: its headers
  // go out with its first bytes, one write instead of two.
  if (upstream.headers['content-length'] === undefined) res.flushHeaders();
  try {
    for await (const chunk of upstream.chunks()) {
      seen(chunk);
      if (!res.write(chunk) && !(await drained(res))) {
        upstream.cancel();
        return { complete: false, error: clientGone() };
      }
    }
  } catch (error) {
    res.destroy();
    return { complete: false, error };
  }
  if (res.destroyed) return { complete: false, error: clientGone() };
  const finished = await new Promise<boolean>((resolve) => {
    res.once('finish', () => resolve(true));
    res.once('close', () => resolve(res.writableFinished));
    res.end();
  });
  return finished ? { complete: true } : { complete: false, error: clientGone() };
}
