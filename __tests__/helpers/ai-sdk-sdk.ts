/**
 * The parts of the real `ai` package the adapter tests drive, loaded from `ai` (6, V3 models) or
 * `ai7` (7, V4 models, Node >= 22), plus the mock model results both specs share (content,
 * finish reason and usage have the same shape in V3 and V4). Loaded lazily so a Node 20 run
 * never imports ai 7.
 */
import { aiSdkLens } from '../../src/formats/ai-sdk/lens.js';
import { validateMessages } from '../../src/formats/profiles.js';
import type { CompressReport } from '../../src/runtime/compress.js';
import type { TokenCounter } from '../../src/tokens/counter.js';
import { checkAiSdk } from './ai-sdk-checker.js';
import { providerPromptProblems } from './ai-sdk-provider-prompt.js';

// `any` here: the functions come from two majors of `ai` whose declared types differ (V3 vs V4
// params); the tests call both through this one loose surface and check what comes out at run time.
type Loose = (...args: any[]) => any;

/** What the tests use of one `ai` major. */
export interface Sdk {
  readonly spec: 'v3' | 'v4';
  readonly generateText: Loose;
  readonly streamText: Loose;
  readonly wrapLanguageModel: Loose;
  readonly tool: Loose;
  readonly jsonSchema: Loose;
  readonly stepCountIs: Loose;
  readonly simulateReadableStream: Loose;
  /** The SDK's own ModelMessage[] → provider prompt conversion (`convertToLanguageModelPrompt` from its `internal` entry), without its message validation. */
  readonly toPrompt: (messages: readonly unknown[]) => Promise<unknown[]>;
  /** `MockLanguageModelV3` or `MockLanguageModelV4`. */
  readonly MockModel: new (options: any) => { doGenerateCalls: { prompt: unknown[] }[]; doStreamCalls: { prompt: unknown[] }[] };
}

/** `ai` 6 and its `MockLanguageModelV3`. */
export async function loadAi6(): Promise<Sdk> {
  const ai = await import('ai');
  const test = await import('ai/test');
  const internal = await import('ai/internal');
  return { spec: 'v3', ...pick(ai), simulateReadableStream: ai.simulateReadableStream, toPrompt: promptMaker(internal.convertToLanguageModelPrompt as Loose), MockModel: test.MockLanguageModelV3 as unknown as Sdk['MockModel'] };
}

/** `ai` 7 (installed as `ai7`) and its `MockLanguageModelV4`; needs Node >= 22. */
export async function loadAi7(): Promise<Sdk> {
  const ai = await import('ai7');
  const test = await import('ai7/test');
  const internal = await import('ai7/internal');
  return { spec: 'v4', ...pick(ai), simulateReadableStream: ai.simulateReadableStream, toPrompt: promptMaker(internal.convertToLanguageModelPrompt as Loose), MockModel: test.MockLanguageModelV4 as unknown as Sdk['MockModel'] };
}

/** The provider prompt the SDK builds from a ModelMessage list with no separate system option. */
function promptMaker(convert: Loose): Sdk['toPrompt'] {
  return (messages) => convert({ prompt: { system: undefined, messages }, supportedUrls: {}, download: undefined });
}

function pick(ai: Record<string, unknown>) {
  return {
    generateText: ai.generateText as Loose,
    streamText: ai.streamText as Loose,
    wrapLanguageModel: ai.wrapLanguageModel as Loose,
    tool: ai.tool as Loose,
    jsonSchema: ai.jsonSchema as Loose,
    stepCountIs: ai.stepCountIs as Loose,
  };
}

/** The usage a V3/V4 model reports, with `input` billed input tokens. */
export function usage(input: number, output = 5) {
  return {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: output, text: output, reasoning: 0 },
  };
}

/** A generate result answering with text. */
export function textResult(text: string, inputTokens: number) {
  return { content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(inputTokens), warnings: [] };
}

/** A generate result opening tool calls (`input` is JSON text, as providers return it). */
export function toolCallsResult(calls: readonly { id: string; name: string; input: unknown }[], inputTokens: number) {
  return {
    content: calls.map((c) => ({ type: 'tool-call', toolCallId: c.id, toolName: c.name, input: JSON.stringify(c.input) })),
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage: usage(inputTokens),
    warnings: [],
  };
}

/** The stream parts of a text answer, ending with a `finish` part carrying `inputTokens`. */
export function textStreamParts(text: string, inputTokens: number): unknown[] {
  const words = text.split(/(?<= )/);
  return [
    { type: 'stream-start', warnings: [] },
    { type: 'response-metadata', id: 'r-1', modelId: 'mock', timestamp: new Date(0) },
    { type: 'text-start', id: 't' },
    ...words.map((delta) => ({ type: 'text-delta', id: 't', delta })),
    { type: 'text-end', id: 't' },
    { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(inputTokens) },
  ];
}

/** What was wrong with one prompt a model received (empty lists: nothing). */
export interface PromptFindings {
  readonly violations: unknown[];
  readonly checker: unknown[];
  readonly shape: unknown[];
  /** Tokens of the prompt's messages as received, counted here with the counter and the AI SDK lens. */
  readonly messageTokens: number;
}

/**
 * Checks a prompt a model received: the ai-sdk profile finds no violation, the independent checker
 * finds no problem, every message has the provider-level shape, and its tokens are counted.
 */
export function examinePrompt(prompt: readonly unknown[], counter: TokenCounter): PromptFindings {
  let messageTokens = counter.requestOverhead;
  for (const m of prompt) messageTokens += counter.message(m as never, aiSdkLens);
  return {
    violations: validateMessages(prompt as unknown[], 'ai-sdk'),
    checker: checkAiSdk(prompt),
    shape: providerPromptProblems(prompt),
    messageTokens,
  };
}

/**
 * True when the prompt, as received, fits: its messages plus the request extras the report counted
 * (tools, response format) stay within the window less the reply's reserve.
 */
export function fits(findings: PromptFindings, report: CompressReport, window: number, reserve: number): boolean {
  return findings.messageTokens + report.requestExtraTokens <= window - reserve;
}
