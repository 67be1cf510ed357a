/**
 * What `ctxfold/langchain` costs per request: a real LangChain agent (`createAgent`) invoked on a
 * whole history with a stand-in chat model, with and without `ctxfoldMiddleware`, at 1k and 10k
 * messages. Warm: the same chat (same thread id, same message objects) is replayed, as an
 * application resends its history each turn, and the two agents take turns request by request so
 * that both see the same machine state. Each figure is the median over `REQUESTS` requests after
 * `WARMUP` unmeasured ones.
 *
 * The time is the whole `agent.invoke` as the application sees it: LangGraph taking the history
 * in, the model node, the stand-in model, plus, with the middleware, reading the messages, the
 * compressor's `compress` and mapping the view back. The stand-in serializes what it is sent as
 * an OpenAI request body (as a provider client must) and answers "ok". Two rows per size:
 * - `langchain`: a 32k-token window. The model is sent the view instead of the whole history,
 *   so the stand-in has less to serialize; a negative overhead is that saving, not an error.
 * - `langchain (window holds all)`: a window larger than the history, so both agents send the
 *   same messages and the difference is what the middleware and `compress` cost on their own.
 * Summaries are off (`summarizer: null`) so no background job shares the CPU with the measured requests.
 */
import { pathToFileURL } from 'node:url';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { createAgent } from 'langchain';
import { ctxfoldMiddleware } from '../src/adapters/langchain/index.js';
import { toLangChain } from './langchain-convert.js';
import { generateConversation } from './fixtures/conversation.js';
import { median } from './stats.js';

/** Measured requests per agent and size. */
const REQUESTS = 25;
/** Unmeasured requests per agent first (tokenizer, caches, the compressor's history cache). */
const WARMUP = 3;
/** The windows of the middleware, by row label: a usual one, and one no history here reaches. */
const WINDOWS: readonly (readonly [string, number])[] = [['langchain', 32_000], ['langchain (window holds all)', 100_000_000]];

/** One row: median ms per request without and with the adapter at one history size. */
export interface AdapterOverheadRow {
  adapter: string;
  messages: number;
  withoutMs: number;
  withMs: number;
  overheadMs: number;
}

/** The stand-in chat model: builds the request body a provider client would send, answers "ok". */
class StandInChatModel extends BaseChatModel {
  _llmType(): string {
    return 'stand-in';
  }

  override bindTools(): this {
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const body = JSON.stringify({
      model: 'stand-in',
      messages: messages.map((m) => ({ role: m.type, content: m.content, tool_calls: (m as AIMessage).tool_calls, tool_call_id: (m as { tool_call_id?: string }).tool_call_id })),
    });
    const message = new AIMessage({ content: 'ok', usage_metadata: { input_tokens: Math.ceil(body.length / 4), output_tokens: 1, total_tokens: Math.ceil(body.length / 4) + 1 } });
    return { generations: [{ text: 'ok', message }] };
  }
}

/** A generated history of `size` messages as LangChain messages, ending on a user message, with ids. */
function history(size: number): { systemPrompt: string; messages: BaseMessage[] } {
  const conversation = generateConversation({ messages: size, seed: 10 });
  let end = conversation.length;
  while (end > 1 && conversation[end - 1].role !== 'user') end--;
  const [system, ...rest] = toLangChain(conversation.slice(0, end));
  rest.forEach((m, i) => {
    m.id = `bench-${i}`;
  });
  return { systemPrompt: typeof system.content === 'string' ? system.content : '', messages: rest };
}

/** Milliseconds one awaited call takes. */
async function timed(call: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await call();
  return performance.now() - start;
}

/** Median ms per `agent.invoke` with and without `ctxfoldMiddleware`, at 1k and 10k messages, for each window of `WINDOWS`. */
export async function measureAdapterOverhead(): Promise<AdapterOverheadRow[]> {
  const rows: AdapterOverheadRow[] = [];
  for (const size of [1_000, 10_000]) {
    const { systemPrompt, messages } = history(size);
    for (const [adapter, maxContextTokens] of WINDOWS) {
      const middleware = ctxfoldMiddleware({ maxContextTokens, summarizer: null });
      const plain = createAgent({ model: new StandInChatModel({}), tools: [], systemPrompt });
      const wrapped = createAgent({ model: new StandInChatModel({}), tools: [], systemPrompt, middleware: [middleware] });
      const config = { configurable: { thread_id: `bench-${size}` } };
      const without: number[] = [];
      const withAdapter: number[] = [];
      for (let k = 0; k < WARMUP + REQUESTS; k++) {
        // Alternate which agent goes first, so neither always runs right after the other's garbage.
        const pair = k % 2 === 0
          ? [await timed(() => plain.invoke({ messages }, config)), await timed(() => wrapped.invoke({ messages }, config))]
          : [await timed(() => wrapped.invoke({ messages }, config)), await timed(() => plain.invoke({ messages }, config))].reverse();
        if (k < WARMUP) continue;
        without.push(pair[0]);
        withAdapter.push(pair[1]);
      }
      await middleware.compressor.close();
      const withoutMs = median(without);
      const withMs = median(withAdapter);
      rows.push({ adapter, messages: size, withoutMs, withMs, overheadMs: withMs - withoutMs });
    }
  }
  return rows;
}

// `node dist/bench/adapter-langchain.js` prints the rows.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const row of await measureAdapterOverhead()) {
    console.log(`${row.adapter} ${row.messages} messages: without ${row.withoutMs.toFixed(2)} ms, with ${row.withMs.toFixed(2)} ms, overhead ${row.overheadMs.toFixed(2)} ms`);
  }
}
