/**
 * What `ctxfold/openai` costs per request: the real `openai` client calling
 * `chat.completions.create` against a stand-in API on 127.0.0.1, with and without `withCtxfold`,
 * at 1k and 10k messages. Warm: the same chat is replayed (as an agent loop resends its history),
 * and the two clients take turns request by request so that both see the same machine state.
 * Each figure is the median over `REQUESTS` requests after `WARMUP` unmeasured ones.
 *
 * The time is the whole call as the application sees it: the SDK serializing the body, the HTTP
 * round trip and the stand-in reading it, plus, with the wrapper, ctxfold's compress. Two rows
 * per size:
 * - `openai`: a 32k-token window. The wrapped client sends the view instead of the whole history,
 *   so it has far less to serialize and send; a negative overhead is that saving, not an error.
 * - `openai (window holds all)`: a window larger than the history, so both clients send the same
 *   bytes and the difference is what the wrapper and `compress` cost on their own.
 * Summaries are off (`summarizer: null`) so no background job shares the CPU with the measured requests.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { compressorOf, withCtxfold } from '../src/adapters/openai/index.js';
import { generateConversation } from './fixtures/conversation.js';
import { median } from './stats.js';

/** Measured requests per client and size. */
const REQUESTS = 25;
/** Unmeasured requests per client first (tokenizer, caches, connections). */
const WARMUP = 3;
/** The windows of the wrapped client, by row label: a usual one, and one no history here reaches. */
const WINDOWS: readonly (readonly [string, number])[] = [['openai', 32_000], ['openai (window holds all)', 100_000_000]];

/** One row: median ms per request without and with the adapter at one history size. */
export interface AdapterOverheadRow {
  adapter: string;
  messages: number;
  withoutMs: number;
  withMs: number;
  overheadMs: number;
}

/** A fixed, valid `chat.completion` with usage: the stand-in's only answer. */
const ANSWER = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 0,
  model: 'gpt-4o',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1000, completion_tokens: 1, total_tokens: 1001 },
});

/** A stand-in API on 127.0.0.1: reads the whole body (as a server must) and answers `ANSWER`. */
async function startStandIn(): Promise<{ baseURL: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    req.on('data', () => {});
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(ANSWER);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Milliseconds one awaited call takes. */
async function timed(call: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await call();
  return performance.now() - start;
}

/** Median ms per request with and without `withCtxfold`, at 1k and 10k messages, for each window of `WINDOWS`. */
export async function measureAdapterOverhead(): Promise<AdapterOverheadRow[]> {
  const standIn = await startStandIn();
  const rows: AdapterOverheadRow[] = [];
  try {
    for (const size of [1_000, 10_000]) {
      const messages = generateConversation({ messages: size, seed: 10 }) as ChatCompletionMessageParam[];
      for (const [adapter, maxContextTokens] of WINDOWS) {
        const body = { model: 'gpt-4o', messages, metadata: { chat_id: `bench-${size}` } };
        const plain = new OpenAI({ apiKey: 'bench', baseURL: standIn.baseURL, maxRetries: 0 });
        const wrapped = withCtxfold(new OpenAI({ apiKey: 'bench', baseURL: standIn.baseURL, maxRetries: 0 }), { maxContextTokens, summarizer: null });
        const without: number[] = [];
        const withAdapter: number[] = [];
        for (let k = 0; k < WARMUP + REQUESTS; k++) {
          // Alternate which client goes first, so neither always runs right after the other's garbage.
          const pair = k % 2 === 0
            ? [await timed(() => plain.chat.completions.create(body)), await timed(() => wrapped.chat.completions.create(body))]
            : [await timed(() => wrapped.chat.completions.create(body)), await timed(() => plain.chat.completions.create(body))].reverse();
          if (k < WARMUP) continue;
          without.push(pair[0]);
          withAdapter.push(pair[1]);
        }
        await compressorOf(wrapped)!.close();
        const withoutMs = median(without);
        const withMs = median(withAdapter);
        rows.push({ adapter, messages: size, withoutMs, withMs, overheadMs: withMs - withoutMs });
      }
    }
  } finally {
    await standIn.close();
  }
  return rows;
}

// `node dist/bench/adapter-openai.js` prints the rows.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const row of await measureAdapterOverhead()) {
    console.log(`${row.adapter} ${row.messages} messages: without ${row.withoutMs.toFixed(2)} ms, with ${row.withMs.toFixed(2)} ms, overhead ${row.overheadMs.toFixed(2)} ms`);
  }
}
