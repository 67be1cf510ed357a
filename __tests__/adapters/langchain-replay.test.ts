import { isDeepStrictEqual } from 'node:util';
import { describe, expect, test } from '@jest/globals';
import type { BaseMessage } from '@langchain/core/messages';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { createAgent, createMiddleware } from 'langchain';
import { fromLangChain } from '../../bench/langchain-convert.js';
import { generateConversation } from '../../bench/fixtures/conversation.js';
import { ctxfoldMiddleware } from '../../src/adapters/langchain/index.js';
import { validateMessages } from '../../src/formats/profiles.js';
import { openaiChatLens } from '../../src/formats/openai-chat/lens.js';
import type { CompressReport } from '../../src/runtime/compress.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import { pairingProblems } from '../helpers/oracle.js';
import { RecordingChatModel } from '../helpers/langchain-model.js';
import { replayScript } from '../helpers/langchain-replay.js';

const MAX = 12_000;

/** Instructions outside the list are counted as a system message of their text: what the model receives is exactly `report.tokensAfter`. */
const INSTRUCTIONS_UNDERCOUNT = 0;

/** The same message objects, in the same order. */
function sameObjects(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((m, i) => m === b[i]);
}

describe('ctxfold/langchain: a 2,000-message tool-calling conversation replayed through createAgent', () => {
  test('every model call is valid, within budget as counted independently, one summary job at a time, nothing mutated', async () => {
    const conversation = generateConversation({ messages: 2000, seed: 7 });
    const script = replayScript(conversation);
    const model = new RecordingChatModel((messages, call) => script.respond(messages, call));
    const counter = createTokenCounter();
    const mw = ctxfoldMiddleware({ maxContextTokens: MAX, keepLast: 4, counter });
    const reports: CompressReport[] = [];
    mw.compressor.on('compressed', (e) => reports.push(e.report));
    let running = 0;
    let mostRunning = 0;
    let started = 0;
    let ended = 0;
    mw.compressor.on('summary:start', () => {
      started++;
      mostRunning = Math.max(mostRunning, ++running);
    });
    for (const event of ['summary:done', 'summary:failed', 'summary:stale'] as const) {
      mw.compressor.on(event, () => {
        ended++;
        running--;
      });
    }
    // Outermost: checks that nothing inside (our middleware included) touches the state's messages.
    let stateChecks = 0;
    const probe = createMiddleware({
      name: 'StateProbe',
      async wrapModelCall(request, handler) {
        const before = request.state.messages.slice();
        const deep = stateChecks % 25 === 0 ? structuredClone(before) : undefined;
        const response = await handler(request);
        expect(sameObjects(request.state.messages, before)).toBe(true);
        // Compared by hand first: jest's toEqual on a whole history costs seconds over the replay.
        if (deep) { const now = structuredClone(request.state.messages); if (!isDeepStrictEqual(now, deep)) expect(now).toEqual(deep); }
        stateChecks++;
        return response;
      },
    });
    const agent = createAgent({ model, tools: script.tools, systemPrompt: script.systemPrompt, middleware: [probe, mw] });

    let history: BaseMessage[] = [];
    for (let turn = 0; turn < script.turns.length; turn++) {
      const input = [...history, script.turns[turn]];
      const snapshot = turn % 20 === 0 || turn === script.turns.length - 1 ? structuredClone(input) : undefined;
      const result = await agent.invoke({ messages: input }, { configurable: { thread_id: 'replay-1' } });
      if (snapshot) { const now = structuredClone(input); if (!isDeepStrictEqual(now, snapshot)) expect(now).toEqual(snapshot); }
      // The state after the turn holds every message the app had, as the same objects.
      expect(sameObjects(result.messages.slice(0, input.length), input)).toBe(true);
      history = result.messages;
      // Time passes between turns (the user reads and types): background summaries run then.
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await mw.compressor.drain();

    // One model call per recorded assistant message, each with its compression report.
    expect(script.answered()).toBe(conversation.filter((m) => m.role === 'assistant').length);
    expect(model.received).toHaveLength(reports.length);
    // The final state is the whole conversation as the agent built it (nothing summarized away).
    expect(history.length).toBe(conversation.length - 1);

    const toolTokens = model.boundTools.reduce<number>((n, t) => n + counter.text(JSON.stringify(convertToOpenAITool(t as Parameters<typeof convertToOpenAITool>[0]))) + 8, 0);
    let overBudget = 0;
    let compressed = 0;
    let withSummary = 0;
    let largest = 0;
    model.received.forEach((received, k) => {
      const sent = fromLangChain(received);
      // Valid for OpenAI, by the profile and by the independent pairing oracle.
      expect(validateMessages(sent, 'openai')).toEqual([]);
      expect(pairingProblems(sent)).toEqual([]);
      expect(sent[0]).toEqual({ role: 'system', content: script.systemPrompt });
      // What the model received, counted here: the messages (system prompt included) and the tools.
      let recount = counter.requestOverhead + toolTokens;
      for (const m of sent) recount += counter.message(m, openaiChatLens);
      const report = reports[k];
      if (report.overBudget) overBudget++;
      else {
        expect(report.tokensAfter).toBeLessThanOrEqual(MAX);
        expect(recount).toBeLessThanOrEqual(MAX + INSTRUCTIONS_UNDERCOUNT);
      }
      // The report's figure is this count, but for the system prompt (see INSTRUCTIONS_UNDERCOUNT).
      expect(recount - report.tokensAfter).toBe(INSTRUCTIONS_UNDERCOUNT);
      if (report.messagesAfter < report.messagesBefore) compressed++;
      if (report.summary.applied) withSummary++;
      largest = Math.max(largest, received.length);
    });
    expect(compressed).toBeGreaterThan(model.received.length / 2);
    expect(withSummary).toBeGreaterThan(0);
    expect(overBudget).toBeLessThan(model.received.length / 20);
    expect(mostRunning).toBe(1);
    expect(started).toBeGreaterThan(0);
    expect(ended).toBe(started);
    expect(stateChecks).toBe(model.received.length);
    console.log(`langchain replay: ${model.received.length} model calls, ${compressed} compressed, ${withSummary} with a summary, ${overBudget} over budget (protected part alone), ${started} summary jobs, largest view ${largest} messages of ${history.length}`);
    await mw.compressor.close();
  }, 300_000);
});
