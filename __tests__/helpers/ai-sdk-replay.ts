/**
 * The turn-by-turn replay of a long tool-calling chat through the real `ai` package: the chat
 * (generateConversation, converted to AI SDK ModelMessages) is sent as an application sends it,
 * one model call per model reply with every message before it, through
 * `wrapLanguageModel({ middleware: [guard, ctxfoldMiddleware] })` to the SDK's mock model. The mock
 * checks each prompt it receives as it arrives; the replay returns what it found.
 *
 * Every `generateTextEvery`-th request (and the last) goes through `generateText` itself; the others
 * build the prompt with the SDK's own conversion (`convertToLanguageModelPrompt`, what generateText
 * calls) and call the wrapped model's `doGenerate`. The difference is generateText's zod validation of
 * the whole history on every call: about 0.2 s per call at 1,700 messages, which would make the
 * 860-request replay take minutes; the whole history is validated by the SDK once instead.
 */
import { ctxfoldMiddleware } from '../../src/adapters/ai-sdk/index.js';
import type { CompressReport } from '../../src/runtime/compress.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import { examinePrompt, fits, textResult, type Sdk } from './ai-sdk-sdk.js';
import { mutationGuard, type GuardLog } from './ai-sdk-provider-prompt.js';
import { modelMessages } from './ai-sdk-suite.js';

/** Options of one replay. */
export interface ReplayOptions {
  readonly messages: number;
  readonly seed: number;
  readonly maxContextTokens: number;
  readonly maxOutputTokens: number;
  /** Every this-many-th request goes through generateText (default 100). */
  readonly generateTextEvery?: number;
}

/** What a replay found (every list empty and every count as expected: the adapter held). */
export interface ReplayFindings {
  readonly requests: number;
  /** Requests that went through generateText itself. */
  readonly viaGenerateText: number;
  /** Messages of the chat in OpenAI Chat form (what generateConversation made). */
  readonly sourceMessages: number;
  /** The same chat as AI SDK ModelMessages (parallel results share one tool message). */
  readonly historyMessages: number;
  /** Requests whose prompt broke the ai-sdk profile, the independent checker or the provider shape. */
  readonly invalid: { index: number; problems: unknown }[];
  /** Requests over budget although the report says the protected part fits. */
  readonly overWhileFitting: number[];
  /** Requests the report marks over budget (the protected part alone exceeds the window). */
  readonly overBudget: number;
  /** Requests whose own recount of the prompt differs from the report's `tokensAfter`. */
  readonly miscounted: number[];
  readonly withSummary: number;
  readonly largestPromptTokens: number;
  readonly summaryJobs: { started: number; done: number; failed: number; stale: number; mostAtOnce: number };
  readonly guard: GuardLog;
  /** The application's history after the replay, and a structuredClone of it taken before (the test compares them). */
  readonly history: readonly unknown[];
  readonly snapshot: readonly unknown[];
  readonly ms: number;
}

/** Replays the chat through `sdk`; resolves once every request was answered and the summaries drained. */
export async function replayThroughSdk(sdk: Sdk, options: ReplayOptions): Promise<ReplayFindings> {
  const history = modelMessages(options.messages, options.seed);
  const snapshot = structuredClone(history);
  // The SDK validates the whole history (every prefix is then a valid ModelMessage list too).
  await sdk.generateText({ model: new sdk.MockModel({ modelId: 'check', doGenerate: textResult('ok', 1) }), messages: history, allowSystemInMessages: true });
  const ends = history.flatMap((m, i) => (m.role === 'assistant' && i > 0 ? [i] : []));
  const counter = createTokenCounter();
  const mw = ctxfoldMiddleware({ counter, maxContextTokens: options.maxContextTokens, specificationVersion: sdk.spec });
  const jobs = { started: 0, done: 0, failed: 0, stale: 0, mostAtOnce: 0 };
  const running = new Map<string, number>();
  const end = (chatId: string) => running.set(chatId, (running.get(chatId) ?? 1) - 1);
  mw.compressor.on('summary:start', (e) => {
    jobs.started++;
    const now = (running.get(e.chatId) ?? 0) + 1;
    running.set(e.chatId, now);
    jobs.mostAtOnce = Math.max(jobs.mostAtOnce, now);
  });
  mw.compressor.on('summary:done', (e) => { jobs.done++; end(e.chatId); });
  mw.compressor.on('summary:failed', (e) => { jobs.failed++; end(e.chatId); });
  mw.compressor.on('summary:stale', (e) => { jobs.stale++; end(e.chatId); });
  let report: CompressReport | undefined;
  mw.compressor.on('compressed', (e) => { report = e.report; });

  const findings = { invalid: [] as { index: number; problems: unknown }[], overWhileFitting: [] as number[], miscounted: [] as number[], overBudget: 0, withSummary: 0, largestPromptTokens: 0 };
  let request = -1;
  const model = new sdk.MockModel({
    modelId: 'mock-model',
    doGenerate: async (call: { prompt: unknown[] }) => {
      const r = report!;
      const found = examinePrompt(call.prompt, counter);
      if (found.violations.length + found.checker.length + found.shape.length > 0) findings.invalid.push({ index: request, problems: { violations: found.violations, checker: found.checker, shape: found.shape } });
      if (found.messageTokens + r.requestExtraTokens !== r.tokensAfter) findings.miscounted.push(request);
      if (r.overBudget) findings.overBudget++;
      else if (!fits(found, r, options.maxContextTokens, options.maxOutputTokens)) findings.overWhileFitting.push(request);
      if (r.summary.applied) findings.withSummary++;
      findings.largestPromptTokens = Math.max(findings.largestPromptTokens, found.messageTokens);
      return textResult('ok', Math.max(1, found.messageTokens));
    },
  });
  const guard: GuardLog = { calls: 0 };
  const wrapped = sdk.wrapLanguageModel({ model, middleware: [mutationGuard(guard, 25), mw] }) as { doGenerate: (params: unknown) => Promise<unknown> };
  const every = options.generateTextEvery ?? 100;
  let viaGenerateText = 0;
  const providerOptions = { ctxfold: { chatId: 'replay' } };
  const t0 = performance.now();
  try {
    for (const at of ends) {
      request++;
      report = undefined;
      const sent = history.slice(0, at);
      if (request % every === 0 || request === ends.length - 1) {
        viaGenerateText++;
        await sdk.generateText({ model: wrapped, messages: sent, allowSystemInMessages: true, maxOutputTokens: options.maxOutputTokens, providerOptions });
      } else {
        await wrapped.doGenerate({ prompt: await sdk.toPrompt(sent), maxOutputTokens: options.maxOutputTokens, providerOptions });
      }
      // Time passes between turns: background summaries may land.
      await new Promise((resolve) => setImmediate(resolve));
    }
    await mw.compressor.drain();
  } finally {
    await mw.compressor.close();
  }
  return {
    requests: ends.length,
    viaGenerateText,
    sourceMessages: options.messages,
    historyMessages: history.length,
    ...findings,
    summaryJobs: jobs,
    guard,
    history,
    snapshot,
    ms: Math.round(performance.now() - t0),
  };
}
