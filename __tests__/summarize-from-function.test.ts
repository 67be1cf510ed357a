import { summarizeRolling } from '../src/summarize/rolling.js';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { AIMessage, HumanMessage, SystemMessage } from '@langchain/core/messages';
import { generateText } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import OpenAI from 'openai';
import { generateConversation } from '../bench/fixtures/conversation.js';
import { InputError, SummarizerError } from '../src/errors.js';
import type { TranscriptEntry } from '../src/formats/lens.js';
import { createCompressor } from '../src/runtime/compressor.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { summarizerFromFunction, type SummaryFunctionCall } from '../src/summarize/from-function.js';
import { createLlmSummarizer } from '../src/summarize/llm.js';
import { startFakeLlmServer, type FakeLlmServer } from './helpers/fake-llm-server.js';
import { RecordingChatModel } from './helpers/langchain-model.js';

let server: FakeLlmServer;
beforeAll(async () => {
  server = await startFakeLlmServer();
});
afterAll(async () => {
  await server.close();
});

const live = () => new AbortController().signal;

const chat: TranscriptEntry[] = [
  { role: 'user', text: 'Please look up order Q-7781 and tell me where it is.', calls: [], results: [] },
  { role: 'assistant', text: '', calls: [{ id: 'call_1', name: 'lookup_order', arguments: '{"order":"Q-7781"}' }], results: [] },
  { role: 'tool', text: '', calls: [], results: [{ id: 'call_1', content: '{"order":"Q-7781","status":"in transit","depot":"D4"}' }] },
  { role: 'assistant', text: 'Order Q-7781 is in transit from depot D4.', calls: [], results: [] },
];

/** Runs `work`, returning the error it rejected with (undefined when it resolved). */
async function failure(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, but it resolved');
}

describe('summarizerFromFunction: the prompt and the answer', () => {
  test('gets the very prompt createLlmSummarizer posts, as messages and as one string, and the trimmed answer is the summary', async () => {
    // What the LLM summarizer sends for this input, recorded by the loopback server.
    const before = server.requests.length;
    await createLlmSummarizer({ baseURL: server.baseURL, model: 'm', maxTokens: 300 }).summarize({ previousSummary: 'User is a returning customer.', messages: chat, signal: live() });
    const posted = (server.requests[before].body as { messages: Array<{ role: string; content: string }> }).messages;

    const calls: SummaryFunctionCall[] = [];
    const s = summarizerFromFunction(async (call) => {
      calls.push(call);
      return '  Goal: find order Q-7781.  ';
    }, { maxTokens: 300, model: 'my-model' });
    expect(s.name).toBe('function');
    expect(s.model).toBe('my-model');
    expect(s.inputBudgetTokens).toBe(24_000);
    const signal = live();
    await expect(s.summarize({ previousSummary: 'User is a returning customer.', messages: chat, signal })).resolves.toBe('Goal: find order Q-7781.');
    expect(calls).toHaveLength(1);
    const { prompt } = calls[0];
    expect(calls[0].signal).toBe(signal);
    expect(prompt.messages).toEqual(posted);
    expect(prompt.system).toBe(posted[0].content);
    expect(prompt.user).toBe(posted[1].content);
    expect(prompt.text).toBe(`${posted[0].content}\n\n${posted[1].content}`);
    expect(prompt.maxWords).toBe(180);
    expect(prompt.system).toMatch(/at most about 180 words/);
    expect(prompt.user).toContain('lookup_order({"order":"Q-7781"})');
  });

  test('content parts are joined, as the LLM summarizer does', async () => {
    const s = summarizerFromFunction(async () => [{ type: 'text', text: 'Part one. ' }, { type: 'text', text: 'Part two.' }]);
    await expect(s.summarize({ messages: chat, signal: live() })).resolves.toBe('Part one. Part two.');
  });

  test.each([
    ['an empty string', '', 'empty', /empty summary/],
    ['blank text', '  \n\t ', 'empty', /empty summary/],
    ['blank parts', [{ type: 'text', text: ' ' }], 'empty', /empty summary/],
    ['undefined', undefined, 'response', /returned undefined, not the summary text/],
    ['an object', { text: 'hidden in an object' }, 'response', /returned an object/],
    ['a number', 42, 'response', /returned number/],
  ])('%s is a SummarizerError (%s)', async (_label, answer, kind, message) => {
    const s = summarizerFromFunction(async () => answer, { name: 'mine' });
    const error = await failure(s.summarize({ messages: chat, signal: live() }));
    expect(error).toBeInstanceOf(SummarizerError);
    expect(error).toMatchObject({ summarizer: 'mine', failure: kind });
    expect((error as Error).message).toMatch(message);
  });

  test('an error the function throws becomes a SummarizerError carrying it', async () => {
    const cause = new Error('quota exceeded');
    const error = await failure(summarizerFromFunction(async () => { throw cause; }).summarize({ messages: chat, signal: live() }));
    expect(error).toBeInstanceOf(SummarizerError);
    expect(error).toMatchObject({ failure: 'other', cause });
    expect((error as Error).message).toMatch(/quota exceeded/);
  });

  test('options are checked, naming the option', () => {
    expect(() => summarizerFromFunction('nope' as never)).toThrow(/^fn: must be a function/);
    expect(() => summarizerFromFunction(async () => 'x', { maxTokens: 0 })).toThrow(InputError);
    expect(() => summarizerFromFunction(async () => 'x', { maxTokens: 0 })).toThrow(/options\.maxTokens: must be an integer >= 1, got 0/);
    expect(() => summarizerFromFunction(async () => 'x', { inputBudgetTokens: 1.5 })).toThrow(/options\.inputBudgetTokens/);
    expect(() => summarizerFromFunction(async () => 'x', { name: '' })).toThrow(/options\.name: must be a non-empty string/);
    expect(() => summarizerFromFunction(async () => 'x', { maxWords: 10 } as never)).toThrow(/options\.maxWords: unknown option/);
  });
});

describe('summarizerFromFunction: abort', () => {
  test('the job\'s signal reaches the function; aborting rejects with its reason at once, even if the function ignores it', async () => {
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    let release = () => {};
    // A function that never looks at the signal and would answer only when released.
    const s = summarizerFromFunction(async ({ signal }) => {
      seen = signal;
      await new Promise<void>((resolve) => { release = resolve; });
      return 'too late';
    });
    const work = s.summarize({ messages: chat, signal: controller.signal });
    await new Promise((resolve) => setImmediate(resolve));
    const reason = new Error('job cancelled');
    controller.abort(reason);
    await expect(work).rejects.toBe(reason);
    expect(seen).toBe(controller.signal);
    expect(seen?.aborted).toBe(true);
    release();
  });

  test('an already aborted signal never calls the function', async () => {
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    let called = false;
    const s = summarizerFromFunction(async () => {
      called = true;
      return 'x';
    });
    await expect(s.summarize({ messages: chat, signal: controller.signal })).rejects.toThrow('gone');
    expect(called).toBe(false);
  });
});

describe('summarizerFromFunction with real SDKs', () => {
  test('AI SDK generateText (system + prompt) with MockLanguageModelV3: the model gets the system and user prompt', async () => {
    const model = new MockLanguageModelV3({
      modelId: 'mock-summary',
      doGenerate: async () => ({
        content: [{ type: 'text', text: 'Order Q-7781 is in transit (depot D4).' }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } },
        warnings: [],
      }),
    });
    const s = summarizerFromFunction(async ({ prompt, signal }) => {
      const { text } = await generateText({ model, system: prompt.system, prompt: prompt.user, abortSignal: signal, maxRetries: 0 });
      return text;
    }, { model: 'mock-summary' });
    await expect(s.summarize({ messages: chat, signal: live() })).resolves.toBe('Order Q-7781 is in transit (depot D4).');
    expect(model.doGenerateCalls).toHaveLength(1);
    const prompt = model.doGenerateCalls[0].prompt;
    expect(prompt.map((m) => m.role)).toEqual(['system', 'user']);
    expect(prompt[0].content).toMatch(/DATA to summarize/);
    expect(JSON.stringify(prompt[1].content)).toContain('Q-7781');
  });

  test('AI SDK: aborting the job aborts the model call', async () => {
    let modelSignal: AbortSignal | undefined;
    const model = new MockLanguageModelV3({
      doGenerate: async (options) => {
        modelSignal = options.abortSignal;
        await new Promise((_, reject) => options.abortSignal?.addEventListener('abort', () => reject(options.abortSignal?.reason), { once: true }));
        throw new Error('unreachable');
      },
    });
    const s = summarizerFromFunction(async ({ prompt, signal }) => (await generateText({ model, system: prompt.system, prompt: prompt.user, abortSignal: signal, maxRetries: 0 })).text);
    const controller = new AbortController();
    const work = s.summarize({ messages: chat, signal: controller.signal });
    while (!modelSignal) await new Promise((resolve) => setImmediate(resolve));
    const reason = new Error('job timed out');
    controller.abort(reason);
    await expect(work).rejects.toBe(reason);
    expect(modelSignal.aborted).toBe(true);
  });

  test('openai client against the loopback server: the request carries the prompt, the answer is the summary', async () => {
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: 'test-key', maxRetries: 0 });
    const s = summarizerFromFunction(async ({ prompt, signal }) => {
      const completion = await client.chat.completions.create({ model: 'summary-model', messages: [...prompt.messages], temperature: 0 }, { signal });
      return completion.choices[0].message.content;
    });
    const before = server.requests.length;
    server.enqueue({ content: 'Order Q-7781: in transit.' });
    await expect(s.summarize({ messages: chat, signal: live() })).resolves.toBe('Order Q-7781: in transit.');
    const body = server.requests[before].body as { model: string; messages: Array<{ role: string; content: string }> };
    expect(body.model).toBe('summary-model');
    expect(body.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(body.messages[1].content).toContain('<transcript messages="4">');
  });

  test('openai client: a blank answer is a SummarizerError, and an abort ends the hanging request', async () => {
    const client = new OpenAI({ baseURL: server.baseURL, apiKey: 'test-key', maxRetries: 0 });
    const s = summarizerFromFunction(async ({ prompt, signal }) => (await client.chat.completions.create({ model: 'm', messages: [...prompt.messages] }, { signal })).choices[0].message.content);
    server.enqueue({ content: '   ' });
    await expect(s.summarize({ messages: chat, signal: live() })).rejects.toMatchObject({ failure: 'empty' });

    server.enqueue({ hang: true });
    const controller = new AbortController();
    const before = server.requests.length;
    const work = s.summarize({ messages: chat, signal: controller.signal });
    while (server.requests.length === before) await new Promise((resolve) => setTimeout(resolve, 5));
    const reason = new Error('stop now');
    controller.abort(reason);
    await expect(work).rejects.toBe(reason);
  });
});

describe('summarizerFromFunction with a LangChain chat model', () => {
  test('the prompt\'s messages go to model.invoke as they are; the answer\'s content is the summary', async () => {
    const model = new RecordingChatModel(() => new AIMessage({ content: [{ type: 'text', text: 'Order Q-7781: in transit.' }] }));
    const summarizer = summarizerFromFunction(async ({ prompt, signal }) => (await model.invoke([...prompt.messages], { signal })).content);
    await expect(summarizer.summarize({ messages: chat, signal: live() })).resolves.toBe('Order Q-7781: in transit.');
    const [system, user] = model.received[0];
    expect(system).toBeInstanceOf(SystemMessage);
    expect(user).toBeInstanceOf(HumanMessage);
    expect(String(user.content)).toContain('<transcript messages="4">');
  });
});

describe('summarizerFromFunction: the fact check', () => {
  const entries = [
    { role: 'user' as const, text: 'Please look up account AC-48213 and the order placed on 2025-03-14.', calls: [], results: [] },
    { role: 'tool' as const, text: '', calls: [], results: [{ id: 'c1', name: 'lookup', content: '{"account_id":"AC-48213","email":"pat.lee@example.org","total":"$129.40"}' }] },
  ];
  test('identifiers the answer left out are appended; checkFacts: false keeps the answer as it is', async () => {
    const fn = async () => 'The user asked about an account.';
    const checked = await summarizeRolling(summarizerFromFunction(fn), { messages: entries, signal: new AbortController().signal });
    for (const value of ['AC-48213', '2025-03-14', 'pat.lee@example.org', '$129.40']) expect(checked.summary).toContain(value);
    expect(checked.summary.startsWith('The user asked about an account.\n\nFacts:')).toBe(true);
    expect(checked.factsKept).toBe(checked.factsSeen);
    const plain = await summarizeRolling(summarizerFromFunction(fn, { checkFacts: false }), { messages: entries, signal: new AbortController().signal });
    expect(plain.summary).toBe('The user asked about an account.');
    expect(plain.factsSeen).toBeUndefined();
  });
  test('checkFacts must be a boolean', () => {
    expect(() => summarizerFromFunction(async () => 'x', { checkFacts: 'yes' as unknown as boolean })).toThrow(/options\.checkFacts: must be true or false/);
  });
});

describe('summarizerFromFunction in createCompressor', () => {
  test('a function that throws leaves the previous summary in force', async () => {
    const store = new MemoryStore();
    let mode: 'ok' | 'throw' = 'ok';
    let calls = 0;
    const summarizer = summarizerFromFunction(async ({ prompt }) => {
      calls++;
      if (mode === 'throw') throw new Error('model unavailable');
      return `summary #${calls} of ${prompt.user.length} chars`;
    });
    const c = createCompressor({ maxContextTokens: 6000, compressionThresholdTokens: 3000, keepLast: 4, summarizer, store });
    const failed: unknown[] = [];
    c.on('summary:failed', (e) => failed.push(e.error));
    try {
      const history = generateConversation({ messages: 160, seed: 11 });
      const first = history.slice(0, 120);
      const r1 = await c.compress('chat-f', first);
      c.afterResponse('chat-f', first, r1.report);
      await c.drain();
      const v1 = await store.get('chat-f');
      expect(v1?.version).toBe(1);
      expect(v1?.summarizer).toBe('function');
      // The function's answer, then the facts it left out, appended from the ledger (checkFacts).
      expect(v1?.summary).toMatch(/^summary #\d+ of \d+ chars\n\nFacts:\n- \(\d+ of \d+ facts kept, \d+ messages read(?:; [^)]*)?\)\n/);

      // Later the function fails: the job fails, nothing is committed, v1 is still served.
      mode = 'throw';
      const r2 = await c.compress('chat-f', history);
      expect(r2.report.summarize).toBeDefined();
      c.afterResponse('chat-f', history, r2.report);
      await c.drain();
      expect(failed).toHaveLength(1);
      expect(failed[0]).toBeInstanceOf(SummarizerError);
      expect((failed[0] as Error).message).toMatch(/model unavailable/);
      expect(await store.get('chat-f')).toEqual(v1);
      const r3 = await c.compress('chat-f', history);
      expect(r3.report.summary.applied).toBe(true);
      expect(r3.messages.some((m) => typeof m.content === 'string' && m.content.includes(v1!.summary))).toBe(true);
    } finally {
      await c.close();
    }
  });

  test('a job timeout aborts the function through its signal', async () => {
    let aborted = false;
    const summarizer = summarizerFromFunction(({ signal }) => new Promise((_, reject) => {
      signal.addEventListener('abort', () => {
        aborted = true;
        reject(signal.reason);
      }, { once: true });
    }));
    // Long enough that the job reaches the function before it times out, even on a loaded machine.
    const c = createCompressor({ maxContextTokens: 6000, compressionThresholdTokens: 3000, keepLast: 4, summarizer, jobTimeoutMs: 2000 });
    const failed: unknown[] = [];
    c.on('summary:failed', (e) => failed.push(e.error));
    try {
      const history = generateConversation({ messages: 120, seed: 12 });
      const r = await c.compress('chat-t', history);
      c.afterResponse('chat-t', history, r.report);
      await c.drain();
      expect(aborted).toBe(true);
      expect(failed).toHaveLength(1);
    } finally {
      await c.close();
    }
  });
});
