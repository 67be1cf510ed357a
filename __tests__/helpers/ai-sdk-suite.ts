/**
 * The scenarios every `ai` major must pass through `ctxfoldMiddleware`, registered into the
 * calling `describe` (ai 6 / V3 in ai-sdk.test.ts, ai 7 / V4 in ai-sdk-v4.test.ts): generateText,
 * streamText, a multi-step tool loop, and a background summary used by the next call. Each
 * scenario drives the real SDK against its mock model and checks what the model received.
 */
import { afterEach, beforeAll, expect, test } from '@jest/globals';
import { ctxfoldMiddleware } from '../../src/adapters/ai-sdk/index.js';
import type { CtxfoldMiddleware } from '../../src/adapters/ai-sdk/index.js';
import { convertMessages } from '../../src/formats/convert.js';
import type { CompressReport } from '../../src/runtime/compress.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import { generateConversation } from '../../bench/fixtures/conversation.js';
import { examinePrompt, fits, textResult, textStreamParts, toolCallsResult, type Sdk } from './ai-sdk-sdk.js';
import { mutationGuard, type GuardLog } from './ai-sdk-provider-prompt.js';

/** A ModelMessage history of `n` messages (a tool-calling chat), system message first. */
export function modelMessages(n: number, seed: number): Record<string, unknown>[] {
  return convertMessages(generateConversation({ messages: n, seed }), { from: 'openai', to: 'ai-sdk' }).messages as Record<string, unknown>[];
}

/** The history up to (not including) its last assistant message: what a chat sends for its next reply. */
export function upToLastReply(history: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  return history.slice(0, history.map((m) => m.role).lastIndexOf('assistant'));
}

/** Registers the scenarios; `load` gives the SDK (called once, in beforeAll). */
export function adapterScenarios(load: () => Promise<Sdk>): void {
  let sdk: Sdk;
  const counter = createTokenCounter();
  const open: CtxfoldMiddleware[] = [];
  beforeAll(async () => {
    sdk = await load();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((m) => m.compressor.close(200)));
  });

  /** A middleware tracked for closing, with every report it made. */
  function middleware(options: Parameters<typeof ctxfoldMiddleware>[0]) {
    const mw = ctxfoldMiddleware({ counter, ...options, specificationVersion: sdk.spec });
    open.push(mw);
    const reports: CompressReport[] = [];
    const billed: number[] = [];
    mw.compressor.on('compressed', (e) => reports.push(e.report));
    mw.compressor.on('calibration', (e) => billed.push(e.billed));
    return { mw, reports, billed };
  }

  const wrap = (model: unknown, mw: CtxfoldMiddleware, log: GuardLog) => sdk.wrapLanguageModel({ model, middleware: [mutationGuard(log), mw] });

  test('generateText: the model gets the compressed prompt (system message first), within budget and valid; usage.inputTokens.total calibrates', async () => {
    const { mw, reports, billed } = middleware({ maxContextTokens: 8000, summarizer: null });
    const model = new sdk.MockModel({ modelId: 'mock-model', doGenerate: textResult('Noted.', 2345) });
    const log: GuardLog = { calls: 0 };
    const messages = upToLastReply(modelMessages(160, 11));
    const frozen = structuredClone(messages);
    const result = await sdk.generateText({ model: wrap(model, mw, log), messages, allowSystemInMessages: true, maxOutputTokens: 300, providerOptions: { ctxfold: { chatId: 'gen' } } });
    expect(result.text).toBe('Noted.');
    const prompt = model.doGenerateCalls[0].prompt;
    const report = reports[0];
    expect(report.messagesBefore).toBe(messages.length);
    expect(prompt.length).toBeLessThan(messages.length);
    expect(prompt[0]).toEqual({ role: 'system', content: messages[0].content });
    const found = examinePrompt(prompt, counter);
    expect(found).toMatchObject({ violations: [], checker: [], shape: [] });
    expect(report.reservedOutputTokens).toBe(300);
    expect(report.overBudget).toBe(false);
    expect(fits(found, report, 8000, 300)).toBe(true);
    expect(found.messageTokens + report.requestExtraTokens).toBe(report.tokensAfter);
    expect(billed).toEqual([2345]);
    expect(log).toEqual({ calls: 1 });
    expect(messages).toEqual(frozen);
  });

  test('streamText: the stream passes through unchanged and afterResponse runs at the finish part with its usage', async () => {
    const { mw, reports, billed } = middleware({ maxContextTokens: 6000, summarizer: null });
    const text = 'Here is what I found in the logs today. ';
    const model = new sdk.MockModel({
      modelId: 'mock-model',
      doStream: async () => ({ stream: sdk.simulateReadableStream({ chunks: textStreamParts(text, 1999), initialDelayInMs: 0, chunkDelayInMs: 1 }) }),
    });
    const log: GuardLog = { calls: 0 };
    const messages = upToLastReply(modelMessages(120, 12));
    const result = sdk.streamText({ model: wrap(model, mw, log), system: 'Answer from the tool results only.', messages: messages.slice(1), maxOutputTokens: 200, providerOptions: { ctxfold: { chatId: 'stream' } } });
    let seen = '';
    const billedWhileStreaming: number[] = [];
    for await (const delta of result.textStream) {
      seen += delta;
      billedWhileStreaming.push(billed.length);
    }
    expect(seen).toBe(text);
    // Nothing is recorded when the stream opens: calibration waits for the finish part, which carries the usage.
    expect(billedWhileStreaming[0]).toBe(0);
    expect(billed).toEqual([1999]);
    const prompt = model.doStreamCalls[0].prompt;
    expect(prompt[0]).toEqual({ role: 'system', content: 'Answer from the tool results only.' });
    const found = examinePrompt(prompt, counter);
    expect(found).toMatchObject({ violations: [], checker: [], shape: [] });
    expect(prompt.length).toBeLessThan(messages.length);
    expect(reports[0].overBudget).toBe(false);
    expect(fits(found, reports[0], 6000, 200)).toBe(true);
    expect(log).toEqual({ calls: 1 });
  });

  test('a multi-step tool loop (stopWhen: stepCountIs): each step\'s growing prompt is compressed, within budget and valid', async () => {
    const steps = 6;
    const window = 6000;
    const reserve = 200;
    const { mw, reports } = middleware({ maxContextTokens: window, keepLast: 2, summarizer: null });
    let step = 0;
    const model = new sdk.MockModel({
      modelId: 'mock-model',
      doGenerate: async () => {
        step++;
        if (step === steps) return textResult('All pages read.', 1000);
        return toolCallsResult([
          { id: `s${step}-a`, name: 'readPage', input: { page: step * 2 - 1 } },
          { id: `s${step}-b`, name: 'readPage', input: { page: step * 2 } },
        ], 1000);
      },
    });
    const readPage = sdk.tool({
      description: 'Reads one page of the report.',
      inputSchema: sdk.jsonSchema({ type: 'object', properties: { page: { type: 'number' } }, required: ['page'] }),
      execute: async ({ page }: { page: number }) => `Page ${page}: ${'the quarterly figures rose by a small margin in every region. '.repeat(25)}`,
    });
    // A long chat, then a new request the model answers with a tool loop.
    const earlier = upToLastReply(modelMessages(150, 14)).slice(1);
    const messages = [...earlier, { role: 'user', content: 'Now read the whole report and tell me when you are done.' }];
    const frozen = structuredClone(messages);
    const log: GuardLog = { calls: 0 };
    const result = await sdk.generateText({
      model: wrap(model, mw, log),
      system: 'You read reports page by page.',
      messages,
      tools: { readPage },
      stopWhen: sdk.stepCountIs(steps),
      maxOutputTokens: reserve,
      providerOptions: { ctxfold: { chatId: 'loop' } },
    });
    expect(result.steps).toHaveLength(steps);
    expect(result.text).toBe('All pages read.');
    const calls = model.doGenerateCalls;
    expect(calls).toHaveLength(steps);
    calls.forEach((call, i) => {
      const prompt = call.prompt as { role: string; content: unknown }[];
      const report = reports[i];
      // The SDK's own prompt grows by one call message and one tool message per step.
      expect(report.messagesBefore).toBe(1 + messages.length + 2 * i);
      const found = examinePrompt(prompt, counter);
      expect({ step: i + 1, ...found, messageTokens: 0 }).toEqual({ step: i + 1, violations: [], checker: [], shape: [], messageTokens: 0 });
      expect({ step: i + 1, fits: fits(found, report, window, reserve), overBudget: report.overBudget }).toEqual({ step: i + 1, fits: true, overBudget: false });
      expect(prompt.length).toBeLessThan(report.messagesBefore);
      // The system message, the request and every step of the loop so far are there, in order.
      expect(prompt[0]).toEqual({ role: 'system', content: 'You read reports page by page.' });
      const loop = prompt.slice(prompt.length - 1 - 2 * i);
      expect(loop[0]).toEqual({ role: 'user', content: [{ type: 'text', text: 'Now read the whole report and tell me when you are done.' }] });
      for (let k = 1; k <= i; k++) expect(JSON.stringify(loop[2 * k])).toContain(`s${k}-b`);
    });
    // The longer the loop, the more of the older chat is left out.
    expect(reports[steps - 1].droppedCounts.budget).toBeGreaterThan(reports[0].droppedCounts.budget);
    expect(log).toEqual({ calls: steps });
    expect(messages).toEqual(frozen);
  });

  test('a background summary made after one call is in the next call\'s prompt, as a provider-level message', async () => {
    const { mw, reports } = middleware({ maxContextTokens: 4000, compressionThresholdTokens: 2000, keepLast: 4 });
    const done: number[] = [];
    mw.compressor.on('summary:done', (e) => done.push(e.coveredIds.length));
    const model = new sdk.MockModel({ modelId: 'mock-model', doGenerate: textResult('Noted.', 100) });
    const log: GuardLog = { calls: 0 };
    const wrapped = wrap(model, mw, log);
    const messages = upToLastReply(modelMessages(200, 13));
    await sdk.generateText({ model: wrapped, messages, allowSystemInMessages: true, providerOptions: { ctxfold: { chatId: 'summary' } } });
    expect(reports[0].summarize).toBeDefined();
    await mw.compressor.drain();
    expect(done).toHaveLength(1);
    await sdk.generateText({ model: wrapped, messages, allowSystemInMessages: true, providerOptions: { ctxfold: { chatId: 'summary' } } });
    expect(reports[1].summary.applied).toBe(true);
    const prompt = model.doGenerateCalls[1].prompt;
    const found = examinePrompt(prompt, counter);
    expect(found).toMatchObject({ violations: [], checker: [], shape: [] });
    expect(fits(found, reports[1], 4000, 0)).toBe(true);
    expect(log).toEqual({ calls: 2 });
  });
}
