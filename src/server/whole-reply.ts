import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { isFields, type Fields } from '../runtime/endpoints.js';
import { shownReply, type RecallDialect } from '../recall/dialect.js';
import type { FoldRoute } from './routes.js';
import { relayedHeaders, type UpstreamResponse } from './upstream.js';
import type { AnswerFacts } from './usage-watch.js';
import { withEarlierUsage } from '../recall/usage-sum.js';

/** A JSON answer larger than this is relayed as it came, never read for recall calls. */
const MAX_READ_BYTES = 16 * 1024 * 1024;

/** One upstream answer, read whole. Invariant: `json` is set exactly for a 2xx JSON object body of at most 16 MiB. */
export interface WholeReply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly bytes: Buffer;
  readonly json?: Fields;
}

/** True when an answer with this status and content type is read whole as JSON for recall calls (a 2xx JSON body). */
export function isJsonAnswer(status: number, contentType: string | undefined): boolean {
  return status >= 200 && status < 300 && (contentType ?? '').toLowerCase().includes('json');
}

/** Reads an upstream answer to its end (its bytes kept as they came) and parses it when `isJsonAnswer` and at most 16 MiB. */
export async function readWhole(upstream: UpstreamResponse): Promise<WholeReply> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of upstream.chunks()) chunks.push(chunk);
  const bytes = Buffer.concat(chunks);
  const { status, headers } = upstream;
  let json: Fields | undefined;
  if (isJsonAnswer(status, headers['content-type']) && bytes.length <= MAX_READ_BYTES) {
    try {
      const parsed: unknown = JSON.parse(bytes.toString('utf8'));
      json = isFields(parsed) ? parsed : undefined;
    } catch {
      json = undefined;
    }
  }
  return { status, headers, bytes, json };
}

/** What a whole answer says of the model (billed input, failure), when it was read as JSON. */
export function wholeFacts(route: FoldRoute, reply: WholeReply): AnswerFacts | undefined {
  return reply.json ? { billedInputTokens: route.endpoint.billed(reply.json), failed: route.endpoint.failed(reply.json) } : undefined;
}

/**
 * Sends a whole answer to the client: the upstream's bytes, or, when the application must not see
 * ctxfold's part of its JSON, a copy without it: the recall tool its echo of the request holds
 * (always) and its recall calls (`pending`), and with `earlierUsage` (the exchange's earlier
 * answers' usage, added up) added to its `usage`. Resolves true once it was all sent.
 */
export function sendWhole(res: ServerResponse, reply: WholeReply, dialect: RecallDialect, pending: boolean, extraHeaders: Record<string, string> = {}, earlierUsage?: Fields): Promise<boolean> {
  const headers: Record<string, string | string[]> = { ...relayedHeaders(reply.headers), ...extraHeaders };
  let bytes: Buffer = reply.bytes;
  const stripped = reply.json ? withEarlierUsage(shownReply(dialect, reply.json, pending), earlierUsage) : undefined;
  if (stripped !== undefined && stripped !== reply.json) {
    bytes = Buffer.from(JSON.stringify(stripped), 'utf8');
    delete headers['content-encoding'];
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(bytes.length);
  }
  return new Promise((resolve) => {
    res.once('finish', () => resolve(true));
    res.once('close', () => resolve(res.writableFinished));
    res.writeHead(reply.status, headers);
    res.end(bytes);
  });
}
