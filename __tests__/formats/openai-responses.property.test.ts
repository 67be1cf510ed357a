import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { compressContext, createTokenCounter, repairHistory, validateMessages, type CompressOptions, type CompressResult } from '../../src/index.js';
import { openaiResponsesLens } from '../../src/formats/openai-responses/lens.js';
import type { ResponsesItem } from '../../src/formats/openai-responses/types.js';
import { memoizedLens } from '../../src/formats/lens.js';
import { buildGroups } from '../../src/core/groups.js';
import { headEnd } from '../../src/core/boundary.js';
import { Fingerprints } from '../../src/runtime/fingerprints.js';
import { checkResponsesInput } from '../helpers/openai-responses-checker.js';
import { brokenResponses, validResponses } from '../helpers/openai-responses-arbitraries.js';
import { formatPropertyParams } from '../helpers/property-runs.js';

const counter = createTokenCounter();
const lens = openaiResponsesLens;
const FORMAT = 'openai-responses' as const;

/** Planning options; budgets are given per mille of the history's own size (1 token up to 1.2x). */
const optionsArb = fc.record({
  keepFirst: fc.integer({ min: 0, max: 3 }),
  keepLast: fc.integer({ min: 0, max: 8 }),
  maxPermille: fc.option(fc.integer({ min: 1, max: 1200 }), { nil: undefined, freq: 8 }),
  trim: fc.option(fc.oneof(fc.boolean(), fc.record({ minChars: fc.integer({ min: 0, max: 4000 }) })), { nil: undefined, freq: 3 }),
  summaryRole: fc.constantFrom('user' as const, 'system' as const),
  summary: fc.option(fc.record({ pick: fc.nat(), text: fc.constantFrom('The user asked for files; two were read.', 'Earlier: a search, then a fix.') }), { nil: undefined, freq: 3 }),
});
type OptionDraw = typeof optionsArb extends fc.Arbitrary<infer T> ? T : never;

const isSystemItem = (m: ResponsesItem) => m.type === 'compaction' || ((m.type === undefined || m.type === 'message') && (m.role === 'system' || m.role === 'developer'));
const isUserMessage = (m: ResponsesItem) => (m.type === undefined || m.type === 'message') && m.role === 'user';
const isOutputItem = (m: ResponsesItem) => typeof m.type === 'string' && m.type.endsWith('_output');

/** A collapsed copy: the same item with its output replaced by the placeholder. */
function isCollapsedCopy(out: ResponsesItem, original: ResponsesItem): boolean {
  return out !== original && typeof out.output === 'string' && out.output.startsWith('[tool result cleared')
    && isDeepStrictEqual({ ...out, output: null }, { ...original, output: null });
}

const isSummary = (m: ResponsesItem) => m.type === 'message' && typeof m.content === 'string' && m.content.startsWith('[Summary of');

/** Options for one history, with the summary's coverage computed on the history the plan works on. */
function optionsFor(input: ResponsesItem[], ref: readonly ResponsesItem[], o: OptionDraw): CompressOptions {
  let max: number | undefined;
  if (o.maxPermille !== undefined) {
    const before = compressContext(input, { counter, format: FORMAT }).report.tokensBefore;
    max = Math.max(1, Math.floor((before * o.maxPermille) / 1000));
  }
  let summary: CompressOptions['summary'];
  if (o.summary) {
    const h = headEnd(buildGroups(ref, memoizedLens(lens)), o.keepFirst);
    if (h < ref.length) {
      const cut = h + 1 + (o.summary.pick % (ref.length - h));
      summary = { text: o.summary.text, coveredIds: new Fingerprints().idsOf(ref, lens, h, cut) };
    }
  }
  // This file's rules keep the tail whole; the default (it yields) is in keep-last-yields.property.test.ts.
  return { counter, format: FORMAT, keepFirst: o.keepFirst, keepLast: o.keepLast, keepLastYields: false, maxContextTokens: max, toolOutputTrim: o.trim, summaryRole: o.summaryRole, summary };
}

interface Facts {
  dropped: boolean;
  collapsed: boolean;
  overBudget: boolean;
  summarized: boolean;
  repaired: boolean;
}

/** Asserts every invariant of a view made from `input` (see the test names); `ref` is the history the plan worked on. */
function checkView(input: readonly ResponsesItem[], ref: readonly ResponsesItem[], result: CompressResult<ResponsesItem>, max: number | undefined): Facts {
  const { messages: view, report } = result;
  // Valid for the provider profile and for the independent checker.
  expect(validateMessages(view, FORMAT)).toEqual([]);
  expect(checkResponsesInput(view)).toEqual([]);

  // Every item is the plan's own object, in order: kept (===), a repair's output (equal), a collapsed copy, or the summary.
  const inputs = new Set(input);
  const position: number[] = [];
  let j = 0;
  for (const o of view) {
    if (isSummary(o) && !inputs.has(o)) {
      position.push(-1);
      continue;
    }
    const matches = (i: number) => o === ref[i] || (!inputs.has(ref[i]) && isDeepStrictEqual(o, ref[i])) || isCollapsedCopy(o, ref[i]);
    while (j < ref.length && !matches(j)) j++;
    assert.ok(j < ref.length, `view item ${JSON.stringify(o).slice(0, 160)} is not an item of the history kept in order`);
    position.push(j++);
  }
  expect(view.filter(isSummary).length).toBe(report.summary.applied ? 1 : 0);
  for (const c of report.collapsed) assert.ok(view.some((o) => isCollapsedCopy(o, ref[c.index])), `collapsed item ${c.index} is not in the view`);

  // A reasoning item goes out with the very item that followed it.
  view.forEach((o, k) => {
    if (o.type === 'reasoning') assert.equal(view[k + 1], ref[position[k] + 1], `reasoning item ${String(o.id)} lost the item after it`);
  });

  // The last user message is kept, as the caller's object.
  let lastUser = -1;
  ref.forEach((m, i) => { if (isUserMessage(m)) lastUser = i; });
  if (lastUser >= 0) expect(view).toContain(ref[lastUser]);

  // The reported size is a recount of the view; within budget whenever the protected part fits.
  let recount = counter.requestOverhead;
  for (const m of view) recount += counter.message(m, lens);
  assert.equal(report.tokensAfter, recount, 'tokensAfter is not a recount of the view');
  if (max !== undefined) {
    let floor = counter.requestOverhead;
    ref.forEach((m, i) => { if (i < report.headEnd || i >= report.protectedStart || isSystemItem(m)) floor += counter.message(m, lens); });
    if (floor <= max) assert.ok(report.tokensAfter <= max, `view of ${report.tokensAfter} tokens over the limit ${max} while the protected part is ${floor}`);
    if (!report.overBudget) assert.ok(report.tokensAfter <= max);
  }
  return {
    dropped: report.droppedCounts.budget > 0,
    collapsed: report.collapsed.length > 0,
    overBudget: report.overBudget,
    summarized: report.summary.applied,
    repaired: report.repaired.length > 0,
  };
}

function tally() {
  const t = { runs: 0, dropped: 0, collapsed: 0, overBudget: 0, summarized: 0, repaired: 0 };
  return {
    t,
    add(f: Facts) {
      t.runs++;
      if (f.dropped) t.dropped++;
      if (f.collapsed) t.collapsed++;
      if (f.overBudget) t.overBudget++;
      if (f.summarized) t.summarized++;
      if (f.repaired) t.repaired++;
    },
  };
}

describe('openai-responses: every compressed view is valid', () => {
  test('valid histories: valid view (profile and checker), own objects unchanged, reasoning with its item, last user kept, budget kept', () => {
    const { t, add } = tally();
    fc.assert(fc.property(validResponses(), optionsArb, (items, o) => {
      const before = JSON.stringify(items);
      const clone = structuredClone(items);
      expect(validateMessages(items, FORMAT)).toEqual([]);
      expect(checkResponsesInput(items)).toEqual([]);
      const options = optionsFor(items, items, o);
      const result = compressContext(items, options);
      // The caller's items are untouched: reasoning and encrypted content byte-identical.
      expect(JSON.stringify(items)).toBe(before);
      expect(items).toEqual(clone);
      add(checkView(items, items, result, options.maxContextTokens));
    }), formatPropertyParams());
    expect(t.repaired).toBe(0);
    expect(t.dropped).toBeGreaterThan(t.runs / 10);
    expect(t.collapsed).toBeGreaterThan(0);
    expect(t.overBudget).toBeGreaterThan(0);
    expect(t.summarized).toBeGreaterThan(0);
  });

  test('broken histories: repaired to a valid view; only injected orphans and second outputs are removed, never a real output', () => {
    const { t, add } = tally();
    fc.assert(fc.property(brokenResponses(), optionsArb, ({ items, injected }, o) => {
      const before = JSON.stringify(items);
      expect(validateMessages(items, FORMAT).length + checkResponsesInput(items).length).toBeGreaterThan(0);
      const repaired = repairHistory(items, { format: FORMAT });
      const ref = repaired.messages as ResponsesItem[];
      for (const a of repaired.actions) {
        if (a.action === 'removed-orphan' || a.action === 'removed-duplicate') assert.ok(injected.has(items[a.index]), `repair removed input[${a.index}], which was not injected`);
      }
      // Every real output (not injected) is still there, as the caller's object.
      const kept = new Set(ref);
      for (const m of items) if (isOutputItem(m) && !injected.has(m)) assert.ok(kept.has(m), `a real output for ${String(m.call_id ?? m.id)} was removed`);
      // A call whose outputs were all taken out gets one synthetic output.
      expect(validateMessages(ref, FORMAT)).toEqual([]);
      expect(checkResponsesInput(ref)).toEqual([]);
      const options = optionsFor(items, ref, o);
      const result = compressContext(items, options);
      expect(JSON.stringify(items)).toBe(before);
      add(checkView(items, ref, result, options.maxContextTokens));
    }), formatPropertyParams());
    expect(t.repaired).toBe(t.runs);
    expect(t.dropped).toBeGreaterThan(t.runs / 10);
  });
});
