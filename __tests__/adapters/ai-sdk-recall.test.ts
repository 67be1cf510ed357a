import { afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { ctxfoldMiddleware, type CtxfoldMiddleware } from '../../src/adapters/ai-sdk/index.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import { createExtractiveSummarizer } from '../../src/summarize/extractive.js';
import { loadAi6, loadAi7, textResult, textStreamParts, toolCallsResult, usage, type Sdk } from '../helpers/ai-sdk-sdk.js';
import { providerPromptProblems } from '../helpers/ai-sdk-provider-prompt.js';

/**
 * With `recall` on, the AI SDK middleware offers `generateText` calls the `ctxfold_recall` tool and
 * answers the model's recall calls itself (the model is called again with the original messages'
 * text); `generateText` and the application see the last result only. Streamed calls are offered
 * no tool and told of none.
 */

const counter = createTokenCounter();
const FACT = 'Noted: the deploy script reads its settings from /etc/lantern/app.toml, key LX-5520.';
const open: CtxfoldMiddleware[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((m) => m.compressor.close(200)));
});

type Msg = { role: 'user' | 'assistant'; content: string };
const system = 'You are a careful assistant.';

/** `turns` user/assistant pairs (about 70 tokens each; the system prompt goes in `system`); the first answer holds `FACT`. */
function history(turns: number): Msg[] {
  const out: Msg[] = [];
  for (let t = 0; t < turns; t++) {
    out.push({ role: 'user', content: `Question ${t} about module ${t % 7}. ${'Some filler words for the question. '.repeat(8)}` });
    out.push({ role: 'assistant', content: t === 0 ? FACT : `Answer ${t}. ${'Some filler words for the answer. '.repeat(8)}` });
  }
  return out;
}

type Result = ReturnType<typeof textResult> | ReturnType<typeof toolCallsResult> | Error;

/** ai 7 declares `engines.node >= 22` and is only ever loaded under it. */
const NODE_MAJOR = Number(process.versions.node.split('.')[0]);
const SDKS: [string, () => Promise<Sdk>][] = [['ai 6 (V3)', loadAi6], ...(NODE_MAJOR >= 22 ? [['ai 7 (V4)', loadAi7] as [string, () => Promise<Sdk>]] : [])];
let sdk: Sdk;

/** A model answering from a script (each call the next result; `ok <n>` when it runs out), keeping every call's options. */
function scriptedModel(...script: Result[]) {
  const calls: { prompt: unknown[]; tools?: { name: string }[]; toolChoice?: unknown }[] = [];
  const model = new sdk.MockModel({
    modelId: 'gpt-4o',
    doGenerate: async (options: { prompt: unknown; tools?: unknown; toolChoice?: unknown }) => {
      calls.push({ prompt: structuredClone(options.prompt) as unknown[], tools: options.tools as { name: string }[] | undefined, toolChoice: options.toolChoice });
      const next = script.shift() ?? textResult(`ok ${calls.length}`, 100);
      if (next instanceof Error) throw next;
      return next as never;
    },
  });
  return { model, calls };
}

/** A model streaming from a script (each call the next list of parts; a text when it runs out), keeping every call's options. */
function streamingModel(script: (unknown[] | Error)[]) {
  const calls: { prompt: unknown[]; tools?: { name: string }[]; toolChoice?: unknown }[] = [];
  const model = new sdk.MockModel({
    modelId: 'gpt-4o',
    doStream: async (options: { prompt: unknown; tools?: unknown; toolChoice?: unknown }) => {
      calls.push({ prompt: structuredClone(options.prompt) as unknown[], tools: options.tools as { name: string }[] | undefined, toolChoice: options.toolChoice });
      const next = script.shift() ?? textStreamParts(`ok ${calls.length}`, 100);
      if (next instanceof Error) throw next;
      return { stream: sdk.simulateReadableStream({ chunks: next }) };
    },
  });
  return { model, calls };
}

/** The stream parts of one tool call (input streamed in two deltas), then a `tool-calls` finish. */
function toolStreamParts(id: string, name: string, input: unknown): unknown[] {
  const text = JSON.stringify(input);
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'tool-input-start', id, toolName: name },
    { type: 'tool-input-delta', id, delta: text.slice(0, 5) },
    { type: 'tool-input-delta', id, delta: text.slice(5) },
    { type: 'tool-input-end', id },
    { type: 'tool-call', toolCallId: id, toolName: name, input: text },
    { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(100) },
  ];
}
const recallStreamParts = (id: string, input: unknown) => toolStreamParts(id, 'ctxfold_recall', input);

/** A middleware with recall on whose chat "a" already has a summary over its early messages. */
async function foldedMiddleware(messages: Msg[], rounds?: number) {
  // A summary held to a small size, so the early fact is not in it and only recall can bring it back.
  const mw = ctxfoldMiddleware({ maxContextTokens: 2000, keepLast: 4, recall: rounds === undefined ? true : { rounds }, counter, specificationVersion: sdk.spec, summarizer: createExtractiveSummarizer({ maxSummaryTokens: 300 }) });
  open.push(mw);
  const first = scriptedModel();
  await sdk.generateText({ model: sdk.wrapLanguageModel({ model: first.model, middleware: mw }), system, messages: messages as never, providerOptions: { ctxfold: { chatId: 'a' } } });
  await mw.compressor.drain();
  return mw;
}

/** The tool choice the SDK sends by default (ai 6: none given; ai 7: `{ type: 'auto' }`), checked to be no `none`. */
function sdkDefault(calls: readonly { toolChoice?: unknown }[]): unknown {
  const first = calls[0].toolChoice;
  expect([undefined, { type: 'auto' }]).toContainEqual(first);
  return first;
}

const ask = (messages: Msg[]): Msg[] => [...messages, { role: 'user', content: 'Where are the settings?' }];
const recallCall = (id: string, input: unknown) => toolCallsResult([{ id, name: 'ctxfold_recall', input }], 100);

describe.each(SDKS)('ctxfoldMiddleware answers recall calls of generateText, %s', (_name, load) => {
  beforeAll(async () => {
    sdk = await load();
  });

  test('the model is called again with the original text; generateText gets the last answer, no recall call', async () => {
    const messages = history(24);
    const mw = await foldedMiddleware(messages);
    const { model, calls } = scriptedModel(recallCall('r1', { query: 'LX-5520' }), textResult('The key is LX-5520.', 100));
    const result = await sdk.generateText({ model: sdk.wrapLanguageModel({ model, middleware: mw }), system, messages: ask(messages) as never, providerOptions: { ctxfold: { chatId: 'a' } } });

    expect(result.text).toBe('The key is LX-5520.');
    expect(result.toolCalls).toEqual([]);
    expect(calls).toHaveLength(2);
    const [first, second] = calls;
    expect(JSON.stringify(first.prompt)).not.toContain('deploy script reads its settings');
    expect(JSON.stringify(first.prompt)).toContain('ctxfold_recall');
    expect(first.tools?.map((t) => t.name)).toEqual(['ctxfold_recall']);
    const tail = second.prompt.slice(-2) as { role: string; content: Record<string, unknown>[] }[];
    expect(tail[0]).toEqual({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'r1', toolName: 'ctxfold_recall', input: { query: 'LX-5520' } }] });
    expect(tail[1].role).toBe('tool');
    expect(tail[1].content[0]).toMatchObject({ type: 'tool-result', toolCallId: 'r1', toolName: 'ctxfold_recall', output: { type: 'text' } });
    expect(JSON.stringify(tail[1].content[0].output)).toContain('/etc/lantern/app.toml');
    // The round's prompt is a provider prompt in shape, and every call in it is answered right after.
    expect(providerPromptProblems(second.prompt)).toEqual([]);
    const prompt = second.prompt as { role: string; content: Record<string, unknown>[] | string }[];
    prompt.forEach((m, k) => {
      if (m.role !== 'assistant' || typeof m.content === 'string') return;
      const opened = m.content.filter((p) => p.type === 'tool-call').map((p) => p.toolCallId);
      if (opened.length === 0) return;
      const next = prompt[k + 1];
      const answered = next?.role === 'tool' && typeof next.content !== 'string' ? next.content.map((p) => p.toolCallId) : [];
      expect(new Set(answered)).toEqual(new Set(opened));
    });
  });

  test('usage adds up every call made for the request (each is billed); the chat is calibrated on the last call alone', async () => {
    const messages = history(24);
    const mw = await foldedMiddleware(messages);
    const samples: { billed: number }[] = [];
    mw.compressor.on('calibration', (e) => samples.push(e));
    const { model } = scriptedModel(toolCallsResult([{ id: 'r1', name: 'ctxfold_recall', input: { query: 'LX-5520' } }], 300), textResult('The key is LX-5520.', 700));
    const result = await sdk.generateText({ model: sdk.wrapLanguageModel({ model, middleware: mw }), system, messages: ask(messages) as never, providerOptions: { ctxfold: { chatId: 'a' } } });
    expect(result.text).toBe('The key is LX-5520.');
    expect(result.usage).toMatchObject({ inputTokens: 1000, outputTokens: 10 });
    expect(samples.map((s) => s.billed)).toEqual([700]);
  });

  test("the application's own tools stay, and a result mixing them with a recall call reaches it without the recall call", async () => {
    const messages = history(24);
    const mw = await foldedMiddleware(messages);
    const mixed = toolCallsResult([{ id: 'r1', name: 'ctxfold_recall', input: { query: 'LX-5520' } }, { id: 'w1', name: 'weather', input: { city: 'Oslo' } }], 100);
    const { model, calls } = scriptedModel(mixed);
    const weather = sdk.tool({ description: 'Weather in a city', inputSchema: sdk.jsonSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }) });
    const result = await sdk.generateText({ model: sdk.wrapLanguageModel({ model, middleware: mw }), system, messages: ask(messages) as never, tools: { weather }, providerOptions: { ctxfold: { chatId: 'a' } } });

    expect(calls).toHaveLength(1);
    expect(calls[0].tools?.map((t) => t.name)).toEqual(['weather', 'ctxfold_recall']);
    expect(result.toolCalls.map((c: { toolName: string }) => c.toolName)).toEqual(['weather']);
    expect(result.finishReason).toBe('tool-calls');
  });

  test('past the rounds a reply that only recalls is answered once more and the model called with toolChoice none', async () => {
    const messages = history(24);
    const mw = await foldedMiddleware(messages, 1);
    const { model, calls } = scriptedModel(recallCall('r1', { query: 'nothing-matches' }), recallCall('r2', { ids: ['#2'] }), textResult('The key is LX-5520.', 100));
    const result = await sdk.generateText({ model: sdk.wrapLanguageModel({ model, middleware: mw }), system, messages: ask(messages) as never, providerOptions: { ctxfold: { chatId: 'a' } } });

    expect(calls.map((c) => c.toolChoice)).toEqual([sdkDefault(calls), sdkDefault(calls), { type: 'none' }]);
    // The final call answers the recall call it follows, its tools still listed.
    expect(JSON.stringify(calls[2].prompt)).toContain('/etc/lantern/app.toml');
    expect(calls[2].tools?.map((t) => t.name)).toEqual(['ctxfold_recall']);
    expect(result.text).toBe('The key is LX-5520.');
    expect(result.toolCalls).toEqual([]);
  });

  test('a final call the provider refuses (an error with statusCode 400) falls back to the result before it; an error without a status is thrown', async () => {
    const messages = history(24);
    const mw = await foldedMiddleware(messages, 0);
    const refusal = Object.assign(new Error('tool_choice none is not supported'), { statusCode: 400 });
    const { model, calls } = scriptedModel(recallCall('r1', { ids: ['#2'] }), refusal);
    const result = await sdk.generateText({ model: sdk.wrapLanguageModel({ model, middleware: mw }), system, messages: ask(messages) as never, providerOptions: { ctxfold: { chatId: 'a' } }, maxRetries: 0 });
    expect(calls.map((c) => c.toolChoice)).toEqual([sdkDefault(calls), { type: 'none' }]);
    expect(result.toolCalls).toEqual([]);
    expect(result.finishReason).toBe('stop');
    expect(result.usage.inputTokens).toBe(100);

    const broken = scriptedModel(recallCall('r1', { ids: ['#2'] }), new Error('socket hang up'));
    await expect(sdk.generateText({ model: sdk.wrapLanguageModel({ model: broken.model, middleware: mw }), system, messages: ask(messages) as never, providerOptions: { ctxfold: { chatId: 'a' } }, maxRetries: 0 })).rejects.toThrow('socket hang up');
  });

  test('a final reply that recalls anyway: the recall call is removed and the result finishes for stop', async () => {
    const messages = history(24);
    const mw = await foldedMiddleware(messages, 0);
    const { model, calls } = scriptedModel(recallCall('r1', { query: 'LX-5520' }), recallCall('r2', { ids: ['#2'] }));
    const result = await sdk.generateText({ model: sdk.wrapLanguageModel({ model, middleware: mw }), system, messages: ask(messages) as never, providerOptions: { ctxfold: { chatId: 'a' } } });

    expect(calls.map((c) => c.toolChoice)).toEqual([sdkDefault(calls), { type: 'none' }]);
    expect(result.toolCalls).toEqual([]);
    expect(result.finishReason).toBe('stop');
    expect(result.response.messages.some((m: unknown) => JSON.stringify(m).includes('ctxfold_recall'))).toBe(false);
  });

  test('streamText past the rounds: a stream that only recalls is answered once more and the model streamed with toolChoice none', async () => {
    const messages = history(24);
    const mw = await foldedMiddleware(messages, 0);
    const { model, calls } = streamingModel([recallStreamParts('r1', { ids: ['#2'] }), textStreamParts('The key is LX-5520.', 100)]);
    const result = sdk.streamText({ model: sdk.wrapLanguageModel({ model, middleware: mw }), system, messages: ask(messages) as never, providerOptions: { ctxfold: { chatId: 'a' } } });
    expect(await result.text).toBe('The key is LX-5520.');
    expect(await result.toolCalls).toEqual([]);
    expect(calls.map((c) => c.toolChoice)).toEqual([sdkDefault(calls), { type: 'none' }]);
    expect(JSON.stringify(calls[1].prompt)).toContain('/etc/lantern/app.toml');
    expect(providerPromptProblems(calls[1].prompt)).toEqual([]);
  });

  test('streamText past the rounds: a final call the provider refuses (statusCode 400) falls back to the round before it, without its recall call', async () => {
    const messages = history(24);
    const mw = await foldedMiddleware(messages, 0);
    const refusal = Object.assign(new Error('tool_choice none is not supported'), { statusCode: 400 });
    const { model, calls } = streamingModel([recallStreamParts('r1', { ids: ['#2'] }), refusal]);
    const result = sdk.streamText({ model: sdk.wrapLanguageModel({ model, middleware: mw }), system, messages: ask(messages) as never, providerOptions: { ctxfold: { chatId: 'a' } }, maxRetries: 0 });
    expect(await result.text).toBe('');
    expect(await result.toolCalls).toEqual([]);
    expect(await result.finishReason).toBe('stop');
    expect(calls.map((c) => c.toolChoice)).toEqual([sdkDefault(calls), { type: 'none' }]);
    expect((await result.usage).inputTokens).toBe(100);
  });

  test('streamText: a stream opening with a recall call is answered, and the application gets the next round as one stream', async () => {
    const messages = history(24);
    const mw = await foldedMiddleware(messages);
    const { model, calls } = streamingModel([recallStreamParts('r1', { query: 'LX-5520' }), textStreamParts('The key is LX-5520.', 100)]);
    const result = sdk.streamText({ model: sdk.wrapLanguageModel({ model, middleware: mw }), system, messages: ask(messages) as never, providerOptions: { ctxfold: { chatId: 'a' } } });
    expect(await result.text).toBe('The key is LX-5520.');
    expect(await result.toolCalls).toEqual([]);
    expect(await result.finishReason).toBe('stop');
    expect(calls).toHaveLength(2);
    expect(calls[0].tools?.map((t) => t.name)).toEqual(['ctxfold_recall']);
    expect(JSON.stringify(calls[0].prompt)).toContain('ctxfold_recall');
    const tail = calls[1].prompt.slice(-2) as { role: string; content: Record<string, unknown>[] }[];
    expect(tail[0]).toEqual({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'r1', toolName: 'ctxfold_recall', input: { query: 'LX-5520' } }] });
    expect(JSON.stringify(tail[1].content[0].output)).toContain('/etc/lantern/app.toml');
    expect(providerPromptProblems(calls[1].prompt)).toEqual([]);
  });

  test('streamText: usage adds up every round streamed for the request; the chat is calibrated on the last round alone', async () => {
    const messages = history(24);
    const mw = await foldedMiddleware(messages);
    const samples: { billed: number }[] = [];
    mw.compressor.on('calibration', (e) => samples.push(e));
    const recall = recallStreamParts('r1', { query: 'LX-5520' }).map((p) => ((p as { type: string }).type === 'finish' ? { ...(p as object), usage: usage(300) } : p));
    const { model } = streamingModel([recall, textStreamParts('The key is LX-5520.', 700)]);
    const result = sdk.streamText({ model: sdk.wrapLanguageModel({ model, middleware: mw }), system, messages: ask(messages) as never, providerOptions: { ctxfold: { chatId: 'a' } } });
    expect(await result.text).toBe('The key is LX-5520.');
    expect(await result.usage).toMatchObject({ inputTokens: 1000, outputTokens: 10 });
    expect(samples.map((s) => s.billed)).toEqual([700]);
  });

  test('streamText: text first streams through at once; a recall call after it is removed, not answered', async () => {
    const messages = history(24);
    const mw = await foldedMiddleware(messages);
    // The model holds its stream after the first text delta until the application has read it: a
    // middleware that buffered the answer would never let this test finish.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const parts = [...textStreamParts('Let me check. ', 100).slice(0, -1), ...recallStreamParts('r1', { query: 'LX-5520' }).slice(1)];
    const calls: { prompt: unknown[] }[] = [];
    const model = new sdk.MockModel({
      modelId: 'gpt-4o',
      doStream: async (options: { prompt: unknown[] }) => {
        calls.push({ prompt: options.prompt });
        let k = 0;
        return {
          stream: new ReadableStream({
            async pull(controller) {
              if (k === parts.length) return controller.close();
              const part = parts[k++];
              controller.enqueue(part);
              if ((part as { type: string }).type === 'text-delta') await gate;
            },
          }),
        };
      },
    });
    const result = sdk.streamText({ model: sdk.wrapLanguageModel({ model, middleware: mw }), system, messages: ask(messages) as never, providerOptions: { ctxfold: { chatId: 'a' } } });
    const seen: string[] = [];
    for await (const text of result.textStream) {
      seen.push(text);
      release();
    }
    expect(seen.join('')).toBe('Let me check. ');
    expect(await result.toolCalls).toEqual([]);
    expect(await result.finishReason).toBe('stop');
    expect(calls).toHaveLength(1);
  });

  test("streamText: a recall call mixed with the application's call reaches it without the recall call", async () => {
    const messages = history(24);
    const mw = await foldedMiddleware(messages);
    const mixed = [...recallStreamParts('r1', { query: 'LX-5520' }).slice(0, -1), ...toolStreamParts('w1', 'weather', { city: 'Oslo' }).slice(1)];
    const { model, calls } = streamingModel([mixed]);
    const weather = sdk.tool({ description: 'Weather in a city', inputSchema: sdk.jsonSchema({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }) });
    const result = sdk.streamText({ model: sdk.wrapLanguageModel({ model, middleware: mw }), system, messages: ask(messages) as never, tools: { weather }, providerOptions: { ctxfold: { chatId: 'a' } } });
    expect((await result.toolCalls).map((c: { toolName: string }) => c.toolName)).toEqual(['weather']);
    expect(await result.finishReason).toBe('tool-calls');
    expect(calls).toHaveLength(1);
  });

  test('streamText: a round that fails errors the stream (reading it throws the error; nothing of the recall round was shown)', async () => {
    const messages = history(24);
    const mw = await foldedMiddleware(messages);
    let n = 0;
    const model = new sdk.MockModel({
      modelId: 'gpt-4o',
      doStream: async () => {
        if (++n > 1) throw new Error('model unavailable');
        return { stream: sdk.simulateReadableStream({ chunks: recallStreamParts('r1', { query: 'LX-5520' }) }) };
      },
    });
    const result = sdk.streamText({ model: sdk.wrapLanguageModel({ model, middleware: mw }), system, messages: ask(messages) as never, providerOptions: { ctxfold: { chatId: 'a' } }, onError: () => undefined });
    const types: string[] = [];
    const read = async () => {
      for await (const part of result.fullStream) types.push((part as { type: string }).type);
    };
    await expect(read()).rejects.toThrow('model unavailable');
    expect(n).toBe(2);
    expect(types.some((t) => t.startsWith('tool-'))).toBe(false);
  });

  test('with recall off nothing changes: no tool, and a recall-looking call reaches the application', async () => {
    const mw = ctxfoldMiddleware({ maxContextTokens: 2000, keepLast: 4, counter, specificationVersion: sdk.spec });
    open.push(mw);
    const { model, calls } = scriptedModel(recallCall('r1', { query: 'x' }));
    const result = await sdk.generateText({ model: sdk.wrapLanguageModel({ model, middleware: mw }), system, messages: ask(history(3)) as never, providerOptions: { ctxfold: { chatId: 'b' } } });
    expect(calls[0].tools).toBeUndefined();
    expect(result.toolCalls.map((c: { toolName: string }) => c.toolName)).toEqual(['ctxfold_recall']);
  });
});
