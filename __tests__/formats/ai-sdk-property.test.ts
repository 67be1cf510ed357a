import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { compressContext, createTokenCounter, repairHistory, validateMessages, type CompressOptions, type CompressResult } from '../../src/index.js';
import { aiSdkLens } from '../../src/formats/ai-sdk/lens.js';
import { buildGroups } from '../../src/core/groups.js';
import type { AiSdkMessage, AiSdkPart } from '../../src/formats/ai-sdk/types.js';
import { Fingerprints } from '../../src/runtime/fingerprints.js';
import { messageTokens } from '../../src/tokens/accounting.js';
import { brokenAiSdkHistory, validAiSdkHistory } from '../helpers/ai-sdk-arbitraries.js';
import { checkAiSdk } from '../helpers/ai-sdk-checker.js';
import { formatPropertyParams } from '../helpers/property-runs.js';

/**
 * Properties of `compressContext` on AI SDK histories, checked with the `ai-sdk` profile AND the
 * independent checker: every view is valid; every kept input message is the caller's own object,
 * unchanged (reasoning signatures byte-identical); the last user message is kept; the view fits the
 * budget whenever the protected part does. Broken histories are repaired into valid views, and
 * repair never deletes a result that answers a call.
 */

const counter = createTokenCounter();

const optionsArb = fc.record({
  keepFirst: fc.integer({ min: 0, max: 3 }),
  keepLast: fc.integer({ min: 0, max: 8 }),
  maxPermille: fc.option(fc.integer({ min: 1, max: 1200 }), { nil: undefined, freq: 8 }),
  trim: fc.option(fc.record({ minChars: fc.integer({ min: 0, max: 3000 }) }), { nil: undefined, freq: 3 }),
  summary: fc.option(fc.record({ text: fc.constantFrom('the user asked for files; the tools answered', 'earlier: three searches, two failed'), endPick: fc.nat() }), { nil: undefined, freq: 3 }),
  summaryRole: fc.constantFrom<'user' | 'system'>('user', 'system'),
});
type OptionDraw = typeof optionsArb extends fc.Arbitrary<infer T> ? T : never;

/** The summary, when drawn: it covers messages from the head to a point inside the droppable middle. */
function summaryFor(messages: readonly AiSdkMessage[], o: OptionDraw, base: CompressOptions): CompressOptions['summary'] {
  if (!o.summary) return undefined;
  const fresh = compressContext(messages, base).report;
  const start = fresh.headEnd;
  const room = fresh.tailStart - start;
  if (room <= 0) return undefined;
  const end = start + 1 + (o.summary.endPick % room);
  return { text: o.summary.text, coveredIds: new Fingerprints().idsOf(messages, aiSdkLens, start, end) };
}

function optionsFor(messages: readonly AiSdkMessage[], o: OptionDraw): CompressOptions {
  const base: CompressOptions = { format: 'ai-sdk', counter, keepFirst: o.keepFirst, keepLast: o.keepLast, toolOutputTrim: o.trim, summaryRole: o.summaryRole };
  const before = compressContext(messages, base).report.tokensBefore;
  const withBudget = { ...base, maxContextTokens: o.maxPermille === undefined ? undefined : Math.max(1, Math.floor((before * o.maxPermille) / 1000)) };
  return { ...withBudget, summary: summaryFor(messages, o, withBudget) };
}

const isPlaceholder = (v: unknown) => typeof v === 'string' && v.startsWith('[tool result cleared');

/** True when `out` is `original` with some tool-result outputs replaced by a cleared placeholder. */
function isCollapsedCopy(out: AiSdkMessage, original: AiSdkMessage): boolean {
  if (out.role !== 'tool' || original.role !== 'tool' || out.content.length !== original.content.length) return false;
  return (out.content as AiSdkPart[]).every((p, k) => {
    const o = (original.content as AiSdkPart[])[k];
    if (p === o) return true;
    const cleared = isObj(p.output) && p.output.type === 'text' && isPlaceholder(p.output.value);
    return cleared && isDeepStrictEqual({ ...p, output: null }, { ...o, output: null });
  });
}
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

interface Facts { dropped: boolean; collapsed: boolean; summarized: boolean; overBudget: boolean; repaired: boolean }

/** Everything that must hold of a view of a valid history. */
function checkValidView(messages: AiSdkMessage[], frozen: AiSdkMessage[], options: CompressOptions, result: CompressResult<AiSdkMessage>): Facts {
  const { messages: view, report } = result;
  expect(validateMessages(view, 'ai-sdk')).toEqual([]);
  expect(checkAiSdk(view)).toEqual([]);
  expect(report.repaired).toEqual([]);
  expect(report.format).toBe('ai-sdk');
  // The input is untouched (signatures, provider options and all), and each kept message is the caller's object.
  expect(messages).toEqual(frozen); // jest equality: structuredClone's objects come from another realm
  const inputs = new Set(messages);
  const collapsed = new Set(report.collapsed.map((c) => c.index));
  let j = 0;
  let summaries = 0;
  for (const m of view) {
    if (inputs.has(m)) {
      while (j < messages.length && messages[j] !== m) j++;
      assert.ok(j < messages.length, 'a kept message is out of order');
      j++;
      continue;
    }
    const text: string = (typeof m.content === 'string' ? m.content : Array.isArray(m.content) && m.content.length === 1 && m.content[0].type === 'text' ? m.content[0].text : '') ?? '';
    if (text.startsWith('[Summary of ')) {
      summaries++;
      continue;
    }
    while (j < messages.length && !(collapsed.has(j) && isCollapsedCopy(m, messages[j]))) j++;
    assert.ok(j < messages.length, `view message ${JSON.stringify(m).slice(0, 160)} is neither an input message, a collapsed copy nor the summary`);
    j++;
  }
  expect(summaries).toBe(report.summary.applied ? 1 : 0);
  // The last user message is kept.
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  if (lastUser >= 0) expect(view).toContain(messages[lastUser]);
  // Within budget whenever the protected part fits; the report recounts the view.
  let recount = counter.requestOverhead;
  for (const m of view) recount += messageTokens(m, aiSdkLens, counter.text) ;
  expect(report.tokensAfter).toBe(recount);
  if (options.maxContextTokens !== undefined && !report.overBudget) expect(report.tokensAfter).toBeLessThanOrEqual(options.maxContextTokens);
  return { dropped: report.droppedCounts.budget > 0, collapsed: report.collapsed.length > 0, summarized: report.summary.applied, overBudget: report.overBudget, repaired: false };
}

/**
 * The result parts of a history that answer a call, found the way the providers pair them (an
 * assistant message opening calls, then the tool messages right after it; the first result for
 * each call or approval request answers it). Repair must never delete one of these.
 */
function answeringParts(messages: readonly AiSdkMessage[]): Set<AiSdkPart> {
  const out = new Set<AiSdkPart>();
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role !== 'assistant' || !Array.isArray(m.content)) continue;
    const open = new Set<string>();
    for (const p of m.content) {
      if (p.type === 'tool-call' && p.providerExecuted !== true) open.add(`c:${String(p.toolCallId)}`);
      if (p.type === 'tool-approval-request') open.add(`a:${String(p.approvalId)}`);
    }
    for (let j = i + 1; j < messages.length && messages[j].role === 'tool'; j++) {
      for (const p of messages[j].content as AiSdkPart[]) {
        const key = p.type === 'tool-result' ? `c:${String(p.toolCallId)}` : `a:${String(p.approvalId)}`;
        if (open.delete(key)) out.add(p);
      }
    }
  }
  return out;
}

describe('compressContext on AI SDK histories', () => {
  test('valid histories: valid views (profile and checker), own unchanged objects in order, last user message kept, budget kept', () => {
    const t = { runs: 0, dropped: 0, collapsed: 0, summarized: 0, overBudget: 0, approvals: 0, deferred: 0 };
    fc.assert(fc.property(validAiSdkHistory(), optionsArb, (messages, o) => {
      expect(validateMessages(messages, 'ai-sdk')).toEqual([]);
      expect(checkAiSdk(messages)).toEqual([]);
      const frozen = structuredClone(messages);
      const options = optionsFor(messages, o);
      const f = checkValidView(messages, frozen, options, compressContext(messages, options));
      t.runs++;
      if (f.dropped) t.dropped++;
      if (f.collapsed) t.collapsed++;
      if (f.summarized) t.summarized++;
      if (f.overBudget) t.overBudget++;
      if (messages.some((m) => Array.isArray(m.content) && m.content.some((p) => p.type === 'tool-approval-request'))) t.approvals++;
      if (messages.some((m, i) => i > 0 && m.role === 'assistant' && Array.isArray(m.content) && m.content[0]?.type === 'tool-result')) t.deferred++;
    }), formatPropertyParams());
    // The runs reached the interesting cases.
    expect(t.dropped).toBeGreaterThan(t.runs / 5);
    expect(t.collapsed).toBeGreaterThan(0);
    expect(t.summarized).toBeGreaterThan(0);
    expect(t.approvals).toBeGreaterThan(t.runs / 4);
    expect(t.deferred).toBeGreaterThan(0);
    // eslint-disable-next-line no-console
    console.log(`ai-sdk valid-history runs: ${JSON.stringify(t)}`);
  });

  test('broken histories: repaired into valid views; only orphan and duplicate results are deleted', () => {
    const t = { runs: 0, repaired: 0, removed: 0, added: 0, coreGap: 0 };
    fc.assert(fc.property(brokenAiSdkHistory(), optionsArb, ({ messages }, o) => {
      const frozen = structuredClone(messages);
      const answering = answeringParts(messages);
      if (buildGroups(messages, aiSdkLens).regular && validateMessages(messages, 'ai-sdk').length > 0) {
        // Core gap (see 'a duplicate result beside a fresh answer is repaired by compressContext'):
        // grouping calls the history regular, so compressContext skips repair. repairHistory fixes it.
        for (const v of validateMessages(messages, 'ai-sdk')) expect(['result-duplicate', 'result-orphan']).toContain(v.rule);
        const fixed = repairHistory(messages, { format: 'ai-sdk' }).messages;
        expect(validateMessages(fixed, 'ai-sdk')).toEqual([]);
        expect(checkAiSdk(fixed)).toEqual([]);
        t.coreGap++;
        return;
      }
      // Generous budget first: nothing is dropped for room, so what is missing was deleted by repair.
      const full = compressContext(messages, { format: 'ai-sdk', counter });
      expect(validateMessages(full.messages, 'ai-sdk')).toEqual([]);
      expect(checkAiSdk(full.messages)).toEqual([]);
      const kept = new Set(full.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])));
      for (const p of answering) assert.ok(kept.has(p), `repair deleted a result that answers a call: ${JSON.stringify(p).slice(0, 160)}`);
      for (const a of full.report.repaired) expect(['removed-orphan', 'removed-duplicate', 'added-result', 'moved-result', 'rekeyed-result', 'reported']).toContain(a.action);
      // Any budget: still valid.
      const options = optionsFor(messages, o);
      const view = compressContext(messages, options);
      expect(validateMessages(view.messages, 'ai-sdk')).toEqual([]);
      expect(checkAiSdk(view.messages)).toEqual([]);
      if (options.maxContextTokens !== undefined && !view.report.overBudget) expect(view.report.tokensAfter).toBeLessThanOrEqual(options.maxContextTokens);
      expect(messages).toEqual(frozen); // jest equality: structuredClone's objects come from another realm
      t.runs++;
      if (full.report.repaired.length > 0) t.repaired++;
      t.removed += full.report.repaired.filter((a) => a.action.startsWith('removed')).length;
      t.added += full.report.repaired.filter((a) => a.action === 'added-result').length;
    }), formatPropertyParams());
    expect(t.coreGap).toBeLessThan(t.runs / 10);
    expect(t.repaired).toBeGreaterThan(t.runs / 2);
    expect(t.removed).toBeGreaterThan(0);
    expect(t.added).toBeGreaterThan(0);
    // eslint-disable-next-line no-console
    console.log(`ai-sdk broken-history runs: ${JSON.stringify(t)}`);
  });

  test('billedTextTokens agrees with the reading on generated histories', () => {
    const { billedTextTokens: _fast, ...slow } = aiSdkLens;
    fc.assert(fc.property(validAiSdkHistory(), (messages) => {
      for (const m of messages) expect(messageTokens(m, aiSdkLens, counter.text)).toBe(messageTokens(m, slow as typeof aiSdkLens, counter.text));
    }), { ...formatPropertyParams(), numRuns: 50 });
  });
});

describe('core gaps found by these properties', () => {
  // Needs a core change (see the report): groups.ts calls a turn regular when a duplicate or stray result shares a
  // tool message with a fresh answer, so compressContext skips repair and sends a view the provider rejects.
  test('a duplicate result beside a fresh answer is repaired by compressContext (needs core: buildGroups regular sees duplicates and strays inside the unit)', () => {
    const call = (id: string) => ({ type: 'tool-call', toolCallId: id, toolName: 'n', input: {} });
    const res = (id: string, value: string) => ({ type: 'tool-result', toolCallId: id, toolName: 'n', output: { type: 'text', value } });
    const h: AiSdkMessage[] = [
      { role: 'user', content: 'u' },
      { role: 'assistant', content: [call('c1'), call('c2')] },
      { role: 'tool', content: [res('c1', 'a')] },
      { role: 'tool', content: [res('c2', 'b'), res('c1', 'again'), res('c9', 'stray')] },
      { role: 'user', content: 'v' },
    ];
    expect(validateMessages(compressContext(h, { format: 'ai-sdk', counter }).messages, 'ai-sdk')).toEqual([]);
  });
});
