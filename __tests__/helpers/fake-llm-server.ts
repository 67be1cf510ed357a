import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { listenOnLoopback } from './loopback.js';

/**
 * A real HTTP server on 127.0.0.1 (port 0) that answers `POST /v1/chat/completions` like the
 * OpenAI API, records every request, and can be scripted per request.
 *
 *   const server = await startFakeLlmServer();
 *   server.enqueue({ status: 500 }, 2);          // the next two requests get 500
 *   server.enqueue({ content: 'the summary' });  // then this one; later ones get the default reply
 *   ... createLlmSummarizer({ baseURL: server.baseURL, model: 'm' }) ...
 *   server.requests[0].body                      // the parsed JSON of the first request
 *   await server.close();                        // also ends hanging requests
 *
 * A request with `"stream": true` that gets a `content` reply is answered as server-sent events
 * (`chat.completion.chunk` deltas, then `data: [DONE]`), as the API streams.
 */

/** How the server answers one request. Every reply may wait `delayMs` before answering. */
export type FakeReply =
  /** A normal completion whose `choices[0].message.content` is `content`. */
  | { readonly content: string; readonly delayMs?: number }
  /** An error status with an OpenAI-style error body (or `body`), and `retry-after` when given. */
  | { readonly status: number; readonly body?: unknown; readonly retryAfter?: number | string; readonly delayMs?: number }
  /** `body` sent as is with status 200 (or `status`): not JSON, JSON without choices... */
  | { readonly garbage: string; readonly status?: number; readonly delayMs?: number }
  /** Never answers; the socket stays open until the client gives up or the server closes. */
  | { readonly hang: true };

/** One request as the server received it. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawBody: string;
  /** The parsed JSON body; undefined when it was not JSON. */
  readonly body: unknown;
  /** `Date.now()` when the body was complete. */
  readonly receivedAt: number;
}

/** Options of `startFakeLlmServer`. */
export interface FakeLlmServerOptions {
  /** Content of unscripted replies. Default: `fake reply <n>` (n = 1-based request number). */
  readonly reply?: (request: RecordedRequest, index: number) => string;
}

/** A running fake server. */
export interface FakeLlmServer {
  /** `http://127.0.0.1:<port>/v1`, the value for an OpenAI client's `baseURL`. */
  readonly baseURL: string;
  /** Every request received, in arrival order (any path). */
  readonly requests: RecordedRequest[];
  /** Queues `reply` for the next `times` requests to /v1/chat/completions (after those already queued). */
  enqueue(reply: FakeReply, times?: number): void;
  /** Stops listening, ends every open or hanging connection and pending delay. */
  close(): Promise<void>;
}

function completion(content: string, index: number, model: unknown, promptChars: number) {
  const prompt_tokens = Math.ceil(promptChars / 4);
  const completion_tokens = Math.ceil(content.length / 4);
  return {
    id: `chatcmpl-fake-${index + 1}`,
    object: 'chat.completion',
    created: 1_700_000_000 + index,
    model: typeof model === 'string' ? model : 'fake-model',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens },
  };
}

function streamChunks(content: string, index: number, model: unknown): string {
  const base = { id: `chatcmpl-fake-${index + 1}`, object: 'chat.completion.chunk', created: 1_700_000_000 + index, model: typeof model === 'string' ? model : 'fake-model' };
  const third = Math.ceil(content.length / 3);
  const pieces = [content.slice(0, third), content.slice(third, 2 * third), content.slice(2 * third)].filter((p) => p !== '');
  const events = [
    { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
    ...pieces.map((p) => ({ ...base, choices: [{ index: 0, delta: { content: p }, finish_reason: null }] })),
    { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
  ];
  return `${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('')}data: [DONE]\n\n`;
}

function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(value));
}

/** Starts a fake OpenAI-compatible server on 127.0.0.1 with a free port. */
export async function startFakeLlmServer(options: FakeLlmServerOptions = {}): Promise<FakeLlmServer> {
  const requests: RecordedRequest[] = [];
  const queue: FakeReply[] = [];
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let completions = 0;
  const defaultReply = options.reply ?? ((_request: RecordedRequest, index: number) => `fake reply ${index + 1}`);

  const answer = (res: ServerResponse, reply: FakeReply, request: RecordedRequest, index: number) => {
    if (res.destroyed || res.writableEnded) return;
    const body = request.body as { model?: unknown; stream?: unknown } | undefined;
    if ('content' in reply) {
      if (body?.stream === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.end(streamChunks(reply.content, index, body.model));
      } else sendJson(res, 200, completion(reply.content, index, body?.model, request.rawBody.length));
    } else if ('garbage' in reply) {
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' });
      res.end(reply.garbage);
    } else if ('status' in reply) {
      const headers: Record<string, string> = reply.retryAfter === undefined ? {} : { 'retry-after': String(reply.retryAfter) };
      const errorBody = reply.body ?? { error: { message: `fake error ${reply.status}`, type: reply.status >= 500 ? 'server_error' : 'invalid_request_error', code: null } };
      sendJson(res, reply.status, errorBody, headers);
    }
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = rawBody ? JSON.parse(rawBody) : undefined;
      } catch {
        body = undefined;
      }
      const path = (req.url ?? '/').split('?')[0];
      const request: RecordedRequest = { method: req.method ?? 'GET', path, headers: req.headers, rawBody, body, receivedAt: Date.now() };
      requests.push(request);
      if (req.method !== 'POST' || path !== '/v1/chat/completions') {
        sendJson(res, 404, { error: { message: `no route ${req.method} ${path}`, type: 'invalid_request_error' } });
        return;
      }
      const index = completions++;
      const reply = queue.shift() ?? { content: defaultReply(request, index) };
      if ('hang' in reply) return;
      const delay = reply.delayMs ?? 0;
      if (delay <= 0) return answer(res, reply, request, index);
      const timer = setTimeout(() => {
        timers.delete(timer);
        answer(res, reply, request, index);
      }, delay);
      timers.add(timer);
    });
  });
  const loopback = await listenOnLoopback(server);

  return {
    baseURL: loopback.baseURL,
    requests,
    enqueue(reply: FakeReply, times = 1) {
      for (let i = 0; i < times; i++) queue.push(reply);
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await loopback.close();
    },
  };
}
