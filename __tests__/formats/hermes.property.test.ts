import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { compressContext, type CompressOptions } from '../../src/index.js';
import { MISSING_RESULT_TEXT } from '../../src/core/repair.js';
import { hermesLens } from '../../src/formats/hermes/lens.js';
import type { HermesMessage } from '../../src/formats/hermes/types.js';
import { Fingerprints } from '../../src/runtime/fingerprints.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import { checkHermes } from '../helpers/hermes-checker.js';
import { breakHermes, faultsArb, hermesHistoryArb } from '../helpers/hermes-arbitraries.js';
import { expectSafeFormatView, type FormatViewFacts } from '../helpers/qwen-agent-view-checks.js';
import { formatPropertyParams } from '../helpers/property-runs.js';

const counter = createTokenCounter();

/** Planning options drawn per run; budgets are per mille of the history's own size (tiny to generous). */
const optionsArb = fc.record({
  keepFirst: fc.integer({ min: 0, max: 3 }),
  keepLast: fc.integer({ min: 0, max: 10 }),
  maxPermille: fc.option(fc.integer({ min: 0, max: 1200 }), { nil: undefined, freq: 8 }),
  trim: fc.option(fc.integer({ min: 0, max: 3000 }), { nil: undefined, freq: 3 }),
  summary: fc.option(fc.nat(), { nil: undefined, freq: 3 }),
});
type Draw = typeof optionsArb extends fc.Arbitrary<infer T> ? T : never;

/** Options for one run; a summary covers the messages from the head to a drawn point. */
function optionsFor(messages: readonly HermesMessage[], o: Draw): CompressOptions {
  const base = compressContext(messages, { counter, format: 'hermes', keepFirst: o.keepFirst, repair: true }).report;
  const options: CompressOptions = {
    counter,
    format: 'hermes',
    keepFirst: o.keepFirst,
    keepLast: o.keepLast,
    // This file's rules keep the tail whole; the default (it yields) is in keep-last-yields.property.test.ts.
    keepLastYields: false,
    maxContextTokens: o.maxPermille === undefined ? undefined : Math.max(1, Math.floor((base.tokensBefore * o.maxPermille) / 1000)),
    toolOutputTrim: o.trim === undefined ? undefined : { minChars: o.trim },
  };
  if (o.summary !== undefined && base.repaired.length === 0 && base.headEnd < messages.length) {
    const end = base.headEnd + 1 + (o.summary % (messages.length - base.headEnd));
    options.summary = { text: 'what happened so far: tables were listed and queried', coveredIds: new Fingerprints().idsOf(messages, hermesLens, base.headEnd, end) };
  }
  return options;
}

/** A results message ctxfold wrote or changed: a cleared result, a repair's error results, a faulty message with a block removed or added. */
const isWritten = (m: HermesMessage) => m.role === 'user' && (m.content.includes('[tool result cleared') || m.content.includes(MISSING_RESULT_TEXT) || m.content.includes('<tool_response>'));

/** A user message the Qwen template counts as a query (not only <tool_response> blocks). */
const isQuery = (m: HermesMessage) => m.role === 'user' && !(m.content.trim().startsWith('<tool_response>') && m.content.trim().endsWith('</tool_response>'));

function run(messages: HermesMessage[], o: Draw): FormatViewFacts {
  const options = optionsFor(messages, o);
  const snapshot = structuredClone(messages);
  const result = compressContext(messages, options);
  return expectSafeFormatView({
    input: messages,
    snapshot,
    result,
    profile: 'hermes',
    checker: checkHermes,
    maxContextTokens: options.maxContextTokens,
    userText: isQuery,
    ownText: (m) => m.content.replace(/<tool_response>[\s\S]*?<\/tool_response>/g, '').trim(),
    written: isWritten,
  });
}

describe('hermes: every view of a valid history is valid and the caller\'s own', () => {
  test('random Hermes sessions (several <tool_call> blocks per message, <think> reasoning, user notes beside results, bulky results) at random budgets, with and without a summary', () => {
    const t = { runs: 0, dropped: 0, collapsed: 0, summarized: 0, overBudget: 0 };
    fc.assert(fc.property(hermesHistoryArb, optionsArb, (messages, o) => {
      expect(checkHermes(messages)).toEqual([]);
      const facts = run(messages, o);
      expect(facts.repaired).toBe(0);
      t.runs++;
      if (facts.dropped > 0) t.dropped++;
      if (facts.collapsed > 0) t.collapsed++;
      if (facts.summarized) t.summarized++;
      if (facts.overBudget) t.overBudget++;
    }), formatPropertyParams());
    expect(t.dropped).toBeGreaterThan(t.runs / 5);
    expect(t.collapsed).toBeGreaterThan(0);
    expect(t.summarized).toBeGreaterThan(0);
    expect(t.overBudget).toBeGreaterThan(0);
  });
});

describe('hermes: broken histories are repaired, and only blocks that answer no call are removed', () => {
  test('orphan results, one <tool_response> too many, missing ones: the view is valid at any budget', () => {
    let runs = 0;
    fc.assert(fc.property(hermesHistoryArb, faultsArb, fc.boolean(), optionsArb, (messages, faults, inMessage, o) => {
      const broken = breakHermes(messages, faults, inMessage);
      run(broken.messages, { ...o, summary: undefined });
      runs++;
    }), formatPropertyParams());
    expect(runs).toBeGreaterThan(0);
  });

  test('without a budget every real <tool_response> is kept, exactly the injected blocks are removed, and each missing one gets an error block', () => {
    const blocks = (ms: readonly HermesMessage[]) => ms.filter((m) => m.role === 'user').flatMap((m) => [...m.content.matchAll(/<tool_response>\n([\s\S]*?)\n<\/tool_response>/g)].map((x) => x[1]));
    fc.assert(fc.property(hermesHistoryArb, faultsArb, fc.boolean(), (messages, faults, inMessage) => {
      const broken = breakHermes(messages, faults, inMessage);
      const result = compressContext(broken.messages, { counter, format: 'hermes', keepFirst: 0, keepLast: 0 });
      const removed = result.report.repaired.filter((a) => a.action === 'removed-orphan' || a.action === 'removed-duplicate');
      expect(removed).toHaveLength(broken.extraBlocks);
      for (const a of removed) expect(broken.removable.has(broken.messages[a.index])).toBe(true);
      // Every block of the broken input that answers a call is still there, in order.
      const kept = blocks(result.messages).filter((b) => b !== MISSING_RESULT_TEXT);
      const real = blocks(broken.messages).filter((b) => b !== 'a result nobody asked for' && b !== 'one too many');
      expect(kept).toEqual(real);
      expect(result.report.repaired.filter((a) => a.action === 'added-result')).toHaveLength(broken.unanswered);
      expect(blocks(result.messages).filter((b) => b === MISSING_RESULT_TEXT)).toHaveLength(broken.unanswered);
      expect(checkHermes(result.messages)).toEqual([]);
    }), formatPropertyParams());
  });
});

describe('hermes: the user wrote while the tools ran', () => {
  test('a user message between a call turn and its results message: every response is kept and goes first into that message, the user\'s words after (then the results message\'s own note)', () => {
    const blocks = (ms: readonly HermesMessage[]) => ms.filter((m) => m.role === 'user').flatMap((m) => [...m.content.matchAll(/<tool_response>\n([\s\S]*?)\n<\/tool_response>/g)].map((x) => x[1]));
    const onlyResponses = (m: HermesMessage | undefined) => m !== undefined && m.role === 'user' && m.content.trim().startsWith('<tool_response>');
    let noted = 0;
    let moved = 0;
    fc.assert(fc.property(hermesHistoryArb, fc.nat(), fc.constantFrom('wait, one more thing', 'also 2024-05-01 please'), (messages, pick, words) => {
      const spots = messages.map((m, i) => (m.role === 'assistant' && m.content.includes('<tool_call>') && onlyResponses(messages[i + 1]) ? i + 1 : -1)).filter((i) => i >= 0);
      fc.pre(spots.length > 0);
      const at = spots[pick % spots.length];
      const interjected: HermesMessage[] = [...messages.slice(0, at), { role: 'user', content: words }, ...messages.slice(at)];
      const result = compressContext(interjected, { counter, format: 'hermes', keepFirst: 0, keepLast: 0 });
      expect(blocks(result.messages)).toEqual(blocks(messages));
      expect(blocks(result.messages)).not.toContain(MISSING_RESULT_TEXT);
      const text = messages[at].content;
      const end = text.lastIndexOf('</tool_response>') + '</tool_response>'.length;
      const note = text.slice(end).trim();
      if (note !== '') noted++;
      expect(result.messages[at]).toEqual({ role: 'user', content: `${text.slice(0, end).trim()}\n\n${words}${note === '' ? '' : `\n\n${note}`}` });
      expect(checkHermes(result.messages)).toEqual([]);
      moved++;
    }), formatPropertyParams());
    expect(moved).toBeGreaterThan(0);
    expect(noted).toBeGreaterThan(0);
  });
});
