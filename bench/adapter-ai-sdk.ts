/**
 * What `ctxfold/ai-sdk` costs per request: the real `ai` package (6) calling its
 * `MockLanguageModelV3` with and without `ctxfoldMiddleware`, at 1k and 10k messages (the
 * generated chat as AI SDK ModelMessages). Warm: the same chat is replayed (as an agent loop
 * resends its history), and the two models take turns request by request so that both see the
 * same machine state. Each figure is the median over `REQUESTS` requests after `WARMUP` unmeasured
 * ones; the window is 32k tokens and summaries are off (`summarizer: null`) so no background job
 * shares the CPU with the measured requests. Two rows per size:
 * - `ai-sdk`: the whole `generateText` call as the application sees it. Most of it is the SDK's
 *   own work on the history (it validates every message on each call), with or without ctxfold.
 * - `ai-sdk (model call)`: only `doGenerate` of the bare model against the wrapped one, given the
 *   prompt the SDK builds (`convertToLanguageModelPrompt`, fresh objects on each call as in
 *   `generateText`, built outside the timing): the middleware's own cost, compress included.
 */
import { pathToFileURL } from 'node:url';
import { generateText, wrapLanguageModel, type ModelMessage } from 'ai';
import { convertToLanguageModelPrompt } from 'ai/internal';
import { MockLanguageModelV3 } from 'ai/test';
import { ctxfoldMiddleware } from '../src/adapters/ai-sdk/index.js';
import { convertMessages } from '../src/formats/convert.js';
import { generateConversation } from './fixtures/conversation.js';
import { median } from './stats.js';

/** Measured requests per model and size. */
const REQUESTS = 20;
/** Unmeasured requests per model first (tokenizer, caches). */
const WARMUP = 3;
/** The wrapped model's window. */
const WINDOW = 32_000;

/** One row: median ms per request without and with the adapter at one history size. */
export interface AdapterOverheadRow {
  adapter: string;
  messages: number;
  withoutMs: number;
  withMs: number;
  overheadMs: number;
}

/** The stand-in's only answer: a short text with usage. */
const ANSWER = {
  content: [{ type: 'text' as const, text: 'ok' }],
  finishReason: { unified: 'stop' as const, raw: 'stop' },
  usage: { inputTokens: { total: 1000, noCache: 1000, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } },
  warnings: [],
};

/** Milliseconds one awaited call takes. */
async function timed(call: () => PromiseLike<unknown>): Promise<number> {
  const start = performance.now();
  await call();
  return performance.now() - start;
}

/** Runs `without` and `with` in turns (alternating which goes first); returns the row of their medians. */
async function sideBySide(adapter: string, messages: number, without: () => Promise<number>, withAdapter: () => Promise<number>): Promise<AdapterOverheadRow> {
  const a: number[] = [];
  const b: number[] = [];
  for (let k = 0; k < WARMUP + REQUESTS; k++) {
    const pair = k % 2 === 0 ? [await without(), await withAdapter()] : [await withAdapter(), await without()].reverse();
    if (k < WARMUP) continue;
    a.push(pair[0]);
    b.push(pair[1]);
  }
  const withoutMs = median(a);
  const withMs = median(b);
  return { adapter, messages, withoutMs, withMs, overheadMs: withMs - withoutMs };
}

/** Median ms per request with and without `ctxfoldMiddleware`, at 1k and 10k messages (see the file comment). */
export async function measureAdapterOverhead(): Promise<AdapterOverheadRow[]> {
  const rows: AdapterOverheadRow[] = [];
  for (const size of [1_000, 10_000]) {
    const history = convertMessages(generateConversation({ messages: size, seed: 10 }), { from: 'openai', to: 'ai-sdk' }).messages as ModelMessage[];
    // The request the chat sends for its last reply: everything before it.
    const sent = history.slice(0, history.map((m) => m.role).lastIndexOf('assistant'));
    const providerOptions = { ctxfold: { chatId: `bench-${size}` } };
    const bare = new MockLanguageModelV3({ modelId: 'gpt-4o', doGenerate: ANSWER });

    const mw = ctxfoldMiddleware({ maxContextTokens: WINDOW, summarizer: null });
    const wrapped = wrapLanguageModel({ model: new MockLanguageModelV3({ modelId: 'gpt-4o', doGenerate: ANSWER }), middleware: mw });
    const call = (model: typeof bare | typeof wrapped) => () => timed(() => generateText({ model, messages: sent, allowSystemInMessages: true, providerOptions }));
    rows.push(await sideBySide('ai-sdk', size, call(bare), call(wrapped)));
    await mw.compressor.close();

    const mw2 = ctxfoldMiddleware({ maxContextTokens: WINDOW, summarizer: null });
    const wrapped2 = wrapLanguageModel({ model: new MockLanguageModelV3({ modelId: 'gpt-4o', doGenerate: ANSWER }), middleware: mw2 });
    const prompt = () => convertToLanguageModelPrompt({ prompt: { system: undefined, messages: sent }, supportedUrls: {}, download: undefined });
    const modelCall = (model: typeof bare | typeof wrapped2) => async () => {
      const p = await prompt(); // fresh objects on each call, as generateText builds them; not timed
      return timed(() => model.doGenerate({ prompt: p, providerOptions }));
    };
    rows.push(await sideBySide('ai-sdk (model call)', size, modelCall(bare), modelCall(wrapped2)));
    await mw2.compressor.close();
  }
  return rows;
}

// `node dist/bench/adapter-ai-sdk.js` prints the rows.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const row of await measureAdapterOverhead()) {
    console.log(`${row.adapter} ${row.messages} messages: without ${row.withoutMs.toFixed(2)} ms, with ${row.withMs.toFixed(2)} ms, overhead ${row.overheadMs.toFixed(2)} ms`);
  }
}
