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

/**
 * The same order of drops in every other format, judged from the messages alone with each
 * format's own reading of "system" and "the user's turn" (provider rules, not the lenses): the
 * messages a yielding view leaves out, among those neither system-like nor the last user turn,
 * all come before the ones it keeps, after a kept head of at least `keepFirst` messages when
 * anything is left out.
 */
interface OrderCase {
  readonly format: string;
  readonly history: fc.Arbitrary<unknown[]>;
  /** A message the provider reads as instructions, sent however short the view. */
  readonly isSystem: (m: any) => boolean;
  /** A message carrying the user's own words (not only tool results). */
  readonly isUserTurn: (m: any) => boolean;
  /** A user turn that also answers tool calls: the message right before it holds those calls (the provider's rule), so it is sent too. */
  readonly answersCalls?: (m: any) => boolean;
}

const CLOSE = '</tool_response>';
const textAfterLastResponse = (s: string) => s.slice(s.lastIndexOf(CLOSE) + CLOSE.length).trim();

const ORDER_CASES: readonly OrderCase[] = [
  {
    format: 'openai-responses',
    history: validResponses() as fc.Arbitrary<unknown[]>,
    isSystem: (m) => (m.type === undefined || m.type === 'message') && (m.role === 'system' || m.role === 'developer'),
    isUserTurn: (m) => (m.type === undefined || m.type === 'message') && m.role === 'user',
  },
  {
    format: 'anthropic',
    history: validAnthropicHistory() as fc.Arbitrary<unknown[]>,
    isSystem: () => false,
    isUserTurn: (m) => m.role === 'user' && (typeof m.content === 'string' || m.content.some((b: { type: string }) => b.type !== 'tool_result')),
    answersCalls: (m) => Array.isArray(m.content) && m.content.some((b: { type: string }) => b.type === 'tool_result'),
  },
  {
    format: 'gemini',
    history: validGeminiHistory() as fc.Arbitrary<unknown[]>,
    isSystem: () => false,
    isUserTurn: (m) => m.role !== 'model' && m.parts.some((p: Record<string, unknown>) => 'text' in p) && !m.parts.some((p: Record<string, unknown>) => 'functionResponse' in p),
  },
  {
    format: 'ai-sdk',
    history: validAiSdkHistory() as fc.Arbitrary<unknown[]>,
    isSystem: (m) => m.role === 'system',
    isUserTurn: (m) => m.role === 'user',
  },
  {
    format: 'hermes',
    history: hermesHistoryArb as fc.Arbitrary<unknown[]>,
    isSystem: (m) => m.role === 'system',
    isUserTurn: (m) => m.role === 'user' && (!m.content.includes('<tool_response>') || textAfterLastResponse(m.content) !== ''),
    answersCalls: (m) => m.content.includes('<tool_response>'),
  },
  {
    format: 'qwen-agent',
    history: qwenHistoryArb.map((h) => h.messages) as fc.Arbitrary<unknown[]>,
    isSystem: (m) => m.role === 'system',
    isUserTurn: (m) => m.role === 'user',
  },
];

/** What `dropOrder` found in one view. */
interface DropOrder {
  /** Index of the first and last message left out (none: -1), and of the first kept after the first left out, exempt ones aside. */
  readonly firstLeftOut: number;
  readonly lastLeftOut: number;
  readonly firstKeptAfter: number;
  /** The last user turn answers calls, and something after it was left out. */
  readonly heldWithCalls: boolean;
}

/** Reads, from the messages and the view alone, where a view's drops fall (see `OrderCase`). */
function dropOrder(c: OrderCase, messages: readonly unknown[], view: readonly unknown[]): DropOrder {
  const kept = new Set<unknown>(view);
  let lastUser = -1;
  messages.forEach((m, i) => {
    if (c.isUserTurn(m)) lastUser = i;
  });
  const calls = lastUser > 0 && c.answersCalls?.(messages[lastUser]) ? lastUser - 1 : -1;
  const exempt = (m: unknown, i: number) => c.isSystem(m) || i === lastUser || i === calls;
  let firstLeftOut = messages.length;
  let lastLeftOut = -1;
  messages.forEach((m, i) => {
    if (exempt(m, i) || kept.has(m)) return;
    firstLeftOut = Math.min(firstLeftOut, i);
    lastLeftOut = i;
  });
  let firstKeptAfter = messages.length;
  messages.forEach((m, i) => {
    if (i > firstLeftOut && !exempt(m, i) && kept.has(m)) firstKeptAfter = Math.min(firstKeptAfter, i);
  });
  return { firstLeftOut: lastLeftOut < 0 ? -1 : firstLeftOut, lastLeftOut, firstKeptAfter, heldWithCalls: calls >= 0 && lastLeftOut > lastUser };
}

describe.each(ORDER_CASES)('keepLastYields, $format: what goes, goes oldest first', (c) => {
  test('every message left out comes before every one kept, but system messages and the last user turn (with the calls it answers); a head of at least keepFirst stays', () => {
    let leftOutRuns = 0;
    let heldWithCalls = 0;
    fc.assert(
      fc.property(c.history, optionsArb.filter((o) => o.trim === undefined), (messages, o) => {
        const options = optionsFor(messages, c.format, o);
        const { keepLastYields: _strict, ...byDefault } = options;
        const drops = dropOrder(c, messages, compressContext(messages, byDefault).messages);
        if (drops.lastLeftOut < 0) return;
        leftOutRuns++;
        if (drops.heldWithCalls) heldWithCalls++;
        // One run of drops: nothing kept between the first and the last message left out.
        expect({ ...drops, ok: drops.firstKeptAfter > drops.lastLeftOut }).toMatchObject({ ok: true });
        // The head: at least the first keepFirst messages (fewer only when there are not that many).
        expect(drops.firstLeftOut).toBeGreaterThanOrEqual(Math.min(o.keepFirst, messages.length));
      }),
      formatPropertyParams(),
    );
    expect(leftOutRuns).toBeGreaterThan(0);
    // Anthropic's histories reach a user turn that answers calls, held while later rounds went
    // (Hermes's generated histories do not: the example below covers it).
    if (c.format === 'anthropic') expect(heldWithCalls).toBeGreaterThan(0);
  });
});

test('keepLastYields, hermes: a user turn that answers calls and adds words is held with its calls while the rounds after it go', () => {
  const call = (q: string) => ({ role: 'assistant', content: `<tool_call>\n{"name": "read_file", "arguments": {"q": "${q}"}}\n</tool_call>` });
  const results = (text: string) => `<tool_response>\n${text}\n</tool_response>`;
  const messages = [
    { role: 'system', content: 'Answer with the tools. <tools>[{"type":"function","function":{"name":"read_file","parameters":{"type":"object","properties":{"q":{"type":"string"}}}}}]</tools>' },
    { role: 'user', content: 'first question' },
    call('a'), { role: 'user', content: results('a small result') },
    { role: 'assistant', content: 'first answer' },
    { role: 'user', content: 'second question' },
    call('b'), { role: 'user', content: `${results('result b')}\n\nplease also check c` },
    call('c'), { role: 'user', content: results(`c ${'word '.repeat(700)}`) },
    call('d'), { role: 'user', content: results('result d') },
    { role: 'assistant', content: 'final answer' },
  ];
  const { messages: view, report } = compressContext(messages, { counter, format: 'hermes', keepFirst: 0, keepLast: 0, maxContextTokens: 200 });
  expect(report.overBudget).toBe(false);
  expect(checkHermes(view)).toEqual([]);
  const drops = dropOrder(ORDER_CASES.find((x) => x.format === 'hermes')!, messages, view);
  expect(drops.heldWithCalls).toBe(true);
  expect(drops.firstKeptAfter).toBeGreaterThan(drops.lastLeftOut);
});
