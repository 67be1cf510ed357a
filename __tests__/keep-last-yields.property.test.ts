import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { compressContext, createTokenCounter, type CompressOptions, type CompressResult } from '../src/index.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { checkAiSdk } from './helpers/ai-sdk-checker.js';
import { validAiSdkHistory } from './helpers/ai-sdk-arbitraries.js';
import { anthropicProblems } from './helpers/anthropic-checker.js';
import { validAnthropicHistory } from './helpers/anthropic-arbitraries.js';
import { validHistory } from './helpers/arbitraries.js';
import { checkGemini } from './helpers/gemini-checker.js';
import { validGeminiHistory } from './helpers/gemini-arbitraries.js';
import { checkHermes } from './helpers/hermes-checker.js';
import { hermesHistoryArb } from './helpers/hermes-arbitraries.js';
import { checkResponsesInput } from './helpers/openai-responses-checker.js';
import { validResponses } from './helpers/openai-responses-arbitraries.js';
import { pairingProblems } from './helpers/oracle.js';
import { formatPropertyParams } from './helpers/property-runs.js';
import { checkQwenAgent } from './helpers/qwen-agent-checker.js';
import { qwenHistoryArb } from './helpers/qwen-agent-arbitraries.js';
import { smallestYieldingView } from './helpers/smallest-view.js';
import { expectedHeadEnd } from './helpers/view-checks.js';

/**
 * `keepLastYields` (the default): the kept tail gives way to the budget, and nothing else changes. In every
 * format, a view made with it is one the format's own checker accepts (checkers written apart
 * from the planner); it is the very view made without it whenever that one was within budget; it
 * is never over budget when the one without it was not, and never larger. In OpenAI Chat, where
 * the smallest view is worked out here from the messages alone (head, system messages, the last
 * user message and the last unit), it is within budget whenever that smallest view is.
 */

const counter = createTokenCounter();

const optionsArb = fc.record({
  keepFirst: fc.integer({ min: 0, max: 3 }),
  keepLast: fc.integer({ min: 0, max: 12 }),
  maxPermille: fc.integer({ min: 20, max: 1100 }),
  lowWaterMark: fc.constantFrom(undefined, 1, 0.7, 0.5),
  trim: fc.option(fc.constant(true as const), { nil: undefined, freq: 3 }),
});
type Draw = typeof optionsArb extends fc.Arbitrary<infer T> ? T : never;

function optionsFor(messages: readonly unknown[], format: string, o: Draw): CompressOptions {
  const before = compressContext(messages as unknown[], { counter, format: format as CompressOptions['format'] }).report.tokensBefore;
  return {
    counter,
    format: format as CompressOptions['format'],
    keepFirst: o.keepFirst,
    keepLast: o.keepLast,
    maxContextTokens: Math.max(1, Math.floor((before * o.maxPermille) / 1000)),
    // The reference view: the kept tail sent whole.
    keepLastYields: false,
    ...(o.lowWaterMark === undefined ? {} : { lowWaterMark: o.lowWaterMark }),
    ...(o.trim === undefined ? {} : { toolOutputTrim: o.trim }),
  };
}

interface Case {
  readonly format: string;
  readonly history: fc.Arbitrary<unknown[]>;
  readonly problems: (view: readonly unknown[]) => readonly unknown[];
}

const CASES: readonly Case[] = [
  { format: 'openai', history: validHistory() as fc.Arbitrary<unknown[]>, problems: (v) => pairingProblems(v as OpenAIChatMessage[]) },
  { format: 'openai-responses', history: validResponses() as fc.Arbitrary<unknown[]>, problems: (v) => checkResponsesInput(v) },
  { format: 'anthropic', history: validAnthropicHistory() as fc.Arbitrary<unknown[]>, problems: (v) => anthropicProblems(v) },
  { format: 'gemini', history: validGeminiHistory() as fc.Arbitrary<unknown[]>, problems: (v) => checkGemini(v) },
  { format: 'ai-sdk', history: validAiSdkHistory() as fc.Arbitrary<unknown[]>, problems: (v) => checkAiSdk(v) },
  { format: 'hermes', history: hermesHistoryArb as fc.Arbitrary<unknown[]>, problems: (v) => checkHermes(v) },
  { format: 'qwen-agent', history: qwenHistoryArb.map((h) => h.messages) as fc.Arbitrary<unknown[]>, problems: (v) => checkQwenAgent(v) },
];

describe.each(CASES)('keepLastYields, $format', ({ format, history, problems }) => {
  test('valid; the same view when the tail fits; never over budget where the kept tail was not, never larger', () => {
    const seen = { runs: 0, yielded: 0, fitted: 0 };
    fc.assert(
      fc.property(history, optionsArb, (messages, o) => {
        const options = optionsFor(messages, format, o);
        const kept: CompressResult<unknown> = compressContext(messages, options);
        // The default is to yield: the option left out and set to true give the same view.
        const { keepLastYields: _strict, ...byDefault } = options;
        const yielding: CompressResult<unknown> = compressContext(messages, byDefault);
        expect(compressContext(messages, { ...options, keepLastYields: true }).messages).toEqual(yielding.messages);
        expect(problems(yielding.messages)).toEqual([]);
        seen.runs++;
        if (!kept.report.overBudget) {
          expect(yielding.messages).toEqual(kept.messages);
          return;
        }
        seen.yielded++;
        expect(yielding.report.tokensAfter).toBeLessThanOrEqual(kept.report.tokensAfter);
        if (!yielding.report.overBudget) {
          seen.fitted++;
          expect(yielding.report.tokensAfter).toBeLessThanOrEqual(options.maxContextTokens!);
        }
        // The newest message is always sent, as the caller's own object or a cleared copy of it.
        expect(yielding.messages.length).toBeGreaterThan(0);
      }),
      formatPropertyParams(),
    );
    // The runs reached the case the option is for: a kept tail over the budget that then fit.
    expect(seen.fitted).toBeGreaterThan(seen.runs / 50);
  });
});

describe('keepLastYields, OpenAI Chat: within budget whenever the smallest view is', () => {
  test('head, system messages, the last user message and the last unit fit: the view fits; the report names what it kept', () => {
    let fits = 0;
    let yielded = 0;
    let heldSeen = 0;
    fc.assert(
      fc.property(validHistory(), optionsArb, (messages, o) => {
        const options = optionsFor(messages, 'openai', o);
        const { keepLastYields: _strict, ...byDefault } = options;
        const { messages: view, report } = compressContext(messages, byDefault);
        expect(pairingProblems(view)).toEqual([]);
        const { lastUser, lastUnit, tokens: smallest } = smallestYieldingView(messages, o.keepFirst, counter);
        // The last user message and everything from the last unit on are sent untouched.
        if (lastUser >= 0) expect(view).toContain(messages[lastUser]);
        if (!options.toolOutputTrim) for (const m of messages.slice(lastUnit)) expect(view).toContain(m);
        if (smallest <= options.maxContextTokens!) {
          fits++;
          expect(report.overBudget).toBe(false);
          expect(report.tokensAfter).toBeLessThanOrEqual(options.maxContextTokens!);
        }
        if (report.protectedStart > report.tailStart) yielded++;
        // The report says what is kept at the end: every message from protectedStart on, and the
        // last user turn held before it (heldUserTurn) while the rounds after it yielded.
        const held = report.heldUserTurn;
        if (lastUser >= report.headEnd && lastUser < report.protectedStart) {
          expect(held).toBeDefined();
          expect(lastUser).toBeGreaterThanOrEqual(held!.start);
          expect(lastUser).toBeLessThan(held!.end);
        }
        if (held) {
          heldSeen++;
          expect(held.end).toBeLessThanOrEqual(report.protectedStart);
          if (!options.toolOutputTrim) for (const m of messages.slice(held.start, held.end)) expect(view).toContain(m);
        }
        if (!options.toolOutputTrim) for (const m of messages.slice(report.protectedStart)) expect(view).toContain(m);
      }),
      formatPropertyParams(),
    );
    expect(fits).toBeGreaterThan(0);
    expect(yielded).toBeGreaterThan(0);
    expect(heldSeen).toBeGreaterThan(0);
  });

  test('what goes, goes oldest first: every message left out after the head comes before every one kept, but system messages and the last user message', () => {
    let yieldedPastUser = 0;
    fc.assert(
      fc.property(validHistory(), optionsArb.filter((o) => o.trim === undefined), (messages, o) => {
        const options = optionsFor(messages, 'openai', o);
        const { keepLastYields: _strict, ...byDefault } = options;
        const { messages: view } = compressContext(messages, byDefault);
        const kept = new Set<unknown>(view);
        const head = expectedHeadEnd(messages, o.keepFirst);
        const { lastUser } = smallestYieldingView(messages, o.keepFirst, counter);
        let lastLeftOut = -1;
        let firstKept = messages.length;
        messages.forEach((m, i) => {
          if (i < head || m.role === 'system' || m.role === 'developer' || i === lastUser) return;
          if (!kept.has(m)) lastLeftOut = i;
          else firstKept = Math.min(firstKept, i);
        });
        expect({ lastLeftOut, firstKept, ok: lastLeftOut < firstKept }).toMatchObject({ ok: true });
        if (lastUser >= 0 && lastLeftOut > lastUser) yieldedPastUser++;
      }),
      formatPropertyParams(),
    );
    // The runs reached views whose tail gave way past the last user message.
    expect(yieldedPastUser).toBeGreaterThan(0);
  });
});
