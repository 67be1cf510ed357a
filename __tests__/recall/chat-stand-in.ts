import { afterAll, afterEach, beforeAll } from '@jest/globals';
import type { Compressor } from '../../src/runtime/compressor.js';
import { createServer, type ServerResponse } from 'node:http';
import { responsesResponse, responsesStream } from './responses-reply.js';
import { messagesResponse, messagesStream } from './messages-reply.js';
import { listenOnLoopback } from '../helpers/loopback.js';

/**
 * A loopback stand-in for `POST /v1/chat/completions`, `POST /v1/responses` and `POST /v1/messages` (127.0.0.1, port 0)
 * that answers each request with the next scripted reply: a text, or tool calls
 * (`finish_reason: 'tool_calls'`; on Responses, `function_call` items, see responses-reply.ts).
 * A streamed request gets the same reply as SSE events (see `streamChat`, `responsesStream`). Every
 * request body and path is kept.
 */

/**
 * One scripted reply. With calls, `reasoning` adds a reasoning item before them and `say` a text
 * message (both Responses only; Chat Completions puts `say` in the message's content).
 */
export type StandInReply =
  | { readonly text: string; readonly pause?: Promise<unknown> }
  | { readonly calls: readonly { readonly name: string; readonly arguments: unknown }[]; readonly reasoning?: string; readonly say?: string };

/**
 * A streamed Chat Completions reply, as OpenAI streams one: a role chunk, the text in two content
 * deltas, each call's first delta (index, id, name) and its arguments in two pieces, the finish
 * chunk, a usage chunk when `stream_options.include_usage` asks, and `[DONE]`. A text reply with
 * `pause` stops after its first delta until the promise settles (the stream stays open).
 */
async function streamChat(res: ServerResponse, body: Record<string, unknown>, reply: StandInReply, index: number, usage: Record<string, number>): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (fields: Record<string, unknown>) => res.write(`data: ${JSON.stringify({ id: `c${index}`, object: 'chat.completion.chunk', created: 1, model: 'm', ...fields })}\n\n`);
  const delta = (d: unknown, finish: string | null = null) => chunk({ choices: [{ index: 0, delta: d, logprobs: null, finish_reason: finish }] });
  const halves = (t: string) => [t.slice(0, Math.ceil(t.length / 2)), t.slice(Math.ceil(t.length / 2))];
  delta({ role: 'assistant', content: '', refusal: null });
  const text = 'text' in reply ? reply.text : reply.say;
  if (text !== undefined) {
    const [first, second] = halves(text);
    delta({ content: first });
    if ('pause' in reply && reply.pause) await reply.pause;
    delta({ content: second });
  }
  if ('calls' in reply) {
    reply.calls.forEach((c, k) => {
      const args = typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments);
      delta({ tool_calls: [{ index: k, id: `call_${index}_${k}`, type: 'function', function: { name: c.name, arguments: '' } }] });
      for (const piece of halves(args)) delta({ tool_calls: [{ index: k, function: { arguments: piece } }] });
    });
  }
  delta({}, 'text' in reply ? 'stop' : 'tool_calls');
  const options = body.stream_options as { include_usage?: boolean } | undefined;
  if (options?.include_usage) chunk({ choices: [], usage });
  res.end('data: [DONE]\n\n');
}

export interface ChatStandIn {
  readonly baseURL: string;
  /** Parsed JSON bodies, in arrival order. */
  readonly bodies: Record<string, unknown>[];
  /** The request paths, in the same order. */
  readonly paths: string[];
  /** Queues replies (`{ fail: status }`: that status with an error body; `{ fail: 'cut' }`: a stream cut off after a recall call's first delta); with the queue empty the answer is the text `ok <n>`. */
  enqueue(...replies: (StandInReply | { readonly fail: number | 'cut' })[]): void;
  close(): Promise<void>;
}

export async function startChatStandIn(): Promise<ChatStandIn> {
  const bodies: Record<string, unknown>[] = [];
  const paths: string[] = [];
  const queue: (StandInReply | { readonly fail: number | 'cut' })[] = [];
  let n = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      bodies.push(body);
      paths.push(req.url ?? '');
      const index = ++n;
      const next = queue.shift() ?? { text: `ok ${index}` };
      if ('fail' in next && next.fail === 'cut') {
        // A stream that starts with a recall call and breaks off.
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ id: 'cut', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_cut', type: 'function', function: { name: 'ctxfold_recall', arguments: '{"ids"' } }] }, finish_reason: null }] })}\n\n`);
        setTimeout(() => res.destroy(), 20);
        return;
      }
      if ('fail' in next) {
        res.writeHead(Number(next.fail), { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `scripted failure ${next.fail}`, type: 'server_error', code: null } }));
        return;
      }
      const reply: StandInReply = next;
      if (req.url?.endsWith('/messages')) {
        res.writeHead(200, { 'content-type': body.stream === true ? 'text/event-stream' : 'application/json' });
        res.end(body.stream === true ? messagesStream(body, reply, index) : JSON.stringify(messagesResponse(body, reply, index)));
        return;
      }
      if (req.url?.endsWith('/responses')) {
        res.writeHead(200, { 'content-type': body.stream === true ? 'text/event-stream' : 'application/json' });
        res.end(body.stream === true ? responsesStream(body, reply, index) : JSON.stringify(responsesResponse(body, reply, index)));
        return;
      }
      const usage = { prompt_tokens: Math.ceil(JSON.stringify(body).length / 4), completion_tokens: 5, total_tokens: 0 };
      if (body.stream === true) {
        void streamChat(res, body, reply, index, usage);
        return;
      }
      const message = 'text' in reply
        ? { role: 'assistant', content: reply.text, refusal: null }
        : {
          role: 'assistant', content: reply.say ?? null, refusal: null,
          tool_calls: reply.calls.map((c, k) => ({ id: `call_${index}_${k}`, type: 'function', function: { name: c.name, arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments) } })),
        };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({
        id: `chatcmpl-${index}`, object: 'chat.completion', created: 1, model: String(body.model ?? 'm'),
        choices: [{ index: 0, message, logprobs: null, finish_reason: 'text' in reply ? 'stop' : 'tool_calls' }],
        usage,
      }));
    });
  });
  const loopback = await listenOnLoopback(server);
  return {
    baseURL: loopback.baseURL,
    bodies,
    paths,
    enqueue: (...replies) => void queue.push(...replies),
    async close() {
      await loopback.close();
    },
  };
}

/**
 * The stand-in for one test file: started before its tests and closed after them, with `open`,
 * where a test puts the compressors it makes (closed after each test). Read `server` inside tests only.
 */
export function chatStandInForFile(): { readonly server: ChatStandIn; readonly open: Compressor[] } {
  let server: ChatStandIn | undefined;
  const open: Compressor[] = [];
  beforeAll(async () => {
    server = await startChatStandIn();
  });
  afterAll(async () => {
    await server?.close();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close(200)));
  });
  return {
    get server() {
      if (server === undefined) throw new Error('the stand-in is read before beforeAll started it');
      return server;
    },
    open,
  };
}

