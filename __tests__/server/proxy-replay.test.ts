import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { generateConversation, modelRequestEnds } from '../../bench/fixtures/conversation.js';
import { convertMessages } from '../../src/formats/convert.js';
import type { MessageLens } from '../../src/formats/lens.js';
import { openaiChatLens } from '../../src/formats/openai-chat/lens.js';
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';
import { openaiResponsesLens } from '../../src/formats/openai-responses/lens.js';
import { validateMessages } from '../../src/formats/profiles.js';
import { startServer, type RunningServer } from '../../src/server/index.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import { pairingProblems } from '../helpers/oracle.js';
import { checkResponsesInput } from '../helpers/openai-responses-checker.js';
import { startOpenAIApiServer, type ApiRequest, type OpenAIApiServer } from '../helpers/openai-api-server.js';
import { scriptedSummarizer } from '../helpers/test-summarizers.js';

/**
 * The first check: the real `openai` package pointed at the proxy, which is pointed at a
 * stand-in upstream on 127.0.0.1. A 500-turn tool-calling conversation replayed request by
 * request (every third one streamed): every body the upstream receives is valid for the provider
 * and within the budget, summaries made in the background come back in later views, and each
 * stream reaches the client while the upstream still holds its last event.
 */

const BUDGET = 12_000;
const recount = createTokenCounter();

/** Tokens of what the upstream received, counted as the planner counts them (no tools, no reserve in these bodies). */
function sentTokens<M>(messages: readonly M[], lens: MessageLens<M>, instructions?: string): number {
  const extra = instructions === undefined ? 0 : recount.message({ role: 'system', content: instructions }, openaiChatLens);
  return recount.requestOverhead + extra + messages.reduce((n, m) => n + recount.message(m, lens), 0);
}

/** Stream gates: the upstream holds a stream's last event until the test has seen the stream's first chunk at the client. */
function streamGates() {
  let release: (() => void) | undefined;
  let held = false;
  return {
    hold: (_request: ApiRequest) => new Promise<void>((resolve) => {
      held = true;
      // Never a deadlock if the proxy buffered the stream: the test fails on `sawFirstWhileHeld`, not on a timeout.
      const timer = setTimeout(() => open(), 3_000);
      const open = () => {
        clearTimeout(timer);
        held = false;
        release = undefined;
        resolve();
      };
      release = open;
    }),
    /** True when the upstream is holding the last event right now. */
    holding: () => held,
    release: () => release?.(),
  };
}

const gates = streamGates();
let upstream: OpenAIApiServer;
let proxy: RunningServer;
const store = new MemoryStore();
const summarizer = scriptedSummarizer(() => 1);

beforeAll(async () => {
  upstream = await startOpenAIApiServer({ holdLastEvent: gates.hold });
  // Chat calls a model ctxfold does not know (so --max-tokens applies); the Responses test calls one the config limits further.
  proxy = await startServer({
    upstream: upstream.baseURL, port: 0, store, summarizer, maxContextTokens: BUDGET, keepLast: 6, logLevel: 'silent',
    config: { models: { 'replay-small': { maxContextTokens: 6_000 } } },
  });
});
afterAll(async () => {
  await proxy.close();
  await upstream.close();
});

describe('the real openai client through the proxy', () => {
  test('chat.completions: a 500-turn tool-calling conversation, stream and non-stream, every upstream request valid and within budget, streams relayed chunk by chunk', async () => {
    const conversation = generateConversation({ messages: 1300, seed: 4242, bulkyEvery: 60 }) as ChatCompletionMessageParam[];
    const ends = modelRequestEnds(conversation as OpenAIChatMessage[]).slice(0, 500);
    expect(ends).toHaveLength(500);
    const client = new OpenAI({ apiKey: 'sk-replay-key', baseURL: `${proxy.url}/v1`, maxRetries: 0 });
    const problems: string[] = [];
    let streamed = 0;
    let firstChunkWhileHeld = 0;
    let cut = 0;
    let withSummary = 0;
    let largest = 0;

    const history: ChatCompletionMessageParam[] = [];
    for (const [k, end] of ends.entries()) {
      while (history.length < end) history.push(conversation[history.length]);
      const at = upstream.requests.length;
      const body = { model: 'replay-model', messages: history, metadata: { chat_id: 'replay' } };
      if (k % 3 === 2) {
        streamed++;
        const stream = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
        let first = true;
        let text = '';
        for await (const chunk of stream) {
          if (first) {
            first = false;
            if (gates.holding()) firstChunkWhileHeld++;
            gates.release();
          }
          text += chunk.choices[0]?.delta?.content ?? '';
        }
        if (text !== `reply ${at + 1}`) problems.push(`request ${k}: streamed text ${JSON.stringify(text)}`);
      } else {
        const completion = await client.chat.completions.create(body);
        if (completion.choices[0].message.content !== `reply ${at + 1}`) problems.push(`request ${k}: answer ${JSON.stringify(completion.choices[0].message.content)}`);
      }
      const received = upstream.requests[at];
      const sent = received.body!.messages as OpenAIChatMessage[];
      const tokens = sentTokens(sent, openaiChatLens);
      largest = Math.max(largest, tokens);
      if (tokens > BUDGET) problems.push(`request ${k}: the upstream received ${tokens} tokens, over ${BUDGET}`);
      const violations = validateMessages(sent, 'openai');
      if (violations.length > 0) problems.push(`request ${k}: ${JSON.stringify(violations.slice(0, 2))}`);
      const independent = pairingProblems(sent);
      if (independent.length > 0) problems.push(`request ${k}: independent checker: ${independent.slice(0, 2).join('; ')}`);
      // Every other field went out as the client sent it.
      if (received.body!.model !== 'replay-model' || (received.body!.metadata as { chat_id?: string }).chat_id !== 'replay') problems.push(`request ${k}: fields changed`);
      if (received.headers.authorization !== 'Bearer sk-replay-key') problems.push(`request ${k}: the caller's key was not forwarded`);
      if (sent.length < history.length) cut++;
      if (sent.some((m) => typeof m.content === 'string' && m.content.includes('folded '))) withSummary++;
    }
    await proxy.drain();

    expect(problems).toEqual([]);
    expect(firstChunkWhileHeld).toBe(streamed);
    expect(cut).toBeGreaterThan(ends.length / 2);
    expect(withSummary).toBeGreaterThan(ends.length / 4);
    expect(summarizer.calls).toBeGreaterThan(0);
    console.log(`proxy chat replay: ${ends.length} requests (${streamed} streamed, each first chunk seen while the upstream held its last event) over ${history.length} messages; ${cut} views cut, ${withSummary} with a summary, largest view ${largest} tokens of ${BUDGET}; ${summarizer.calls} summarizer calls`);
  });

  test('responses: a Responses conversation replayed through client.responses.create, stream and non-stream, every upstream input valid and within budget', async () => {
    const input = convertMessages(generateConversation({ messages: 300, seed: 99 }), { from: 'openai', to: 'openai-responses' }).messages as ResponseInputItem[];
    const isModelItem = (item: ResponseInputItem | undefined) => item !== undefined && ((item as { type?: string }).type === 'function_call' || ('role' in item && item.role === 'assistant'));
    const ends = input.flatMap((item, i) => (i > 0 && isModelItem(item) && !isModelItem(input[i - 1]) ? [i] : []));
    const client = new OpenAI({ apiKey: 'sk-replay-key', baseURL: `${proxy.url}/v1`, maxRetries: 0 });
    const instructions = 'Use the tools; answer briefly.';
    const problems: string[] = [];
    let cut = 0;
    const history: ResponseInputItem[] = [];
    for (const [k, end] of ends.entries()) {
      while (history.length < end) history.push(input[history.length]);
      const at = upstream.requests.length;
      const body = { model: 'replay-small', input: history, instructions, metadata: { chat_id: 'replay-responses' } };
      if (k % 2 === 1) {
        const stream = await client.responses.create({ ...body, stream: true });
        for await (const _event of stream) gates.release();
      } else {
        await client.responses.create(body);
      }
      const sent = upstream.requests[at].body!.input as unknown[];
      if (upstream.requests[at].body!.instructions !== instructions) problems.push(`request ${k}: instructions changed`);
      const tokens = sentTokens(sent, openaiResponsesLens as MessageLens<unknown>, instructions);
      if (tokens > 6_000) problems.push(`request ${k}: ${tokens} tokens over 6000`);
      const violations = [...validateMessages(sent, 'openai-responses'), ...checkResponsesInput(sent)];
      if (violations.length > 0) problems.push(`request ${k}: ${JSON.stringify(violations.slice(0, 2))}`);
      if (sent.length < history.length) cut++;
    }
    expect(problems).toEqual([]);
    expect(cut).toBeGreaterThan(ends.length / 4);
  });
});

