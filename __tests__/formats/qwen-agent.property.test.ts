import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { compressContext, type CompressOptions } from '../../src/index.js';
import { MISSING_RESULT_TEXT } from '../../src/core/repair.js';
import { qwenAgentLens } from '../../src/formats/qwen-agent/lens.js';
import type { QwenAgentMessage } from '../../src/formats/qwen-agent/types.js';
import { Fingerprints } from '../../src/runtime/fingerprints.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import { checkQwenAgent } from '../helpers/qwen-agent-checker.js';
import { breakQwenAgent, faultsArb, qwenHistoryArb } from '../helpers/qwen-agent-arbitraries.js';
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
function optionsFor(messages: readonly QwenAgentMessage[], o: Draw): CompressOptions {
  const base = compressContext(messages, { counter, format: 'qwen-agent', keepFirst: o.keepFirst, repair: true }).report;
  const options: CompressOptions = {
    counter,
    format: 'qwen-agent',
    keepFirst: o.keepFirst,
    keepLast: o.keepLast,
    // This file's rules keep the tail whole; the default (it yields) is in keep-last-yields.property.test.ts.
    keepLastYields: false,
    maxContextTokens: o.maxPermille === undefined ? undefined : Math.max(1, Math.floor((base.tokensBefore * o.maxPermille) / 1000)),
    toolOutputTrim: o.trim === undefined ? undefined : { minChars: o.trim },
  };
  if (o.summary !== undefined && base.repaired.length === 0 && base.headEnd < messages.length) {
    const end = base.headEnd + 1 + (o.summary % (messages.length - base.headEnd));
    options.summary = { text: 'what happened so far: tables were listed and queried', coveredIds: new Fingerprints().idsOf(messages, qwenAgentLens, base.headEnd, end) };
  }
  return options;
}

const isWritten = (m: QwenAgentMessage) => typeof m.content === 'string' && (m.content.startsWith('[tool result cleared') || m.content === MISSING_RESULT_TEXT);

function run(messages: QwenAgentMessage[], o: Draw): FormatViewFacts {
  const options = optionsFor(messages, o);
  const snapshot = structuredClone(messages);
  const result = compressContext(messages, options);
  return expectSafeFormatView({
    input: messages,
    snapshot,
    result,
    profile: 'qwen-agent',
    checker: checkQwenAgent,
    maxContextTokens: options.maxContextTokens,
    userText: (m) => m.role === 'user',
    written: isWritten,
  });
}

describe('qwen-agent: every view of a valid history is valid and the caller\'s own', () => {
  test('random Qwen-Agent sessions (parallel calls, reasoning, repeated and missing function_ids, bulky results) at random budgets, with and without a summary', () => {
    const t = { runs: 0, dropped: 0, collapsed: 0, summarized: 0, overBudget: 0 };
    fc.assert(fc.property(qwenHistoryArb, optionsArb, ({ messages }, o) => {
      expect(checkQwenAgent(messages)).toEqual([]);
      const facts = run(messages, o);
      expect(facts.repaired).toBe(0);
      t.runs++;
      if (facts.dropped > 0) t.dropped++;
      if (facts.collapsed > 0) t.collapsed++;
      if (facts.summarized) t.summarized++;
      if (facts.overBudget) t.overBudget++;
    }), formatPropertyParams());
    // The runs reach cuts, cleared results, summaries and budgets too small for the protected tail.
    expect(t.dropped).toBeGreaterThan(t.runs / 5);
    expect(t.collapsed).toBeGreaterThan(0);
    expect(t.summarized).toBeGreaterThan(0);
    expect(t.overBudget).toBeGreaterThan(0);
  });
});

describe('qwen-agent: broken histories are repaired, and only what answers no call is removed', () => {
  test('orphan, duplicated and missing results: the view is valid at any budget', () => {
    let repaired = 0;
    fc.assert(fc.property(qwenHistoryArb, faultsArb, optionsArb, ({ messages, ids }, faults, o) => {
      const broken = breakQwenAgent(messages, ids, faults);
      run(broken.messages, { ...o, summary: undefined });
      repaired++;
    }), formatPropertyParams());
    expect(repaired).toBeGreaterThan(0);
  });

  test('without a budget every real result is kept, exactly the injected ones are removed, and each left-out result gets an error result', () => {
    fc.assert(fc.property(qwenHistoryArb, faultsArb, ({ messages, ids }, faults) => {
      const broken = breakQwenAgent(messages, ids, faults);
      const result = compressContext(broken.messages, { counter, format: 'qwen-agent', keepFirst: 0, keepLast: 0 });
      const removed = result.report.repaired.filter((a) => a.action === 'removed-orphan' || a.action === 'removed-duplicate').map((a) => broken.messages[a.index]);
      expect(new Set(removed)).toEqual(broken.removable);
      for (const m of broken.messages) if (m.role === 'function' && !broken.removable.has(m)) expect(result.messages).toContain(m);
      expect(result.report.repaired.filter((a) => a.action === 'added-result')).toHaveLength(broken.unanswered);
      expect(result.messages.filter((m) => m.content === MISSING_RESULT_TEXT)).toHaveLength(broken.unanswered);
      expect(checkQwenAgent(result.messages)).toEqual([]);
    }), formatPropertyParams());
  });
});
