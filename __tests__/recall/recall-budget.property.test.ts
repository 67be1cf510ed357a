import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { createCompressor, summarizerFromFunction } from '../../src/index.js';
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';
import { openaiChatLens } from '../../src/formats/openai-chat/lens.js';
import { CHAT_RECALL } from '../../src/recall/chat-dialect.js';
import { answerRecallRounds } from '../../src/runtime/recall-rounds.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import { validHistory } from '../helpers/arbitraries.js';
import { pairingProblems } from '../helpers/oracle.js';
import { propertyParams } from '../helpers/property-runs.js';
import { expectedHeadEnd, expectedProtectedStart } from '../helpers/view-checks.js';

/**
 * No summary or recall path sends a view over the budget or an invalid one: random histories,
 * budgets above what the request itself must send, summaries of any length, then recall calls
 * answered round after round (the rounds the OpenAI adapter, the proxy and `wrap` run). Each view
 * is judged by the oracle's pairing rules, and its size against the budget.
 */

const counter = createTokenCounter();
const isSystem = (m: OpenAIChatMessage) => m.role === 'system' || m.role === 'developer';

/** Tokens of what the request itself must send: head, system messages, the kept tail, the request overhead (the oracle's rules). */
function protectedTokens(history: readonly OpenAIChatMessage[], keepLast: number): number {
  const hEnd = expectedHeadEnd(history, 1);
  const pStart = Math.max(hEnd, expectedProtectedStart(history, keepLast));
  let total = counter.requestOverhead;
  history.forEach((m, i) => { if (i < hEnd || i >= pStart || isSystem(m)) total += counter.message(m, openaiChatLens); });
  return total;
}

/** A reply whose only call is a recall call with `args`. */
const recallReply = (k: number, args: unknown) => ({
  id: `r${k}`, object: 'chat.completion',
  choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: `call_recall_${k}`, type: 'function', function: { name: 'ctxfold_recall', arguments: JSON.stringify(args) } }] } }],
});

const recallArgs = fc.oneof(
  fc.record({ ids: fc.array(fc.constantFrom('#1', '#2', '#3', '#999'), { minLength: 1, maxLength: 3 }) }),
  fc.record({ query: fc.constantFrom('result', 'the', 'call', 'value') }),
);

describe('summary and recall paths stay within the budget', () => {
  test('random histories, budgets, summaries and recall rounds: every view valid and within budget when the request itself fits', async () => {
    let rounds = 0;
    let summarized = 0;
    await fc.assert(fc.asyncProperty(
      validHistory(), fc.integer({ min: 0, max: 6 }), fc.integer({ min: 150, max: 2500 }), fc.integer({ min: 1, max: 300 }),
      fc.array(recallArgs, { minLength: 1, maxLength: 3 }),
      async (generated, keepLast, slack, lines, asks) => {
        const history: OpenAIChatMessage[] = [...generated, { role: 'user', content: 'Go on, and check what you found earlier.' }];
        const store = new MemoryStore();
        const summarizer = summarizerFromFunction(async () => Array.from({ length: lines }, (_, k) => `- item ${k}: value ${k * 13}`).join('\n'));
        // The recall tool is part of every request: the budget leaves room for it.
        const probe = createCompressor({ recall: true, store: new MemoryStore(), counter, keepLast });
        const toolCost = (await probe.compress('probe', history, {})).report.requestExtraTokens;
        const maxContextTokens = protectedTokens(history, keepLast) + toolCost + slack;
        const c = createCompressor({ maxContextTokens, compressionThresholdTokens: Math.max(1, Math.floor(maxContextTokens / 2)), keepLast, recall: { rounds: asks.length }, store, counter, summarizer });
        // The views sent: the first two requests', then each round's (the view of the compress
        // call right before it is asked; the rounds may compress more to size their answers).
        const views: { messages: OpenAIChatMessage[]; sent: number; where: string }[] = [];
        const seen = (r: Awaited<ReturnType<typeof c.compress>>, where: string) => views.push({ messages: r.messages as unknown as OpenAIChatMessage[], sent: r.report.tokensAfter + r.report.reservedOutputTokens, where });
        let latest: Awaited<ReturnType<typeof c.compress>> | undefined;
        const compressor = {
          recall: c.recall,
          compress: async <M>(chatId: string, messages: M[], request?: Parameters<typeof c.compress>[2]) => {
            const r = await c.compress(chatId, messages, request);
            latest = r as unknown as Awaited<ReturnType<typeof c.compress>>;
            return r;
          },
        };
        const first = await c.compress('chat', history, {});
        seen(first, 'first request');
        c.afterResponse('chat', history, first.report);
        await c.drain();
        const second = await c.compress('chat', history, {});
        seen(second, 'after the summary');
        if (second.report.summary.applied) summarized++;
        let k = 0;
        const outcome = await answerRecallRounds(recallReply(k, asks[0]), second.report, {
          compressor, dialect: CHAT_RECALL, chatId: 'chat', history, extras: {},
          ask: async (view) => {
            expect(view.messages).toBe(latest!.messages);
            seen(latest!, `round ${k + 1}`);
            k++;
            return k < asks.length ? recallReply(k, asks[k]) : { id: 'done', object: 'chat.completion', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'ok' } }] };
          },
        });
        rounds += outcome.rounds;
        for (const v of views) {
          expect({ where: v.where, problems: pairingProblems(v.messages) }).toEqual({ where: v.where, problems: [] });
          expect({ where: v.where, within: v.sent <= maxContextTokens, sent: v.sent, max: maxContextTokens }).toMatchObject({ where: v.where, within: true });
        }
      },
    ), { ...propertyParams(), numRuns: Math.min(100, propertyParams().numRuns) });
    process.stdout.write(`recall budget property: ${summarized} views with a summary, ${rounds} recall rounds answered\n`);
    // The property must reach summaries and answered rounds, not only the first view.
    expect(summarized).toBeGreaterThan(20);
    expect(rounds).toBeGreaterThan(50);
  });
});
