import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { listenOnLoopback } from './loopback.js';

/**
 * A real HTTP server on 127.0.0.1 (port 0) that speaks the two OpenAI endpoints the `openai`
 * adapter wraps, as the API does, and records every request so a test can check what the model saw:
 *
 * - `POST /v1/chat/completions`: a `chat.completion` JSON body with `usage`, or with
 *   `"stream": true` server-sent `chat.completion.chunk`s (role, content pieces, finish) and, when
 *   `stream_options.include_usage` is set, a last chunk with `choices: []` and `usage` (every
 *   earlier chunk then has `usage: null`), then `data: [DONE]`.
 * - `POST /v1/responses`: a `response` JSON body with `usage`, or with `"stream": true` the events
 *   `response.created`, `response.in_progress`, `response.output_item.added`,
 *   `response.content_part.added`, `response.output_text.delta` (several),
 *   `response.output_text.done`, `response.content_part.done`, `response.output_item.done`,
 *   `response.completed` (whose `response.usage` carries the counts), each as `event:` + `data:`.
 *
 * The input tokens reported are `promptTokens(request)` (default: a quarter of the body's length).
 * Replies can be scripted per request: an HTTP error with the API's error body, a model that
 * fails (half way through a stream, or a Responses `status: 'failed'`), or a delay.
 */

/** How the server answers one request (to either endpoint). */
export type ApiReply =
  /** A normal answer whose text is `text` (default: `reply <n>`). */
  | { readonly text?: string; readonly delayMs?: number }
  /** An HTTP error with the API's error body (`invalid_request_error` for 4xx). */
  | { readonly status: number; readonly message?: string; readonly delayMs?: number }
  /**
   * The model fails with this message: a stream starts, then fails (Chat sends an `error` payload,
   * Responses a `response.failed` event); not streamed, Responses answers a response with
   * `status: 'failed'` and Chat an HTTP 500.
   */
  | { readonly fail: string };

/** One request as the server received it. */
export interface ApiRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly rawBody: string;
  /** The parsed JSON body (undefined when it was not JSON). */
  readonly body: Record<string, unknown> | undefined;
  /** The input tokens this request was billed in its response's usage. */
  readonly billedInputTokens: number;
}

/** Options of `startOpenAIApiServer`. */
export interface ApiServerOptions {
  /** Input tokens reported for a request. Default: `ceil(rawBody.length / 4)`. */
  readonly promptTokens?: (request: { readonly rawBody: string; readonly body: Record<string, unknown> | undefined }) => number;
  /**
   * Streams: every event but the last is written at once, and the last only once this resolves
   * (a test releases it after its client has seen the first bytes, proving the stream is relayed
   * as it arrives). Default: the whole stream is written at once.
   */
  readonly holdLastEvent?: (request: ApiRequest) => Promise<void>;
}

/** A running server. */
export interface OpenAIApiServer {
  /** `http://127.0.0.1:<port>/v1`: the client's `baseURL`. */
  readonly baseURL: string;
  /** Every request received, in arrival order (any path). */
  readonly requests: ApiRequest[];
  /** Queues `reply` for the next `times` requests to either endpoint. */
  enqueue(reply: ApiReply, times?: number): void;
  /** Stops listening and ends every open connection and pending delay. */
  close(): Promise<void>;
}

const CREATED = 1_700_000_000;

function chatCompletion(id: string, model: string, text: string, inputTokens: number) {
  const completion_tokens = Math.ceil(text.length / 4);
  return {
    id,
    object: 'chat.completion',
    created: CREATED,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: inputTokens, completion_tokens, total_tokens: inputTokens + completion_tokens },
  };
}

/** Splits a text in three pieces (fewer when short), as a stream delivers it. */
function pieces(text: string): string[] {
  const third = Math.max(1, Math.ceil(text.length / 3));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += third) out.push(text.slice(i, i + third));
  return out;
}

function chatChunks(id: string, model: string, text: string, inputTokens: number, includeUsage: boolean, failWith?: string): string {
  const base = { id, object: 'chat.completion.chunk', created: CREATED, model, ...(includeUsage ? { usage: null } : {}) };
  const chunk = (delta: Record<string, unknown>, finish: string | null) => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  const events: unknown[] = [chunk({ role: 'assistant', content: '' }, null), ...pieces(text).map((p) => chunk({ content: p }, null))];
  if (failWith !== undefined) {
    events.push({ error: { message: failWith, type: 'server_error', param: null, code: null } });
  } else {
    events.push(chunk({}, 'stop'));
    if (includeUsage) {
      const completion_tokens = Math.ceil(text.length / 4);
      events.push({ ...base, choices: [], usage: { prompt_tokens: inputTokens, completion_tokens, total_tokens: inputTokens + completion_tokens } });
    }
  }
  return `${events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('')}${failWith === undefined ? 'data: [DONE]\n\n' : ''}`;
}

function responseObject(id: string, model: string, status: string, output: unknown[], usage: unknown) {
  return {
    id,
    object: 'response',
    created_at: CREATED,
    status,
    error: null,
    incomplete_details: null,
    instructions: null,
    model,
    output,
    parallel_tool_calls: true,
    temperature: 1,
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    usage,
  };
}

function responsesUsage(text: string, inputTokens: number) {
  const output_tokens = Math.ceil(text.length / 4);
  return { input_tokens: inputTokens, input_tokens_details: { cached_tokens: 0 }, output_tokens, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: inputTokens + output_tokens };
}

const outputMessage = (id: string, text: string, status: string) => ({
  type: 'message', id: `msg_${id}`, status, role: 'assistant', content: status === 'completed' ? [{ type: 'output_text', text, annotations: [] }] : [],
});

function responsesEvents(id: string, model: string, text: string, inputTokens: number, failWith?: string): string {
  let sequence = 0;
  const event = (type: string, fields: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`;
  const pending = responseObject(id, model, 'in_progress', [], null);
  const itemId = `msg_${id}`;
  const part = { type: 'output_text', text: '', annotations: [] };
  const out = [
    event('response.created', { response: pending }),
    event('response.in_progress', { response: pending }),
    event('response.output_item.added', { output_index: 0, item: outputMessage(id, '', 'in_progress') }),
    event('response.content_part.added', { item_id: itemId, output_index: 0, content_index: 0, part }),
    ...pieces(text).map((delta) => event('response.output_text.delta', { item_id: itemId, output_index: 0, content_index: 0, delta, logprobs: [] })),
  ];
  if (failWith !== undefined) {
    out.push(event('response.failed', { response: { ...responseObject(id, model, 'failed', [], null), error: { code: 'server_error', message: failWith } } }));
    return out.join('');
  }
  out.push(
    event('response.output_text.done', { item_id: itemId, output_index: 0, content_index: 0, text, logprobs: [] }),
    event('response.content_part.done', { item_id: itemId, output_index: 0, content_index: 0, part: { ...part, text } }),
    event('response.output_item.done', { output_index: 0, item: outputMessage(id, text, 'completed') }),
    event('response.completed', { response: responseObject(id, model, 'completed', [outputMessage(id, text, 'completed')], responsesUsage(text, inputTokens)) }),
  );
  return out.join('');
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_${status}_${Date.now()}` });
  res.end(JSON.stringify(value));
}

/** Starts the server on 127.0.0.1 with a free port. */
export async function startOpenAIApiServer(options: ApiServerOptions = {}): Promise<OpenAIApiServer> {
  const requests: ApiRequest[] = [];
  const queue: ApiReply[] = [];
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const promptTokens = options.promptTokens ?? ((r) => Math.ceil(r.rawBody.length / 4));
  let answered = 0;

  /** Writes a stream's events, holding the last one when `holdLastEvent` says so. */
  const stream = (res: ServerResponse, events: string, request: ApiRequest) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    if (!options.holdLastEvent) return void res.end(events);
    const parts = events.split(/(?<=\n\n)/);
    const last = parts.pop() ?? '';
    res.write(parts.join(''));
    void options.holdLastEvent(request).then(() => {
      if (!res.destroyed) res.end(last);
    });
  };

  const answer = (res: ServerResponse, path: string, reply: ApiReply, request: ApiRequest, index: number) => {
    if (res.destroyed || res.writableEnded) return;
    if ('status' in reply) {
      sendJson(res, reply.status, { error: { message: reply.message ?? `error ${reply.status}`, type: reply.status < 500 ? 'invalid_request_error' : 'server_error', param: null, code: null } });
      return;
    }
    const body = request.body ?? {};
    const model = typeof body.model === 'string' ? body.model : 'test-model';
    const failWith = 'fail' in reply ? reply.fail : undefined;
    const text = ('text' in reply ? reply.text : undefined) ?? `reply ${index + 1}`;
    const streamed = body.stream === true;
    const tokens = request.billedInputTokens;
    if (path === '/v1/chat/completions') {
      const id = `chatcmpl-${index + 1}`;
      if (!streamed && failWith !== undefined) return sendJson(res, 500, { error: { message: failWith, type: 'server_error', param: null, code: null } });
      if (!streamed) return sendJson(res, 200, chatCompletion(id, model, text, tokens));
      const includeUsage = (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
      stream(res, chatChunks(id, model, text, tokens, includeUsage, failWith), request);
      return;
    }
    const id = `resp_${index + 1}`;
    if (!streamed && failWith !== undefined) return sendJson(res, 200, { ...responseObject(id, model, 'failed', [], null), error: { code: 'server_error', message: failWith } });
    if (!streamed) return sendJson(res, 200, responseObject(id, model, 'completed', [outputMessage(id, text, 'completed')], responsesUsage(text, tokens)));
    stream(res, responsesEvents(id, model, text, tokens, failWith), request);
  };

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
      const path = (req.url ?? '/').split('?')[0];
      const request: ApiRequest = { method: req.method ?? 'GET', path, headers: req.headers, rawBody, body, billedInputTokens: promptTokens({ rawBody, body }) };
      requests.push(request);
      if (req.method !== 'POST' || (path !== '/v1/chat/completions' && path !== '/v1/responses')) {
        sendJson(res, 404, { error: { message: `no route ${req.method} ${path}`, type: 'invalid_request_error', param: null, code: null } });
        return;
      }
      const index = answered++;
      const reply = queue.shift() ?? {};
      const delay = 'delayMs' in reply ? reply.delayMs ?? 0 : 0;
      if (delay <= 0) return answer(res, path, reply, request, index);
      const timer = setTimeout(() => {
        timers.delete(timer);
        answer(res, path, reply, request, index);
      }, delay);
      timers.add(timer);
    });
  });
  const loopback = await listenOnLoopback(server);

  return {
    baseURL: loopback.baseURL,
    requests,
    enqueue(reply: ApiReply, times = 1) {
      for (let i = 0; i < times; i++) queue.push(reply);
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      await loopback.close();
    },
  };
}
