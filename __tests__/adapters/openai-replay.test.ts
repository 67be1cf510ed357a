import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { compressorOf, withCtxfold } from '../../src/adapters/openai/index.js';
import { generateConversation, modelRequestEnds } from '../../bench/fixtures/conversation.js';
import { convertMessages } from '../../src/formats/convert.js';
import type { MessageLens } from '../../src/formats/lens.js';
import { openaiChatLens } from '../../src/formats/openai-chat/lens.js';
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';
import { openaiResponsesLens } from '../../src/formats/openai-responses/lens.js';
import { validateMessages } from '../../src/formats/profiles.js';
import type { Compressor, CompressorEvents } from '../../src/runtime/compressor.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import { pairingProblems } from '../helpers/oracle.js';
import { checkResponsesInput } from '../helpers/openai-responses-checker.js';
import { scriptedSummarizer } from '../helpers/test-summarizers.js';
import { startOpenAIApiServer, type OpenAIApiServer } from '../helpers/openai-api-server.js';

let server: OpenAIApiServer;
beforeAll(async () => {
  server = await startOpenAIApiServer();
});
afterAll(async () => {
  await server.close();
});

/** A counter of its own, to recount what the model received. */
const recount = createTokenCounter();

/** Watches a compressor's summary jobs: the most running at once per chat, and how each ended. */
function watchJobs(c: Compressor) {
  const running = new Map<string, number>();
  const most = new Map<string, number>();
  const ended = { done: 0, failed: 0, stale: 0 };
  let started = 0;
  c.on('summary:start', (e) => {
    started++;
    running.set(e.chatId, (running.get(e.chatId) ?? 0) + 1);
    most.set(e.chatId, Math.max(most.get(e.chatId) ?? 0, running.get(e.chatId)!));
  });
  const end = (kind: keyof typeof ended) => (e: { chatId: string }) => {
    ended[kind]++;
    // A job can fail before it starts (nothing to count down then).
    if ((running.get(e.chatId) ?? 0) > 0) running.set(e.chatId, running.get(e.chatId)! - 1);
  };
  c.on('summary:done', end('done'));
  c.on('summary:failed', end('failed'));
  c.on('summary:stale', end('stale'));
  return { most, ended, started: () => started };
}

/** What every request of a replay must satisfy; problems are collected and asserted at the end. */
interface ReplayFacts {
  requests: number;
  overBudget: number;
  withSummary: number;
  dropped: number;
  problems: string[];
}

/**
 * Checks one request the model received against the report of the view ctxfold made for it:
 * the recount of what arrived equals `tokensAfter`, it is within the window less the reply's
 * reserve unless the protected part alone is over it, and it is valid for the provider (profile
 * and the independent checker).
 */
function checkRequest<M>(facts: ReplayFacts, k: number, sent: M[], report: CompressorEvents['compressed']['report'], lens: MessageLens<M>, independent: (m: M[]) => unknown[], profile: 'openai' | 'openai-responses') {
  facts.requests++;
  const counted = recount.requestOverhead + sent.reduce((n, m) => n + recount.message(m, lens), 0) + report.requestExtraTokens;
  if (counted !== report.tokensAfter) facts.problems.push(`request ${k}: the model received ${counted} tokens, the report says ${report.tokensAfter}`);
  if (report.overBudget) facts.overBudget++;
  else if (counted + report.reservedOutputTokens > report.maxContextTokens!) facts.problems.push(`request ${k}: ${counted} + ${report.reservedOutputTokens} reserved tokens is over ${report.maxContextTokens}`);
  if (report.summary.applied) facts.withSummary++;
  if (report.messagesAfter < report.messagesBefore) facts.dropped++;
  const violations = validateMessages(sent, profile);
  if (violations.length > 0) facts.problems.push(`request ${k}: ${profile} profile: ${JSON.stringify(violations.slice(0, 2))}`);
  const independentProblems = independent(sent);
  if (independentProblems.length > 0) facts.problems.push(`request ${k}: independent checker: ${JSON.stringify(independentProblems.slice(0, 2))}`);
}

describe('turn-by-turn replay through the real openai client', () => {
  test('chat.completions: a 2,000-message tool-calling conversation, every request valid and within budget, one summary job per chat at a time, the app\'s array never changed', async () => {
    const conversation = generateConversation({ messages: 2000, seed: 2024 }) as ChatCompletionMessageParam[];
    const frozen = structuredClone(conversation);
    const ends = modelRequestEnds(conversation as OpenAIChatMessage[]);
    const summarizer = scriptedSummarizer(() => 3);
    const w = withCtxfold(new OpenAI({ apiKey: 'k', baseURL: server.baseURL, maxRetries: 0 }), { maxContextTokens: 12_000, keepLast: 6, summarizer });
    const compressor = compressorOf(w)!;
    const jobs = watchJobs(compressor);
    const reports: CompressorEvents['compressed']['report'][] = [];
    compressor.on('compressed', (e) => reports.push(e.report));
    let calibrations = 0;
    compressor.on('calibration', () => calibrations++);
    const facts: ReplayFacts = { requests: 0, overBudget: 0, withSummary: 0, dropped: 0, problems: [] };

    // The application's history, as it grows: each request carries everything said so far.
    const history: ChatCompletionMessageParam[] = [];
    for (const [k, end] of ends.entries()) {
      while (history.length < end) history.push(conversation[history.length]);
      const at = server.requests.length;
      const body = { model: 'gpt-4o', messages: history, metadata: { chat_id: 'replay-chat' } };
      if (k % 3 === 2) {
        // Every third request is streamed, as a chat UI would.
        const stream = await w.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
        for await (const _chunk of stream) { /* read to the end */ }
      } else {
        await w.chat.completions.create(body);
      }
      // The caller's array: same length, same objects, in order.
      if (history.length !== end || history.some((m, i) => m !== conversation[i])) facts.problems.push(`request ${k}: the application's array was changed`);
      checkRequest(facts, k, server.requests[at].body!.messages as OpenAIChatMessage[], reports[k] as never, openaiChatLens, pairingProblems as (m: OpenAIChatMessage[]) => unknown[], 'openai');
    }
    await compressor.drain();
    await compressor.close();

    expect(facts.problems).toEqual([]);
    expect(facts.requests).toBe(ends.length);
    // Every message object deep-equal to a clone taken before (JSON: jest's realm has its own prototypes).
    expect(JSON.stringify(conversation) === JSON.stringify(frozen)).toBe(true);
    expect(calibrations).toBe(ends.length);
    for (const [chat, most] of jobs.most) expect([chat, most]).toEqual([chat, 1]);
    expect(jobs.started()).toBeGreaterThan(0);
    expect(jobs.ended.done).toBeGreaterThan(0);
    expect(summarizer.maxConcurrent).toBe(1);
    // The run reached what it is meant to test: long histories cut, and summaries in use.
    expect(facts.dropped).toBeGreaterThan(ends.length / 2);
    expect(facts.withSummary).toBeGreaterThan(ends.length / 4);
    console.log(`chat replay: ${facts.requests} requests over ${conversation.length} messages; ${facts.dropped} views cut, ${facts.withSummary} with a summary, ${facts.overBudget} over budget (protected part alone over the window); summary jobs started ${jobs.started()}, done ${jobs.ended.done}, stale ${jobs.ended.stale}, failed ${jobs.ended.failed}`);
  });

  test('responses: a 400-message conversation converted to Responses items, replayed turn by turn, streamed and not', async () => {
    const chatHistory = generateConversation({ messages: 400, seed: 77 });
    const input = convertMessages(chatHistory, { from: 'openai', to: 'openai-responses' }).messages as ResponseInputItem[];
    const frozen = structuredClone(input);
    const isModelItem = (item: ResponseInputItem | undefined) => item !== undefined && ((item as { type?: string }).type === 'function_call' || ('role' in item && item.role === 'assistant'));
    // A model request ends where the model starts answering: a model item after a non-model one.
    const ends = input.flatMap((item, i) => (i > 0 && isModelItem(item) && !isModelItem(input[i - 1]) ? [i] : []));
    const summarizer = scriptedSummarizer(() => 3);
    const w = withCtxfold(new OpenAI({ apiKey: 'k', baseURL: server.baseURL, maxRetries: 0 }), { maxContextTokens: 10_000, summarizer });
    const compressor = compressorOf(w)!;
    const jobs = watchJobs(compressor);
    const reports: CompressorEvents['compressed']['report'][] = [];
    compressor.on('compressed', (e) => reports.push(e.report));
    const facts: ReplayFacts = { requests: 0, overBudget: 0, withSummary: 0, dropped: 0, problems: [] };

    const history: ResponseInputItem[] = [];
    for (const [k, end] of ends.entries()) {
      while (history.length < end) history.push(input[history.length]);
      const at = server.requests.length;
      const body = { model: 'gpt-4o', input: history, instructions: 'Use the tools; answer briefly.', max_output_tokens: 400, metadata: { chat_id: 'replay-responses' } };
      if (k % 2 === 1) {
        const stream = await w.responses.create({ ...body, stream: true });
        for await (const _event of stream) { /* read to the end */ }
      } else {
        await w.responses.create(body);
      }
      if (history.length !== end || history.some((m, i) => m !== input[i])) facts.problems.push(`request ${k}: the application's array was changed`);
      if (reports[k].format !== 'openai-responses') facts.problems.push(`request ${k}: read as ${reports[k].format}`);
      checkRequest(facts, k, server.requests[at].body!.input as unknown[], reports[k] as never, openaiResponsesLens as MessageLens<unknown>, checkResponsesInput, 'openai-responses');
    }
    await compressor.drain();
    await compressor.close();

    expect(facts.problems).toEqual([]);
    expect(JSON.stringify(input) === JSON.stringify(frozen)).toBe(true);
    for (const [chat, most] of jobs.most) expect([chat, most]).toEqual([chat, 1]);
    expect(jobs.ended.done).toBeGreaterThan(0);
    expect(facts.dropped).toBeGreaterThan(ends.length / 3);
    expect(facts.withSummary).toBeGreaterThan(0);
    console.log(`responses replay: ${facts.requests} requests over ${input.length} items; ${facts.dropped} views cut, ${facts.withSummary} with a summary, ${facts.overBudget} over budget; summary jobs started ${jobs.started()}, done ${jobs.ended.done}, stale ${jobs.ended.stale}`);
  });
});
