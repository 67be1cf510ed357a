import { afterEach, describe, expect, jest, test } from '@jest/globals';
import { generateText, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { contextWindowOf, ctxfoldMiddleware } from '../../src/adapters/ai-sdk/index.js';
import type { CtxfoldMiddleware } from '../../src/adapters/ai-sdk/index.js';
import { watchFinish, inputTokensOf } from '../../src/adapters/ai-sdk/usage.js';
import { asProviderPrompt } from '../../src/adapters/ai-sdk/provider-prompt.js';
import { InputError } from '../../src/errors.js';
import { createCompressor } from '../../src/runtime/compressor.js';
import type { CompressReport } from '../../src/runtime/compress.js';
import { loadAi6, textResult } from '../helpers/ai-sdk-sdk.js';
import { mutationGuard, providerPromptProblems, type GuardLog } from '../helpers/ai-sdk-provider-prompt.js';
import { adapterScenarios, modelMessages, upToLastReply } from '../helpers/ai-sdk-suite.js';

describe('ctxfoldMiddleware with ai 6 (LanguageModelV3, MockLanguageModelV3)', () => {
  adapterScenarios(loadAi6);
});

const open: CtxfoldMiddleware[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((m) => m.compressor.close(200)));
});
const track = (mw: CtxfoldMiddleware) => {
  open.push(mw);
  return mw;
};

/** Runs one generateText call through `mw` on a model named `modelId`; returns the report and what the model got. */
async function callOnce(mw: CtxfoldMiddleware, options: { modelId?: string; messages?: Record<string, unknown>[]; providerOptions?: Record<string, Record<string, string>> | null; maxOutputTokens?: number } = {}) {
  const model = new MockLanguageModelV3({ modelId: options.modelId ?? 'gpt-4o', doGenerate: textResult('ok', 10) as never });
  const reports: CompressReport[] = [];
  const ids: string[] = [];
  const off = mw.compressor.on('compressed', (e) => {
    reports.push(e.report);
    ids.push(e.chatId);
  });
  try {
    await generateText({ model: wrapLanguageModel({ model, middleware: mw }), messages: (options.messages ?? [{ role: 'user', content: 'hi' }]) as never, providerOptions: options.providerOptions === null ? undefined : options.providerOptions ?? { ctxfold: { chatId: 'one' } }, maxOutputTokens: options.maxOutputTokens });
  } finally {
    off();
  }
  return { report: reports[0], chatId: ids[0], prompt: model.doGenerateCalls[0]?.prompt };
}

describe('the chat id of a call', () => {
  test('defaults to providerOptions.ctxfold.chatId', async () => {
    const mw = track(ctxfoldMiddleware({ summarizer: null }));
    expect((await callOnce(mw, { providerOptions: { ctxfold: { chatId: 'chat-7' } } })).chatId).toBe('chat-7');
  });

  test('options.chatId(params) reads it from the params', async () => {
    const mw = track(ctxfoldMiddleware({ summarizer: null, chatId: (params) => String(params.headers?.['x-chat'] ?? 'none') }));
    const model = new MockLanguageModelV3({ modelId: 'gpt-4o', doGenerate: textResult('ok', 10) as never });
    const ids: string[] = [];
    mw.compressor.on('compressed', (e) => ids.push(e.chatId));
    await generateText({ model: wrapLanguageModel({ model, middleware: mw }), prompt: 'hi', headers: { 'x-chat': 'from-header' } });
    expect(ids).toEqual(['from-header']);
  });

  test('without one: a fingerprint of the opening, and one warning naming providerOptions.ctxfold.chatId', async () => {
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const mw = track(ctxfoldMiddleware({ summarizer: null }));
      const a = await callOnce(mw, { providerOptions: null });
      const b = await callOnce(mw, { providerOptions: null });
      expect(a.chatId).toMatch(/^fp:/);
      expect(b.chatId).toBe(a.chatId);
      const mine = warn.mock.calls.filter((c) => String(c[0]).includes('chat id'));
      expect(mine).toHaveLength(1);
      expect(String(mine[0][0])).toContain('providerOptions: { ctxfold: { chatId } }');
    } finally {
      warn.mockRestore();
    }
  });

  test('options.chatId returning something other than a non-empty string or undefined is an InputError naming it', async () => {
    const mw = track(ctxfoldMiddleware({ summarizer: null, chatId: () => '' }));
    await expect(callOnce(mw)).rejects.toThrow(/^options\.chatId: must return a non-empty string or undefined, got ""$/);
  });
});

describe('the window: maxContextTokens, else the model\'s published window', () => {
  test('a known model id (dated snapshot) gives its window; maxOutputTokens is the reply reserve', async () => {
    const mw = track(ctxfoldMiddleware({ summarizer: null }));
    const { report } = await callOnce(mw, { modelId: 'gpt-4o-2024-08-06', maxOutputTokens: 1000 });
    expect(contextWindowOf('gpt-4o-2024-08-06')).toBe(128_000);
    expect(report.reservedOutputTokens).toBe(1000);
    expect(report.maxContextTokens).toBe(128_000);
    expect(report.tokensAfter).toBeLessThanOrEqual(128_000 - 1000);
  });

  test('maxContextTokens, when given, wins over the table', async () => {
    const mw = track(ctxfoldMiddleware({ summarizer: null, maxContextTokens: 5000 }));
    const { report } = await callOnce(mw, { modelId: 'gpt-4o' });
    expect(report.maxContextTokens).toBe(5000);
  });

  test('an unknown model and no maxContextTokens: the call fails with an InputError naming maxContextTokens and the model', async () => {
    const mw = track(ctxfoldMiddleware({ summarizer: null }));
    const error = await callOnce(mw, { modelId: 'my-local-llama' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).path).toBe('options.maxContextTokens');
    expect((error as InputError).message).toMatch(/is required: the model "my-local-llama" is not in ctxfold's table/);
  });

  test('listeners added before the first call get its events; drain/stats/close work before it', async () => {
    const mw = track(ctxfoldMiddleware({ summarizer: null }));
    await mw.compressor.drain();
    expect(mw.compressor.stats().summariesStarted).toBe(0);
    const seen: string[] = [];
    const off = mw.compressor.on('compressed', (e) => seen.push(e.chatId));
    const off2 = mw.compressor.on('compressed', () => seen.push('removed'));
    off2();
    await callOnce(mw, { providerOptions: { ctxfold: { chatId: 'early' } } });
    off();
    await callOnce(mw, { providerOptions: { ctxfold: { chatId: 'after-off' } } });
    expect(seen).toEqual(['early']);
    expect(() => ctxfoldMiddleware({ summarizer: null }).compressor.compress('a', [])).toThrow(/^options\.maxContextTokens: compress needs the compressor, which is made at the first model call/);
  });

  test('a model of another window on the same middleware is refused, naming maxContextTokens', async () => {
    const mw = track(ctxfoldMiddleware({ summarizer: null }));
    await callOnce(mw, { modelId: 'gpt-4o' });
    await callOnce(mw, { modelId: 'gpt-4o-mini' }); // same window: same compressor
    await expect(callOnce(mw, { modelId: 'claude-sonnet-4-20250514' })).rejects.toThrow(/^options\.maxContextTokens: is required: this middleware's compressor was made for gpt-4o \(128000 tokens\) and claude-sonnet-4-20250514 has 200000/);
  });

  test('tools and a JSON responseFormat are counted into the request', async () => {
    const mw = track(ctxfoldMiddleware({ summarizer: null, maxContextTokens: 5000 }));
    const model = new MockLanguageModelV3({ modelId: 'm', doGenerate: textResult('{"a":1}', 10) as never });
    const reports: CompressReport[] = [];
    mw.compressor.on('compressed', (e) => reports.push(e.report));
    const wrapped = wrapLanguageModel({ model, middleware: mw });
    await generateText({ model: wrapped, prompt: 'hi', providerOptions: { ctxfold: { chatId: 'x' } } });
    await wrapped.doGenerate({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], providerOptions: { ctxfold: { chatId: 'x' } }, tools: [{ type: 'function', name: 'find', description: 'Finds things.', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } }], responseFormat: { type: 'json', schema: { type: 'object' } } });
    expect(reports[0].requestExtraTokens).toBe(0);
    expect(reports[1].requestExtraTokens).toBeGreaterThan(20);
  });
});

describe('options are checked when the middleware is made', () => {
  test.each([
    [{ maxTokens: 1000 }, /^options\.maxTokens: unknown option; did you mean maxContextTokens\?$/],
    [{ keepLast: -1 }, /^options\.keepLast: must be an integer >= 0, got -1$/],
    [{ chatId: 'abc' }, /^options\.chatId: must be a function \(params\) => string \| undefined, got the string "abc"$/],
    [{ specificationVersion: 'v5' }, /^options\.specificationVersion: must be "v3" \(ai 6\) or "v4" \(ai 7\), got the string "v5"$/],
    [{ format: 'openai' }, /^options\.format: must be "ai-sdk" or left out/],
    [{ compressor: {} }, /^options\.compressor: must be a Compressor from createCompressor\(\)/],
    [{ compressor: createCompressor({ summarizer: null }), maxContextTokens: 100 }, /^options\.maxContextTokens: cannot be combined with options\.compressor/],
    ['fast', /^options: must be an options object, got the string "fast"$/],
  ])('%j', (options, message) => {
    expect(() => ctxfoldMiddleware(options as never)).toThrow(message);
    expect(() => ctxfoldMiddleware(options as never)).toThrow(InputError);
  });

  test('a shared compressor is used as it is, by every middleware given it', async () => {
    const shared = createCompressor({ maxContextTokens: 3000, summarizer: null });
    const a = ctxfoldMiddleware({ compressor: shared });
    const b = ctxfoldMiddleware({ compressor: shared, chatId: () => 'b' });
    expect(a.compressor).toBe(shared);
    expect(b.compressor).toBe(shared);
    const { report } = await callOnce(a, { modelId: 'unknown-model' });
    expect(report.maxContextTokens).toBe(3000);
    await shared.close();
  });

  test('specificationVersion: v3 by default, v4 when asked', () => {
    expect(track(ctxfoldMiddleware()).specificationVersion).toBe('v3');
    expect(track(ctxfoldMiddleware({ specificationVersion: 'v4' })).specificationVersion).toBe('v4');
  });
});

describe('the test helpers catch what they are meant to catch', () => {
  test('the mutation guard: a middleware after it that writes to a message makes the call fail', async () => {
    const log: GuardLog = { calls: 0 };
    const rogue = { specificationVersion: 'v3' as const, transformParams: async ({ params }: { params: { prompt: { content: unknown[] }[] } }) => { params.prompt[0].content.push({ type: 'text', text: 'x' }); return params; } };
    const model = new MockLanguageModelV3({ modelId: 'm', doGenerate: textResult('ok', 10) as never });
    await expect(generateText({ model: wrapLanguageModel({ model, middleware: [mutationGuard(log) as never, rogue as never] }), prompt: 'hi' })).rejects.toThrow(TypeError);
  });

  test('the provider-prompt shape check: string content, a tool part in a user message, a system message with parts', () => {
    expect(providerPromptProblems([
      { role: 'system', content: [{ type: 'text', text: 's' }] },
      { role: 'user', content: 'hi' },
      { role: 'user', content: [{ type: 'tool-result', toolCallId: 'a', output: { type: 'text', value: '' } }] },
      { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
    ]).map((p) => p.index)).toEqual([0, 1, 2]);
  });
});

describe('the pieces', () => {
  test('inputTokensOf reads V3/V4 usage (inputTokens.total) and V2 usage (inputTokens)', () => {
    expect(inputTokensOf({ inputTokens: { total: 42, noCache: 40 } })).toBe(42);
    expect(inputTokensOf({ inputTokens: 17 })).toBe(17);
    expect(inputTokensOf({ inputTokens: { total: undefined } })).toBeUndefined();
    expect(inputTokensOf(undefined)).toBeUndefined();
  });

  test('watchFinish: parts pass unchanged, the callback runs once at finish, or at the end of a stream without one', async () => {
    const read = async (parts: unknown[]) => {
      const got: number[] = [];
      const stream = new ReadableStream({ start(c) { parts.forEach((p) => c.enqueue(p)); c.close(); } }).pipeThrough(watchFinish((n) => got.push(n ?? -1)));
      const out: unknown[] = [];
      for await (const p of stream as unknown as AsyncIterable<unknown>) out.push(p);
      return { out, got };
    };
    const parts = [{ type: 'text-delta', delta: 'a' }, { type: 'finish', usage: { inputTokens: { total: 9 } } }, { type: 'finish', usage: { inputTokens: { total: 1 } } }];
    const r = await read(parts);
    expect(r.out).toEqual(parts);
    expect(r.out[0]).toBe(parts[0]);
    expect(r.got).toEqual([9]);
    expect((await read([{ type: 'text-delta', delta: 'a' }])).got).toEqual([-1]);
  });

  test('asProviderPrompt writes string content of user and assistant messages as one text part; the caller\'s messages stay the same objects', () => {
    const kept = { role: 'user', content: [{ type: 'text', text: 'x' }] };
    const view = [{ role: 'system', content: 's' }, { role: 'user', content: 'summary' }, kept, { role: 'assistant', content: 'note' }];
    const out = asProviderPrompt(view);
    expect(out).toEqual([{ role: 'system', content: 's' }, { role: 'user', content: [{ type: 'text', text: 'summary' }] }, kept, { role: 'assistant', content: [{ type: 'text', text: 'note' }] }]);
    expect(out[2]).toBe(kept);
    expect(view[1]).toEqual({ role: 'user', content: 'summary' });
  });

  test('the view keeps the caller\'s message objects (the SDK\'s prompt objects), untouched', async () => {
    const mw = track(ctxfoldMiddleware({ summarizer: null, maxContextTokens: 2000 }));
    const messages = upToLastReply(modelMessages(80, 5));
    let given: unknown[] = [];
    const spy = { specificationVersion: 'v3' as const, transformParams: async ({ params }: { params: { prompt: unknown[] } }) => { given = params.prompt; return params; } };
    const model = new MockLanguageModelV3({ modelId: 'm', doGenerate: textResult('ok', 10) as never });
    await generateText({ model: wrapLanguageModel({ model, middleware: [spy as never, mw] }), messages: messages as never, allowSystemInMessages: true, providerOptions: { ctxfold: { chatId: 'same' } } });
    const received = model.doGenerateCalls[0].prompt;
    const originals = new Set(given);
    expect(received.every((m) => originals.has(m))).toBe(true);
  });
});

describe('recall on a compressor the middleware uses', () => {
  test('a generateText call told of the recall tool in the summary is also sent the tool (streamed calls get neither: ai-sdk-recall.test.ts)', async () => {
    const mw = track(ctxfoldMiddleware({ maxContextTokens: 6000, compressionThresholdTokens: 4000, recall: true }));
    const history = upToLastReply(modelMessages(300, 41));
    const model = new MockLanguageModelV3({ modelId: 'gpt-4o', doGenerate: textResult('ok', 10) as never });
    const reports: CompressReport[] = [];
    mw.compressor.on('compressed', (e) => reports.push(e.report));
    const call = () => generateText({ model: wrapLanguageModel({ model, middleware: mw }), messages: history as never, providerOptions: { ctxfold: { chatId: 'recall' } } });
    await call();
    await mw.compressor.drain();
    await call();
    const last = reports.at(-1)!;
    expect(last.summary.applied).toBe(true);
    const sent = JSON.stringify(model.doGenerateCalls.at(-1)!.prompt);
    expect(sent).toContain('Summary of');
    expect(sent).toContain('ctxfold_recall');
    expect((model.doGenerateCalls.at(-1)!.tools ?? []).map((t) => (t as { name: string }).name)).toEqual(['ctxfold_recall']);
  });
});
