import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import OpenAI from 'openai';
import { Stream } from 'openai/core/streaming';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { compressorOf, withCtxfold } from '../../src/adapters/openai/index.js';
import { generateConversation } from '../../bench/fixtures/conversation.js';
import { validateMessages } from '../../src/formats/profiles.js';
import { createCompressor, type Compressor, type CompressorEvents } from '../../src/runtime/compressor.js';
import { InputError } from '../../src/errors.js';
import { pairingProblems } from '../helpers/oracle.js';
import { checkResponsesInput } from '../helpers/openai-responses-checker.js';
import { scriptedSummarizer } from '../helpers/test-summarizers.js';
import { startOpenAIApiServer, type OpenAIApiServer } from '../helpers/openai-api-server.js';
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';
import { openaiChatLens } from '../../src/formats/openai-chat/lens.js';
import { createTokenCounter } from '../../src/tokens/counter.js';

let server: OpenAIApiServer;
beforeAll(async () => {
  server = await startOpenAIApiServer();
});
afterAll(async () => {
  await server.close();
});

const open: Compressor[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close(200)));
});

/** A fresh SDK client on the loopback server (no retries: a failure reaches the test at once). */
const sdkClient = () => new OpenAI({ apiKey: 'test-key', baseURL: server.baseURL, maxRetries: 0 });

/** A wrapped client; its compressor is closed after the test. */
function wrapped(options: Parameters<typeof withCtxfold>[1], client = sdkClient()) {
  const w = withCtxfold(client, options);
  open.push(compressorOf(w)!);
  return { client, w, compressor: compressorOf(w)! };
}

/** Events of a compressor, by name, in order. */
function recordEvents(c: Compressor) {
  const log: { event: keyof CompressorEvents; payload: unknown }[] = [];
  for (const event of ['compressed', 'summary:start', 'summary:done', 'summary:failed', 'summary:stale', 'calibration'] as const) {
    c.on(event, (payload) => log.push({ event, payload }));
  }
  const of = <E extends keyof CompressorEvents>(event: E) => log.filter((e) => e.event === event).map((e) => e.payload as CompressorEvents[E]);
  return { log, of };
}

/** The body of the `k`-th-from-last request the server received. */
const lastBody = (k = 1) => server.requests[server.requests.length - k].body!;

/** A long tool-calling chat (about 9k tokens for 120 messages). */
const chat = (messages = 120, seed = 7) => generateConversation({ messages, seed }) as ChatCompletionMessageParam[];

/** The same chat as Responses input items. */
function responsesInput(messages = 120, seed = 7): ResponseInputItem[] {
  // Converted once through the project's converter: function_call / function_call_output items.
  return convert(generateConversation({ messages, seed }));
}
let convert: (m: OpenAIChatMessage[]) => ResponseInputItem[];
beforeAll(async () => {
  const { convertMessages } = await import('../../src/formats/convert.js');
  convert = (m) => convertMessages(m, { from: 'openai', to: 'openai-responses' }).messages as ResponseInputItem[];
});

describe('chat.completions.create', () => {
  test('sends the compressed view, returns the SDK\'s own response, keeps withResponse() and asResponse()', async () => {
    const { w } = wrapped({ maxContextTokens: 3000, summarizer: null });
    const messages = chat();
    const before = structuredClone(messages);
    const completion = await w.chat.completions.create({ model: 'gpt-4o', messages, metadata: { chat_id: 'c-1' } });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0].message.content).toMatch(/^reply /);
    expect(completion._request_id).toMatch(/^req_200_/);
    const sent = lastBody().messages as OpenAIChatMessage[];
    expect(sent.length).toBeLessThan(messages.length);
    expect(validateMessages(sent, 'openai')).toEqual([]);
    expect(pairingProblems(sent)).toEqual([]);
    expect(lastBody().metadata).toEqual({ chat_id: 'c-1' });
    expect(messages).toEqual(before);

    const { data, response, request_id } = await w.chat.completions.create({ model: 'gpt-4o', messages }).withResponse();
    expect(data.object).toBe('chat.completion');
    expect(response.status).toBe(200);
    expect(request_id).toMatch(/^req_200_/);
    const raw = await w.chat.completions.create({ model: 'gpt-4o', messages }).asResponse();
    expect(raw.status).toBe(200);
    expect(((await raw.json()) as { object: string }).object).toBe('chat.completion');
    expect((lastBody().messages as unknown[]).length).toBe(sent.length);
  });

  test('stream: the SDK\'s Stream, read to the end; usage from the include_usage chunk calibrates once the stream ended', async () => {
    const { w, compressor } = wrapped({ maxContextTokens: 3000, summarizer: null });
    const events = recordEvents(compressor);
    const stream = await w.chat.completions.create({ model: 'gpt-4o', messages: chat(), stream: true, stream_options: { include_usage: true }, metadata: { chat_id: 's-1' } });
    expect(stream).toBeInstanceOf(Stream);
    expect(stream.controller).toBeInstanceOf(AbortController);
    expect(events.of('calibration')).toHaveLength(0);
    let text = '';
    let usage: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
      expect(events.of('calibration')).toHaveLength(0);
    }
    expect(text).toMatch(/^reply \d+$/);
    expect(usage).toEqual(expect.objectContaining({ prompt_tokens: server.requests.at(-1)!.billedInputTokens }));
    const [sample] = events.of('calibration');
    expect(sample).toEqual(expect.objectContaining({ chatId: 's-1', model: 'gpt-4o', billed: server.requests.at(-1)!.billedInputTokens, estimated: events.of('compressed')[0].report.tokensAfter }));
    expect(events.of('calibration')).toHaveLength(1);
  });

  test('stream: tee() and toReadableStream() still work and report once', async () => {
    const { w, compressor } = wrapped({ maxContextTokens: 3000, summarizer: null });
    const events = recordEvents(compressor);
    const body = { model: 'gpt-4o', messages: chat(), stream: true as const, stream_options: { include_usage: true }, user: 'u-9' };
    const [left, right] = (await w.chat.completions.create(body)).tee();
    const read = async (s: AsyncIterable<{ choices: { delta?: { content?: string | null } }[] }>) => {
      let t = '';
      for await (const c of s) t += c.choices[0]?.delta?.content ?? '';
      return t;
    };
    const [a, b] = await Promise.all([read(left), read(right)]);
    expect(a).toBe(b);
    expect(events.of('calibration').map((s) => s.chatId)).toEqual(['u-9']);

    const readable = (await w.chat.completions.create(body)).toReadableStream();
    const lines = (await new Response(readable as ReadableStream).text()).trim().split('\n').map((l) => JSON.parse(l) as { object: string });
    expect(lines.every((l) => l.object === 'chat.completion.chunk')).toBe(true);
    expect(events.of('calibration')).toHaveLength(2);
  });

  test('stream without include_usage: nothing to calibrate; the summary is scheduled once the stream was read to its end, not before', async () => {
    const summarizer = scriptedSummarizer();
    const { w, compressor } = wrapped({ maxContextTokens: 4000, compressionThresholdTokens: 1500, summarizer });
    const events = recordEvents(compressor);
    const stream = await w.chat.completions.create({ model: 'gpt-4o', messages: chat(), stream: true, metadata: { chat_id: 'n-1' } });
    // The plan asked for a summary, but the stream has not been read yet: nothing is scheduled.
    expect(events.of('compressed')[0].report.summarize).toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(events.of('summary:start')).toHaveLength(0);
    let chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      expect(chunk.usage ?? null).toBeNull();
    }
    expect(chunks).toBeGreaterThan(2);
    await compressor.drain();
    expect(events.of('calibration')).toHaveLength(0);
    expect(events.of('summary:done')).toHaveLength(1);
  });

  test('a stream broken off by its consumer reports nothing', async () => {
    const summarizer = scriptedSummarizer();
    const { w, compressor } = wrapped({ maxContextTokens: 4000, compressionThresholdTokens: 1500, summarizer });
    const events = recordEvents(compressor);
    const stream = await w.chat.completions.create({ model: 'gpt-4o', messages: chat(), stream: true, stream_options: { include_usage: true }, metadata: { chat_id: 'b-1' } });
    for await (const _chunk of stream) break;
    await compressor.drain();
    expect(events.of('calibration')).toHaveLength(0);
    expect(events.of('summary:start')).toHaveLength(0);
  });

  test('the SDK helpers built on create go through the wrapper: parse(), stream(), runTools()', async () => {
    const { w, compressor } = wrapped({ maxContextTokens: 3000, summarizer: null });
    const events = recordEvents(compressor);
    const messages = chat();
    const parsed = await w.chat.completions.parse({ model: 'gpt-4o', messages, metadata: { chat_id: 'h-1' } });
    expect(parsed.choices[0].message.content).toMatch(/^reply /);
    expect((lastBody().messages as unknown[]).length).toBeLessThan(messages.length);
    const runner = w.chat.completions.stream({ model: 'gpt-4o', messages, stream_options: { include_usage: true }, metadata: { chat_id: 'h-2' } });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0].message.content).toMatch(/^reply /);
    expect((lastBody().messages as unknown[]).length).toBeLessThan(messages.length);
    const tools = [{ type: 'function' as const, function: { name: 'lookup', description: 'Looks a record up.', parameters: { type: 'object' as const, properties: {} }, function: async () => 'found' } }];
    const tooling = w.chat.completions.runTools({ model: 'gpt-4o', messages, tools, metadata: { chat_id: 'h-3' } });
    expect(await tooling.finalContent()).toMatch(/^reply /);
    expect((lastBody().messages as unknown[]).length).toBeLessThan(messages.length);
    expect(events.of('compressed').map((e) => e.chatId)).toEqual(['h-1', 'h-2', 'h-3']);
    expect(events.of('calibration').map((e) => e.chatId)).toEqual(['h-1', 'h-2', 'h-3']);
  });

  test('tools, max_tokens and response_format are counted against the window', async () => {
    const { w, compressor } = wrapped({ maxContextTokens: 3000, summarizer: null });
    const events = recordEvents(compressor);
    const messages = chat();
    const tools = [{ type: 'function' as const, function: { name: 'lookup', description: 'Looks a record up by key. '.repeat(40), parameters: { type: 'object', properties: { key: { type: 'string' } } } } }];
    await w.chat.completions.create({ model: 'gpt-4o', messages, metadata: { chat_id: 'x-0' } });
    await w.chat.completions.create({ model: 'gpt-4o', messages, tools, max_completion_tokens: 500, response_format: { type: 'json_object' }, metadata: { chat_id: 'x-1' } });
    const [plain, extra] = events.of('compressed').map((e) => e.report);
    expect(plain.requestExtraTokens).toBe(0);
    expect(extra.reservedOutputTokens).toBe(500);
    expect(extra.requestExtraTokens).toBeGreaterThan(200);
    expect(extra.tokensAfter).toBeLessThanOrEqual(3000 - 500);
    // Views resume at cut points (lowWaterMark), so the extras may cost no message here; never more messages.
    expect(extra.messagesAfter).toBeLessThanOrEqual(plain.messagesAfter);
    expect(lastBody().tools).toEqual(tools);
    expect(lastBody().max_completion_tokens).toBe(500);
  });
});

describe('responses.create', () => {
  test('sends the compressed input; the SDK still adds output_text; instructions and max_output_tokens are counted', async () => {
    const { w, compressor } = wrapped({ maxContextTokens: 3000, summarizer: null });
    const events = recordEvents(compressor);
    const input = responsesInput();
    const before = structuredClone(input);
    const response = await w.responses.create({ model: 'gpt-4o', input, instructions: 'Answer briefly and cite the tool results you used.', max_output_tokens: 300, metadata: { chat_id: 'r-1' } });
    expect(response.object).toBe('response');
    expect(response.output_text).toMatch(/^reply /);
    const sent = lastBody().input as unknown[];
    expect(sent.length).toBeLessThan(input.length);
    expect(validateMessages(sent, 'openai-responses')).toEqual([]);
    expect(checkResponsesInput(sent)).toEqual([]);
    expect(lastBody().instructions).toBe('Answer briefly and cite the tool results you used.');
    expect(input).toEqual(before);
    const { report } = events.of('compressed')[0];
    expect(report.format).toBe('openai-responses');
    expect(report.reservedOutputTokens).toBe(300);
    expect(report.requestExtraTokens).toBeGreaterThan(5);
    expect(events.of('calibration')[0]).toEqual(expect.objectContaining({ chatId: 'r-1', billed: server.requests.at(-1)!.billedInputTokens, estimated: report.tokensAfter }));

    const { data, response: raw } = await w.responses.create({ model: 'gpt-4o', input, metadata: { chat_id: 'r-1' } }).withResponse();
    expect(data.output_text).toMatch(/^reply /);
    expect(raw.status).toBe(200);
  });

  test('stream: the SDK\'s Stream of events; usage from response.completed calibrates once the stream ended', async () => {
    const { w, compressor } = wrapped({ maxContextTokens: 3000, summarizer: null });
    const events = recordEvents(compressor);
    const stream = await w.responses.create({ model: 'gpt-4o', input: responsesInput(), stream: true, metadata: { chat_id: 'rs-1' } });
    expect(stream).toBeInstanceOf(Stream);
    const types: string[] = [];
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type !== 'response.completed') expect(events.of('calibration')).toHaveLength(0);
    }
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    expect(text).toMatch(/^reply \d+$/);
    expect(events.of('calibration')).toEqual([expect.objectContaining({ chatId: 'rs-1', billed: server.requests.at(-1)!.billedInputTokens })]);
  });

  test('the responses.stream() and responses.parse() helpers go through the wrapper', async () => {
    const { w, compressor } = wrapped({ maxContextTokens: 3000, summarizer: null });
    const events = recordEvents(compressor);
    const input = responsesInput();
    const final = await w.responses.stream({ model: 'gpt-4o', input, metadata: { chat_id: 'rh-1' } }).finalResponse();
    expect(final.output[0]).toEqual(expect.objectContaining({ type: 'message', content: [expect.objectContaining({ text: expect.stringMatching(/^reply /) })] }));
    expect((lastBody().input as unknown[]).length).toBeLessThan(input.length);
    const parsed = await w.responses.parse({ model: 'gpt-4o', input, metadata: { chat_id: 'rh-2' } });
    expect(parsed.output_text).toMatch(/^reply /);
    expect((lastBody().input as unknown[]).length).toBeLessThan(input.length);
    expect(events.of('calibration').map((e) => e.chatId)).toEqual(['rh-1', 'rh-2']);
  });

  test('a string input, or a history the server keeps (previous_response_id), is sent as is', async () => {
    const { w, compressor } = wrapped({ maxContextTokens: 3000, summarizer: null });
    const events = recordEvents(compressor);
    await w.responses.create({ model: 'gpt-4o', input: 'Hello there' });
    expect(lastBody().input).toBe('Hello there');
    const input = responsesInput();
    await w.responses.create({ model: 'gpt-4o', input, previous_response_id: 'resp_1' });
    expect(lastBody().input).toEqual(input);
    expect(events.log).toEqual([]);
  });
});

describe('summaries and calibration', () => {
  test('a summary is scheduled only after the response, one job per chat at a time, and the next request uses it', async () => {
    const summarizer = scriptedSummarizer(() => 30);
    const { w, compressor } = wrapped({ maxContextTokens: 8000, compressionThresholdTokens: 3000, summarizer });
    const events = recordEvents(compressor);
    const messages = chat(160, 11);
    server.enqueue({ delayMs: 60 });
    const pending = w.chat.completions.create({ model: 'gpt-4o', messages, metadata: { chat_id: 'sum-1' } });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(events.of('compressed')).toHaveLength(1);
    expect(events.of('compressed')[0].report.summarize).toBeDefined();
    expect(events.of('summary:start')).toHaveLength(0);
    await pending;
    // Three more answered calls while the first job runs: folded into it, never a second job at once.
    for (let k = 0; k < 3; k++) await w.chat.completions.create({ model: 'gpt-4o', messages, metadata: { chat_id: 'sum-1' } });
    await compressor.drain();
    expect(summarizer.maxConcurrent).toBe(1);
    expect(events.of('summary:done').length).toBeGreaterThanOrEqual(1);
    expect(events.of('summary:done').length).toBeLessThanOrEqual(2);
    const starts = events.log.filter((e) => e.event.startsWith('summary:')).map((e) => e.event);
    for (let k = 0; k < starts.length; k += 2) expect(starts.slice(k, k + 2)).toEqual(['summary:start', 'summary:done']);
    await w.chat.completions.create({ model: 'gpt-4o', messages, metadata: { chat_id: 'sum-1' } });
    const sent = lastBody().messages as OpenAIChatMessage[];
    expect(sent.filter((m) => typeof m.content === 'string' && m.content.startsWith('[Summary of '))).toHaveLength(1);
    expect(validateMessages(sent, 'openai')).toEqual([]);
  });

  test('calibrate: the server bills 25% above the count of what it received; after three responses the budget shrinks by that ratio', async () => {
    // The server recounts the view it received (its own counter) and bills 1.25 times that.
    const recount = createTokenCounter();
    const billedHigh = await startOpenAIApiServer({
      promptTokens: ({ body }) => Math.round(1.25 * (recount.requestOverhead + (body!.messages as OpenAIChatMessage[]).reduce((n, m) => n + recount.message(m, openaiChatLens), 0))),
    });
    try {
      const { w, compressor } = wrapped({ maxContextTokens: 3000, summarizer: null, calibrate: true }, new OpenAI({ apiKey: 'k', baseURL: billedHigh.baseURL, maxRetries: 0 }));
      const events = recordEvents(compressor);
      const messages = chat();
      for (let k = 0; k < 5; k++) {
        const stream = await w.chat.completions.create({ model: 'gpt-4o', messages, stream: true, stream_options: { include_usage: true }, metadata: { chat_id: 'cal' } });
        for await (const _chunk of stream) { /* read to the end */ }
      }
      const samples = events.of('calibration');
      expect(samples).toHaveLength(5);
      samples.forEach((s, k) => {
        expect(s.billed).toBe(billedHigh.requests[k].billedInputTokens);
        expect(s.estimated).toBe(events.of('compressed')[k].report.tokensAfter);
        expect(s.ratio).toBeGreaterThan(0.79);
        expect(s.ratio).toBeLessThan(0.81);
      });
      const windows = events.of('compressed').map((e) => e.report.maxContextTokens);
      expect(windows.slice(0, 3)).toEqual([3000, 3000, 3000]);
      expect(windows[3]).toBeGreaterThanOrEqual(2390);
      expect(windows[3]).toBeLessThanOrEqual(2410);
      expect(compressor.stats().calibration.byModel['gpt-4o'].samples).toBe(5);
    } finally {
      await billedHigh.close();
    }
  });
});
