import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback } from './loopback.js';

/**
 * A scriptable stand-in upstream on 127.0.0.1 (port 0) for the proxy's tests: every request is
 * recorded (headers, raw body, parsed JSON), then answered by the current handler, which gets
 * Node's own response object and may answer anything: exact error bytes, a stream written piece
 * by piece, or nothing at all (a hung upstream). It also records which requests were cut off by
 * their client (the proxy) before an answer was finished.
 */

/** One request as the stand-in received it. */
export interface UpstreamRequest {
  readonly method: string;
  /** Path without the query string. */
  readonly path: string;
  readonly search: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawBody: string;
  readonly body: Record<string, unknown> | undefined;
}

/** Answers one request; `res` is Node's response (write, end, or never answer). */
export type UpstreamHandler = (request: UpstreamRequest, res: ServerResponse, req: IncomingMessage) => void | Promise<void>;

/** A running stand-in. */
export interface StandInUpstream {
  /** `http://127.0.0.1:<port>/v1`: the proxy's `--upstream`. */
  readonly baseURL: string;
  readonly requests: UpstreamRequest[];
  /** Requests whose connection closed before their response was finished (the proxy gave up on them). */
  readonly cutOff: UpstreamRequest[];
  /** Replaces the handler for the requests that follow. */
  handle(handler: UpstreamHandler): void;
  /** Resolves at the next request cut off by its client. */
  nextCutOff(): Promise<UpstreamRequest>;
  /** Stops listening and ends every open connection. */
  close(): Promise<void>;
}

/** Writes a JSON answer. */
export function json(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** An Anthropic Messages response with `text`, reporting `inputTokens` of uncached input and `cacheRead` of cached. */
export function anthropicMessage(text: string, inputTokens: number, cacheRead = 0): Record<string, unknown> {
  return {
    id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5',
    content: [{ type: 'text', text }], stop_reason: 'end_turn', stop_sequence: null,
    usage: { input_tokens: inputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: cacheRead, output_tokens: 5 },
  };
}

/** An Anthropic Messages event stream: message_start (with usage), a text block in pieces, message_delta, message_stop. */
export function anthropicStream(text: string, inputTokens: number): string[] {
  const event = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  return [
    event('message_start', { message: { ...anthropicMessage('', inputTokens), content: [], stop_reason: null, usage: { input_tokens: inputTokens, output_tokens: 1 } } }),
    event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    ...[text.slice(0, Math.ceil(text.length / 2)), text.slice(Math.ceil(text.length / 2))].map((piece) => event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } })),
    event('content_block_stop', { index: 0 }),
    event('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } }),
    event('message_stop', {}),
  ];
}

/** Starts the stand-in with `handler` (default: 200 `{"ok":true}`). */
export async function startUpstream(handler: UpstreamHandler = (_r, res) => json(res, 200, { ok: true })): Promise<StandInUpstream> {
  const requests: UpstreamRequest[] = [];
  const cutOff: UpstreamRequest[] = [];
  const waiters: ((r: UpstreamRequest) => void)[] = [];
  let current = handler;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: Record<string, unknown> | undefined;
      try {
        const parsed: unknown = rawBody ? JSON.parse(rawBody) : undefined;
        body = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
      } catch {
        body = undefined;
      }
      const url = new URL(req.url ?? '/', 'http://upstream.invalid');
      const request: UpstreamRequest = { method: req.method ?? 'GET', path: url.pathname, search: url.search, headers: req.headers, rawBody, body };
      requests.push(request);
      res.on('close', () => {
        if (res.writableFinished) return;
        cutOff.push(request);
        for (const wake of waiters.splice(0)) wake(request);
      });
      void Promise.resolve(current(request, res, req)).catch((error: unknown) => {
        if (!res.headersSent) json(res, 500, { error: { message: String(error) } });
      });
    });
  });
  const loopback = await listenOnLoopback(server);
  return {
    baseURL: loopback.baseURL,
    requests,
    cutOff,
    handle(next) {
      current = next;
    },
    nextCutOff: () => new Promise((resolve) => waiters.push(resolve)),
    async close() {
      await loopback.close();
    },
  };
}
