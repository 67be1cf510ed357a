import { createServer } from 'node:http';
import { responsesResponse, responsesStream } from './responses-reply.js';
import { listenOnLoopback } from '../helpers/loopback.js';

/**
 * A loopback stand-in for `POST /v1/chat/completions` and `POST /v1/responses` (127.0.0.1, port 0)
 * that answers each request with the next scripted reply: a text, or tool calls
 * (`finish_reason: 'tool_calls'`; on Responses, `function_call` items, see responses-reply.ts).
 * A streamed request gets a short SSE text answer. Every request body and path is kept.
 */

/**
 * One scripted reply. With calls, `reasoning` adds a reasoning item before them and `say` a text
 * message (both Responses only; Chat Completions puts `say` in the message's content).
 */
export type StandInReply =
  | { readonly text: string }
  | { readonly calls: readonly { readonly name: string; readonly arguments: unknown }[]; readonly reasoning?: string; readonly say?: string };

export interface ChatStandIn {
  readonly baseURL: string;
  /** Parsed JSON bodies, in arrival order. */
  readonly bodies: Record<string, unknown>[];
  /** The request paths, in the same order. */
  readonly paths: string[];
  /** Queues replies; with the queue empty the answer is the text `ok <n>`. */
  enqueue(...replies: StandInReply[]): void;
  close(): Promise<void>;
}

export async function startChatStandIn(): Promise<ChatStandIn> {
  const bodies: Record<string, unknown>[] = [];
  const paths: string[] = [];
  const queue: StandInReply[] = [];
  let n = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      bodies.push(body);
      paths.push(req.url ?? '');
      const index = ++n;
      const reply = queue.shift() ?? { text: `ok ${index}` };
      if (req.url?.endsWith('/responses')) {
        res.writeHead(200, { 'content-type': body.stream === true ? 'text/event-stream' : 'application/json' });
        res.end(body.stream === true ? responsesStream(body, reply, index) : JSON.stringify(responsesResponse(body, reply, index)));
        return;
      }
      const usage = { prompt_tokens: Math.ceil(JSON.stringify(body).length / 4), completion_tokens: 5, total_tokens: 0 };
      if (body.stream === true) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = (delta: unknown, finish: string | null) => `data: ${JSON.stringify({ id: `c${index}`, object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
        res.end(`${chunk({ role: 'assistant', content: 'text' in reply ? reply.text : 'streamed' }, null)}${chunk({}, 'stop')}data: [DONE]\n\n`);
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
