import { afterAll, beforeAll } from '@jest/globals';
import type { ServerResponse } from 'node:http';
import { startServer, type RunningServer, type ServerOptions } from '../../src/server/index.js';
import { json, startUpstream, type StandInUpstream, type UpstreamHandler } from '../helpers/upstream-server.js';

/**
 * A recall proxy (`recall: true`, a 4,000-token window, memory store) in front of a stand-in
 * upstream on 127.0.0.1 that answers its requests from a script, in order (200 `chatCompletion`
 * text once the script is used up). The proxy's `request` log lines are kept, parsed, and can be
 * awaited: a test knows when the proxy finished a request without polling.
 */
export interface RecallBed {
  readonly upstream: StandInUpstream;
  readonly proxy: RunningServer;
  /** Sets the upstream's next answers, one per request, in order (what an earlier script left is dropped). */
  script(...handlers: UpstreamHandler[]): void;
  /** Resolves with the next `request` log line the proxy writes for a folding route. */
  nextRequestLog(): Promise<Record<string, unknown>>;
  /** The value of a sample in the proxy's `/metrics` (0 when absent), e.g. `ctxfold_requests_in_flight`. */
  metric(sample: string): Promise<number>;
  close(): Promise<void>;
}

/** Starts a recall bed; `options` override the proxy's. The caller closes it (afterAll/finally). */
export async function startRecallBed(options: Partial<ServerOptions> = {}): Promise<RecallBed> {
  const queue: UpstreamHandler[] = [];
  const upstream = await startUpstream((request, res, req) => {
    const next = queue.shift();
    return next ? next(request, res, req) : json(res, 200, chatCompletion('fallback'));
  });
  const waiters: ((line: Record<string, unknown>) => void)[] = [];
  const logDestination = {
    write(text: string) {
      for (const raw of text.split('\n')) {
        if (raw === '') continue;
        const line = JSON.parse(raw) as Record<string, unknown>;
        if (line.msg === 'request' && typeof line.route === 'string' && line.route !== 'metrics' && line.route !== 'healthz') waiters.shift()?.(line);
      }
    },
  };
  const proxy = await startServer({
    upstream: upstream.baseURL, port: 0, store: 'memory', logLevel: 'info', logDestination, recall: true,
    config: { models: { 'm': { maxContextTokens: 4_000 } } },
    ...options,
  }).catch(async (error: unknown) => {
    await upstream.close();
    throw error;
  });
  return {
    upstream,
    proxy,
    script: (...handlers) => void queue.splice(0, queue.length, ...handlers),
    nextRequestLog: () => new Promise((resolve) => waiters.push(resolve)),
    async metric(sample) {
      const text = await (await fetch(`${proxy.url}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
      return line === undefined ? 0 : Number(line.slice(sample.length + 1));
    },
    async close() {
      await proxy.close();
      await upstream.close();
    },
  };
}

/**
 * One bed for a test file: started before its tests (`beforeAll`), stopped after them
 * (`afterAll`); the returned function reads it.
 */
export function recallBedForFile(options: Partial<ServerOptions> = {}): () => RecallBed {
  let bed: RecallBed | undefined;
  beforeAll(async () => {
    bed = await startRecallBed(options);
  });
  afterAll(async () => {
    await bed?.close();
  });
  return () => {
    if (bed === undefined) throw new Error('the recall bed is read before beforeAll started it');
    return bed;
  };
}

/** A `chat.completion` with `text`, or with `calls` (name and JSON arguments) and no text. */
export function chatCompletion(text: string | null, calls: { id: string; name: string; arguments: string }[] = [], usage: Record<string, unknown> = { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 }): Record<string, unknown> {
  const toolCalls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  return {
    id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: text, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) }, finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop', logprobs: null }],
    usage,
  };
}

/** A recall call as a Chat Completions tool call. */
export const RECALL_CALL = { id: 'call_r1', name: 'ctxfold_recall', arguments: '{"query":"cache"}' };

/** Writes an event stream: `events` (each an SSE `data` payload, or a whole `event:`/`data:` block ending in a blank line). */
export function sse(res: ServerResponse, events: readonly (string | Record<string, unknown>)[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const e of events) res.write(typeof e === 'string' && e.endsWith('\n\n') ? e : `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`);
  res.end();
}

/** A Chat Completions chunk with one choice's `delta` and `finish`. */
export function chunk(delta: Record<string, unknown>, finish: string | null = null): Record<string, unknown> {
  return { id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] };
}

/** A streamed Chat answer holding only the recall call, then (when given) its usage chunk, then `[DONE]`. */
export function recallChunks(usage?: Record<string, unknown>): (string | Record<string, unknown>)[] {
  return [
    chunk({ role: 'assistant', content: null }),
    chunk({ tool_calls: [{ index: 0, id: RECALL_CALL.id, type: 'function', function: { name: RECALL_CALL.name, arguments: RECALL_CALL.arguments } }] }),
    chunk({}, 'tool_calls'),
    ...(usage ? [{ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage }] : []),
    '[DONE]',
  ];
}

/** A streamed Chat text answer, then (when given) its usage chunk, then `[DONE]`. */
export function textChunks(text: string, usage?: Record<string, unknown>): (string | Record<string, unknown>)[] {
  return [
    chunk({ role: 'assistant', content: '' }),
    chunk({ content: text }),
    chunk({}, 'stop'),
    ...(usage ? [{ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage }] : []),
    '[DONE]',
  ];
}

/** POSTs `body` as JSON to the proxy's `path`. */
export function post(proxy: RunningServer, path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(`${proxy.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' }, body: JSON.stringify(body), signal });
}

/** The JSON payloads of an event stream's `data:` lines (`[DONE]` left out). */
export function ssePayloads(text: string): Record<string, unknown>[] {
  return text.split('\n').filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]').map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
}
