import { afterAll, afterEach, beforeAll, describe, expect, jest, test } from '@jest/globals';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { compressorOf, withCtxfold } from '../../src/adapters/openai/index.js';
import { generateConversation } from '../../bench/fixtures/conversation.js';
import { convertMessages } from '../../src/formats/convert.js';
import { createCompressor, type Compressor, type CompressorEvents } from '../../src/runtime/compressor.js';
import { InputError } from '../../src/errors.js';
import { scriptedSummarizer } from '../helpers/test-summarizers.js';
import { startOpenAIApiServer, type OpenAIApiServer } from '../helpers/openai-api-server.js';

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

const sdkClient = () => new OpenAI({ apiKey: 'test-key', baseURL: server.baseURL, maxRetries: 0 });

/** A client wrapped over a compressor that summarizes early (so every answered call would schedule a job). */
function summarizing(chatId?: Parameters<typeof withCtxfold>[1]['chatId']) {
  const compressor = createCompressor({ maxContextTokens: 8000, compressionThresholdTokens: 2000, summarizer: scriptedSummarizer() });
  open.push(compressor);
  const events: { event: string; payload: unknown }[] = [];
  for (const event of ['compressed', 'summary:start', 'summary:done', 'summary:failed', 'calibration'] as const) {
    compressor.on(event, (payload) => events.push({ event, payload }));
  }
  const of = <E extends keyof CompressorEvents>(event: E) => events.filter((e) => e.event === event).map((e) => e.payload as CompressorEvents[E]);
  return { w: withCtxfold(sdkClient(), { compressor, chatId }), compressor, of };
}

const chat = () => generateConversation({ messages: 120, seed: 3 }) as ChatCompletionMessageParam[];
const items = () => convertMessages(generateConversation({ messages: 120, seed: 3 }), { from: 'openai', to: 'openai-responses' }).messages as ResponseInputItem[];

/** Catches what a promise rejects with. */
async function rejection(p: PromiseLike<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('failed calls reach the caller as the SDK\'s own errors and schedule nothing', () => {
  const endpoints: ['chat.completions' | 'responses', boolean][] = [['chat.completions', false], ['chat.completions', true], ['responses', false], ['responses', true]];
  test.each(endpoints)('HTTP 400 from %s (stream: %s): BadRequestError, no summary, no calibration', async (endpoint, stream) => {
    const { w, compressor, of } = summarizing();
    server.enqueue({ status: 400, message: 'This model\'s maximum context length is 8192 tokens.' });
    const call = endpoint === 'responses'
      ? w.responses.create({ model: 'gpt-4o', input: items(), stream, metadata: { chat_id: 'e-1' } })
      : w.chat.completions.create({ model: 'gpt-4o', messages: chat(), stream, metadata: { chat_id: 'e-1' } });
    const error = await rejection(call);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).status).toBe(400);
    expect((error as Error).message).toContain('maximum context length');
    // The plan asked for a summary, but the call failed: nothing was scheduled.
    expect(of('compressed')[0].report.summarize).toBeDefined();
    await compressor.drain();
    expect(of('summary:start')).toHaveLength(0);
    expect(of('calibration')).toHaveLength(0);
    expect(compressor.stats().summariesStarted).toBe(0);
  });

  test('a Chat stream that fails half way throws the SDK\'s APIError to the reader and schedules nothing', async () => {
    const { w, compressor, of } = summarizing();
    server.enqueue({ fail: 'upstream overloaded' });
    const stream = await w.chat.completions.create({ model: 'gpt-4o', messages: chat(), stream: true, stream_options: { include_usage: true }, metadata: { chat_id: 'e-2' } });
    const error = await rejection((async () => {
      for await (const _chunk of stream) { /* read */ }
    })());
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as Error).message).toContain('upstream overloaded');
    await compressor.drain();
    expect(of('summary:start')).toHaveLength(0);
  });

  test('a Responses stream that ends in response.failed is passed on whole and schedules nothing', async () => {
    const { w, compressor, of } = summarizing();
    server.enqueue({ fail: 'model crashed' });
    const stream = await w.responses.create({ model: 'gpt-4o', input: items(), stream: true, metadata: { chat_id: 'e-3' } });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types.at(-1)).toBe('response.failed');
    await compressor.drain();
    expect(of('summary:start')).toHaveLength(0);
    expect(of('calibration')).toHaveLength(0);
  });

  test('a Responses answer with status failed is returned as is and schedules nothing', async () => {
    const { w, compressor, of } = summarizing();
    server.enqueue({ fail: 'model crashed' });
    const response = await w.responses.create({ model: 'gpt-4o', input: items(), metadata: { chat_id: 'e-5' } });
    expect(response.status).toBe('failed');
    expect(response.error).toEqual({ code: 'server_error', message: 'model crashed' });
    await compressor.drain();
    expect(of('summary:start')).toHaveLength(0);
    expect(of('calibration')).toHaveLength(0);
  });

  test('a history ctxfold cannot read rejects with an InputError naming the message, and nothing is sent', async () => {
    const { w } = summarizing();
    const sent = server.requests.length;
    const error = await rejection(w.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }, 42 as never], metadata: { chat_id: 'e-4' } }));
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).path).toMatch(/^messages\[1\]/);
    expect(server.requests.length).toBe(sent);
  });

  test('a chatId option that returns something else than a string names the option', async () => {
    const { w } = summarizing(() => 42 as never);
    const error = await rejection(w.chat.completions.create({ model: 'gpt-4o', messages: chat() }));
    expect(error).toBeInstanceOf(InputError);
    expect((error as Error).message).toMatch(/^options\.chatId: must return a non-empty string or undefined, got number/);
  });
});

describe('options and client are checked, naming what is wrong', () => {
  const cases: [string, unknown, RegExp][] = [
    ['no options', undefined, /^options: must be an options object/],
    ['no budget', {}, /^options\.maxContextTokens: is required/],
    ['a model of unknown window', { model: 'house-model-7' }, /^options\.maxContextTokens: is required.*"house-model-7" is not known/],
    ['a misspelt option', { maxTokens: 4000 }, /^options\.maxTokens: unknown option; did you mean maxContextTokens\?/],
    ['a wrong value', { maxContextTokens: -1 }, /^options\.maxContextTokens: must be an integer >= 1, got -1/],
    ['a format', { maxContextTokens: 4000, format: 'anthropic' }, /^options\.format: is chosen per call by the wrapper/],
    ['a chatId that is not a function', { maxContextTokens: 4000, chatId: 'c' }, /^options\.chatId: must be a function/],
    ['a compressor that is not one', { compressor: {} }, /^options\.compressor: must be a Compressor/],
    ['a compressor option next to a compressor', { compressor: createCompressor(), keepLast: 2 }, /^options\.keepLast: is a compressor option, but options\.compressor is given/],
  ];
  test.each(cases)('%s', (_name, options, message) => {
    expect(() => withCtxfold(sdkClient(), options as never)).toThrow(message);
    expect(() => withCtxfold(sdkClient(), options as never)).toThrow(InputError);
  });

  test('a model whose window is published gives the budget', () => {
    const w = withCtxfold(sdkClient(), { model: 'gpt-4o-2024-08-06', summarizer: null });
    open.push(compressorOf(w)!);
    expect(compressorOf(w)).toBeDefined();
  });

  test('something that is not an openai client names the package to install; a wrapped client is not wrapped twice', () => {
    expect(() => withCtxfold({ chat: {} } as never, { maxContextTokens: 4000 })).toThrow(/^client: must be a client of the openai package .*npm i openai/);
    const w = withCtxfold(sdkClient(), { maxContextTokens: 4000, summarizer: null });
    open.push(compressorOf(w)!);
    expect(() => withCtxfold(w, { maxContextTokens: 4000 })).toThrow(/^client: is already wrapped by withCtxfold/);
  });
});

describe('chat ids, the given client, shared compressors', () => {
  test('chat id: the option, else metadata.chat_id, else user, else a fingerprint (with one warning per client)', async () => {
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const compressor = createCompressor({ maxContextTokens: 4000, summarizer: null });
      open.push(compressor);
      const ids: string[] = [];
      compressor.on('compressed', (e) => ids.push(e.chatId));
      const byOption = withCtxfold(sdkClient(), { compressor, chatId: (body) => ('user' in body && body.user === 'alice' ? 'from-option' : undefined) });
      const plain = withCtxfold(sdkClient(), { compressor });
      const messages = chat();
      await byOption.chat.completions.create({ model: 'gpt-4o', messages, user: 'alice' });
      await byOption.chat.completions.create({ model: 'gpt-4o', messages, user: 'bob' });
      await plain.chat.completions.create({ model: 'gpt-4o', messages, metadata: { chat_id: 'meta-id' }, user: 'bob' });
      await plain.responses.create({ model: 'gpt-4o', input: items(), user: 'carol' });
      await plain.chat.completions.create({ model: 'gpt-4o', messages });
      await plain.chat.completions.create({ model: 'gpt-4o', messages: messages.slice(0, 40) });
      await new Promise((resolve) => setImmediate(resolve));
      expect(ids.slice(0, 4)).toEqual(['from-option', 'bob', 'meta-id', 'carol']);
      expect(ids[4]).toMatch(/^fp:/);
      expect(ids[5]).toBe(ids[4]);
      const ours = warn.mock.calls.filter((call) => (call[1] as { code?: string } | undefined)?.code === 'CTXFOLD_NO_CHAT_ID');
      expect(ours).toHaveLength(1);
      expect(String(ours[0][0])).toContain('metadata.chat_id');
    } finally {
      warn.mockRestore();
    }
  });

  test('the given client and the caller\'s body are not changed; the wrapper is a client of the same class', async () => {
    const client = sdkClient();
    const own = Object.getOwnPropertyDescriptors(client);
    const chatBefore = client.chat;
    const completionsBefore = client.chat.completions;
    const completionsOwn = Object.getOwnPropertyNames(client.chat.completions);
    const w = withCtxfold(client, { maxContextTokens: 3000, summarizer: null });
    open.push(compressorOf(w)!);
    expect(w).toBeInstanceOf(OpenAI);
    expect(w.baseURL).toBe(client.baseURL);
    expect(w.models).toBe(client.models);
    expect(w.chat.completions).toBeInstanceOf(client.chat.completions.constructor as new () => unknown);
    const messages = chat();
    const body = { model: 'gpt-4o', messages, tools: [{ type: 'function' as const, function: { name: 'f', parameters: {} } }], metadata: { chat_id: 'n-1' } };
    const bodyBefore = structuredClone(body);
    await w.chat.completions.create(body);
    expect(body).toEqual(bodyBefore);
    expect(body.messages).toBe(messages);
    expect((server.requests.at(-1)!.body!.messages as unknown[]).length).toBeLessThan(messages.length);
    // The original client is as it was: its calls send the whole history.
    expect(Object.getOwnPropertyDescriptors(client)).toEqual(own);
    expect(client.chat).toBe(chatBefore);
    expect(client.chat.completions).toBe(completionsBefore);
    expect(Object.getOwnPropertyNames(client.chat.completions)).toEqual(completionsOwn);
    await client.chat.completions.create(body);
    expect((server.requests.at(-1)!.body!.messages as unknown[]).length).toBe(messages.length);
  });

  test('withOptions() on a wrapped client gives a wrapped client on the same compressor; one compressor can serve many clients', async () => {
    const compressor = createCompressor({ maxContextTokens: 3000, summarizer: null });
    open.push(compressor);
    const a = withCtxfold(sdkClient(), { compressor });
    const b = withCtxfold(sdkClient(), { compressor });
    const c = a.withOptions({ timeout: 5000 });
    expect(c.timeout).toBe(5000);
    expect(compressorOf(a)).toBe(compressor);
    expect(compressorOf(b)).toBe(compressor);
    expect(compressorOf(c)).toBe(compressor);
    expect(withCtxfold.compressorOf(c)).toBe(compressor);
    expect(compressorOf({})).toBeUndefined();
    const seen: string[] = [];
    compressor.on('compressed', (e) => seen.push(e.chatId));
    for (const [k, client] of [a, b, c].entries()) await client.chat.completions.create({ model: 'gpt-4o', messages: chat(), metadata: { chat_id: `m-${k}` } });
    expect(seen).toEqual(['m-0', 'm-1', 'm-2']);
    expect((server.requests.at(-1)!.body!.messages as unknown[]).length).toBeLessThan(120);
  });
});
