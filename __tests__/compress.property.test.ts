import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { compressContext, createHistoryCache, type CompressOptions, type CompressResult } from '../src/index.js';
import { repairHistory } from '../src/formats/profiles.js';
import { contentText, openaiChatLens } from '../src/formats/openai-chat/lens.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { Fingerprints } from '../src/runtime/fingerprints.js';

const idsOf: Fingerprints['idsOf'] = (...args) => new Fingerprints().idsOf(...args);
import type { ToolOutputTrim } from '../src/runtime/options.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { anyHistory, brokenHistory, textArb, validHistory } from './helpers/arbitraries.js';
import { propertyParams } from './helpers/property-runs.js';
import { expectedHeadEnd, expectedProtectedStart, expectSafeView, observedResult, type ViewFacts } from './helpers/view-checks.js';
import { unitStarts } from './helpers/oracle.js';

const counter = createTokenCounter();

/** Random planning options; token figures are given per mille of the history's own size. */
const optionsArb = fc.record({
  keepFirst: fc.integer({ min: 0, max: 4 }),
  keepLast: fc.integer({ min: 0, max: 12 }),
  maxPermille: fc.option(fc.integer({ min: 0, max: 1200 }), { nil: undefined, freq: 8 }),
  thresholdPermille: fc.option(fc.integer({ min: 0, max: 1200 }), { nil: undefined, freq: 2 }),
  trim: fc.option(fc.oneof(fc.boolean(), fc.record({ minChars: fc.integer({ min: 0, max: 6000 }) })), { nil: undefined, freq: 3 }) as fc.Arbitrary<ToolOutputTrim | undefined>,
});

type OptionDraw = typeof optionsArb extends fc.Arbitrary<infer T> ? T : never;

/** Turns a draw into options for one history: budgets from 1 token to 1.2x the history's size. */
function optionsFor(messages: readonly OpenAIChatMessage[], o: OptionDraw): CompressOptions {
  let before: number | undefined;
  const scale = (permille: number | undefined) => {
    if (permille === undefined) return undefined;
    before ??= compressContext(messages, { counter, format: 'openai' }).report.tokensBefore;
    return Math.max(1, Math.floor((before * permille) / 1000));
  };
  return {
    counter,
    format: 'openai', // generated OpenAI Chat: some broken ones are also Qwen-Agent-shaped, which auto refuses
    keepFirst: o.keepFirst,
    keepLast: o.keepLast,
    // The oracle's rule (view-checks.ts): the kept tail is sent whole. The default, a tail that
    // yields to the budget, is checked against that view in keep-last-yields.property.test.ts.
    keepLastYields: false,
    maxContextTokens: scale(o.maxPermille),
    compressionThresholdTokens: scale(o.thresholdPermille),
    toolOutputTrim: o.trim,
  };
}

/** Counts what the runs of a property did, to show they reached drops, collapses and overruns. */
function tally() {
  const t = { runs: 0, repaired: 0, dropped: 0, collapsed: 0, tailCleared: 0, overBudget: 0, summarized: 0, asksSummary: 0 };
  return {
    t,
    add(f: ViewFacts) {
      t.runs++;
      if (f.repaired) t.repaired++;
      if (f.dropped > 0) t.dropped++;
      if (f.collapsed > 0) t.collapsed++;
      if (f.tailCleared > 0) t.tailCleared++;
      if (f.overBudget) t.overBudget++;
      if (f.summarized) t.summarized++;
      if (f.asksSummary) t.asksSummary++;
    },
  };
}

function checkOne(messages: OpenAIChatMessage[], o: OptionDraw): ViewFacts {
  const options = optionsFor(messages, o);
  const result = compressContext(messages, options);
  return expectSafeView({ original: messages, keepFirst: o.keepFirst, keepLast: o.keepLast, maxContextTokens: options.maxContextTokens, toolOutputTrim: o.trim, result, counter });
}

describe('compressContext: every view is safe', () => {
  test('valid histories: valid view, last user turn kept, own objects in order, budget kept and counted right', () => {
    const { t, add } = tally();
    fc.assert(fc.property(validHistory(), optionsArb, (messages, o) => {
      add(checkOne(messages, o));
    }), propertyParams());
    expect(t.repaired).toBe(0);
    expect(t.dropped).toBeGreaterThan(t.runs / 10);
    expect(t.collapsed).toBeGreaterThan(0);
    expect(t.tailCleared).toBeGreaterThan(0);
    expect(t.overBudget).toBeGreaterThan(0);
    expect(t.asksSummary).toBeGreaterThan(0);
  });

  test('broken histories: the same, measured against the repaired input', () => {
    const { t, add } = tally();
    fc.assert(fc.property(brokenHistory(), optionsArb, (messages, o) => {
      add(checkOne(messages, o));
    }), propertyParams());
    expect(t.repaired).toBe(t.runs);
    expect(t.dropped).toBeGreaterThan(t.runs / 10);
    expect(t.overBudget).toBeGreaterThan(0);
  });

  test('a summary applies once, right after the head, when its coverage matches; an edit makes it stale', () => {
    const { t, add } = tally();
    let edits = 0;
    const summaryTextArb = textArb.filter((s) => s.trim() !== '');
    fc.assert(fc.property(
      anyHistory(), fc.integer({ min: 0, max: 4 }), fc.nat(), fc.nat(), summaryTextArb, fc.option(fc.integer({ min: 0, max: 1200 }), { nil: undefined }),
      (messages, keepFirst, cutPick, editPick, text, maxPermille) => {
        const ref = repairHistory(messages, { format: 'openai' }).messages;
        const n = ref.length;
        const hEnd = expectedHeadEnd(ref, keepFirst);
        fc.pre(hEnd < n);
        const cut = hEnd + 1 + (cutPick % (n - hEnd));
        const coveredIds = idsOf(ref, openaiChatLens, hEnd, cut);
        const options = { ...optionsFor(messages, { keepFirst, keepLast: 6, maxPermille, thresholdPermille: undefined, trim: undefined }), summary: { text, coveredIds } };
        const result = compressContext(messages, options);

        // Where the coverage snaps back to, by the oracle's own units (not the project's grouping).
        const aligned = cut >= n ? n : Math.max(...unitStarts(ref).filter((s) => s <= cut));
        // Applied when it replaces something: coverage is clipped at the protected last turn.
        const protectedAt = Math.max(hEnd, expectedProtectedStart(ref, 6));
        // It is left out only for lack of room (said in a note), and shortened only to fit that room.
        const replaces = Math.min(aligned, protectedAt) > hEnd;
        if (!replaces) expect(result.report.summary.applied).toBe(false);
        else if (!result.report.summary.applied) expect(result.report.summary.note).toMatch(/^summary left out: only \d+ tokens are left/);
        if (result.report.summary.applied && options.maxContextTokens !== undefined) expect(result.report.summary.tokens).toBeLessThanOrEqual(result.report.summary.allowedTokens!);
        if (options.maxContextTokens === undefined) expect(result.report.summary.applied).toBe(replaces);
        add(expectSafeView({ original: messages, keepFirst, keepLast: 6, maxContextTokens: options.maxContextTokens, result, counter }));
        const sent = new Set(messages);
        const summaries = result.messages.filter((m) => !sent.has(m) && typeof m.content === 'string' && m.content.startsWith('[Summary of'));
        expect(summaries).toHaveLength(result.report.summary.applied ? 1 : 0);
        if (result.report.summary.applied) {
          expect(result.messages[hEnd]).toBe(summaries[0]);
          if (!result.report.summary.shortened) expect(summaries[0].content).toContain(text);
          // It stands for the messages it covers up to the protected turn, system messages excepted.
          const pStart = Math.max(hEnd, expectedProtectedStart(ref, 6));
          const replaced = ref.slice(hEnd, Math.min(aligned, pStart)).filter((m) => m.role !== 'system' && m.role !== 'developer').length;
          expect(result.report.droppedCounts.summarized).toBe(replaced);
          expect(summaries[0].content).toMatch(new RegExp(`^\\[Summary of ${Math.min(aligned, pStart) - hEnd} earlier messages`));
        }

        // Edit one covered message the caller sent (a repair's synthetic result cannot be edited).
        const position = new Map(messages.map((m, i) => [m, i]));
        const editable: number[] = [];
        for (let k = hEnd; k < cut; k++) {
          const i = position.get(ref[k]);
          if (i !== undefined) editable.push(i);
        }
        if (editable.length === 0) return;
        const at = editable[editPick % editable.length];
        const edited = messages.slice();
        edited[at] = { ...messages[at], content: `${contentText(messages[at].content)} (edited)` };
        const stale = compressContext(edited, { ...options, summary: { text, coveredIds } });
        edits++;
        expect(stale.report.summary.applied).toBe(false);
        expect(stale.report.summary.note).toMatch(/not applied/);
        expectSafeView({ original: edited, keepFirst, keepLast: 6, maxContextTokens: options.maxContextTokens, result: stale, counter });
      },
    ), propertyParams());
    expect(t.summarized).toBeGreaterThan(t.runs / 2);
    expect(edits).toBeGreaterThan(t.runs / 2);
  });
});

describe('the view checks catch an unsafe view', () => {
  const history: OpenAIChatMessage[] = [
    { role: 'system', content: 'You are a travel agent. Be brief.' },
    { role: 'user', content: 'Find me a train from Paris to Lyon and its price.' },
    { role: 'assistant', content: null, tool_calls: [
      { id: 'call_a', type: 'function', function: { name: 'search', arguments: '{"from":"CDG","to":"HND"}' } },
      { id: 'call_b', type: 'function', function: { name: 'price', arguments: '{"item":"QMX417"}' } },
    ] },
    { role: 'tool', tool_call_id: 'call_b', content: '1287 USD' },
    { role: 'tool', tool_call_id: 'call_a', content: 'QMX417 departs 10:05' },
    { role: 'assistant', content: 'QMX417 at 10:05 for 1287 USD.' },
    { role: 'user', content: 'Book it.' },
    { role: 'assistant', content: 'Placed: order ZFA04Y.' },
  ];
  const maxContextTokens = 60;
  const good = compressContext(history, { counter, maxContextTokens, keepLast: 2 });
  const check = (result: CompressResult<OpenAIChatMessage>) => () => expectSafeView({ original: history, keepFirst: 1, keepLast: 2, maxContextTokens, result, counter });
  /** A tampered view, with a report that agrees with it on what was left out. */
  const tamper = (messages: OpenAIChatMessage[], report: Partial<CompressResult<OpenAIChatMessage>['report']> = {}) => {
    const dropped = history.flatMap((m, index) => (messages.includes(m) ? [] : [{ index, id: String(index), reason: 'budget' as const }]));
    return check({ messages, report: { ...good.report, messagesAfter: messages.length, dropped, droppedCounts: { summarized: 0, budget: dropped.length }, ...report } });
  };

  test('the untampered view passes, having dropped the first turn', () => {
    expect(good.messages).toEqual([history[0], history[6], history[7]]);
    expect(check(good)).not.toThrow();
  });

  test('a view that keeps a call without one of its results', () => {
    expect(tamper([history[0], history[2], history[3], history[6], history[7]])).toThrow(/call call_a was never answered/);
  });

  test('a view that drops the last user message', () => {
    expect(tamper([history[0], history[7]])).toThrow(/protected message 6 \(user\) is missing/);
  });

  test('a view that sends a copy instead of the caller\'s object', () => {
    expect(tamper([history[0], { ...history[6] }, history[7]])).toThrow(/view\[1\] .* is not an input message kept in order/);
  });

  test('a view out of order', () => {
    expect(tamper([history[0], history[7], history[6]])).toThrow(/view\[2\] .* is not an input message kept in order/);
  });

  test('a report whose token count is not a recount, or that hides an overrun', () => {
    expect(tamper(good.messages, { tokensAfter: good.report.tokensAfter + 1 })).toThrow(/not a recount/);
    const whole = history.reduce((n, m) => n + counter.message(m, openaiChatLens), counter.requestOverhead);
    expect(tamper(history.slice(), { tokensAfter: whole })).toThrow(/over the limit of 60, and not reported so/);
    expect(tamper(good.messages, { overBudget: true })).toThrow(/overBudget is true while the protected part is/);
  });
});

describe('what a counter remembers between requests never changes a view', () => {
  const observed = observedResult<OpenAIChatMessage>;

  test('a sequence of continuing, re-parsed, shortened and edited requests plans exactly as a fresh counter does', () => {
    const step = fc.record({
      cut: fc.nat(),
      // A request that goes on from the previous one (as a chat does), or one cut anywhere.
      continues: fc.boolean(),
      reparse: fc.boolean(),
      // An edit in half the steps and the previous summary in three of four: a summary applies
      // only to a request that holds, unedited, every message it covers (seeds 1-80 apply 22 or more).
      edit: fc.option(fc.nat(), { nil: undefined, freq: 2 }),
      maxPermille: fc.integer({ min: 200, max: 1200 }),
      keepLast: fc.integer({ min: 0, max: 8 }),
      withSummary: fc.constantFrom(true, true, true, false),
    });
    let applied = 0;
    let reused = 0;
    fc.assert(fc.property(anyHistory(), fc.array(step, { minLength: 2, maxLength: 6 }), (history, steps) => {
      const shared = createTokenCounter();
      const cache = createHistoryCache();
      let summary: { text: string; coveredIds: string[] } | undefined;
      let length = 0;
      for (const s of steps) {
        length = s.continues && length > 0 ? length + (s.cut % (history.length - length + 1)) : 1 + (s.cut % history.length);
        let request = history.slice(0, length);
        if (s.reparse) request = JSON.parse(JSON.stringify(request)) as OpenAIChatMessage[];
        if (s.edit !== undefined) {
          const at = s.edit % request.length;
          request = request.slice();
          request[at] = { ...request[at], content: `${contentText(request[at].content)} (edited)` };
        }
        const tokens = compressContext(request, { counter: createTokenCounter(), format: 'openai' }).report.tokensBefore;
        const options: CompressOptions = { format: 'openai', maxContextTokens: Math.max(1, Math.floor((tokens * s.maxPermille) / 1000)), keepLast: s.keepLast, summary: s.withSummary ? summary : undefined };
        if (cache.recall('replayed', request).shared > 0) reused++;
        const warm = compressContext(request, { ...options, counter: shared, historyCache: cache, chatId: 'replayed' });
        const fresh = compressContext(request, { ...options, counter: createTokenCounter() });
        expect(observed(warm)).toEqual(observed(fresh));
        if (warm.report.summary.applied) applied++;
        // Cover what this request would summarize, for the next step's summary (report indexes
        // refer to the repaired history).
        const range = fresh.report.summarize ?? { start: fresh.report.headEnd, end: fresh.report.tailStart };
        summary = { text: 'the summary so far', coveredIds: idsOf(repairHistory(request, { format: 'openai' }).messages, openaiChatLens, fresh.report.headEnd, range.end) };
      }
    }), { ...propertyParams(), numRuns: Math.max(50, Math.floor(propertyParams().numRuns / 4)) });
    // The runs exercised what they are about: remembered histories and applied summaries.
    expect(reused).toBeGreaterThan(10);
    expect(applied).toBeGreaterThan(10);
  });

  test('text the plan did not read may change between requests: the next plan still equals a fresh one', () => {
    const step = fc.record({
      extra: fc.oneof(fc.constant(0), fc.nat(6)),
      edits: fc.array(fc.record({ at: fc.nat(), text: fc.oneof(textArb, fc.constant('')), revert: fc.boolean() }), { minLength: 1, maxLength: 3 }),
      maxPermille: fc.oneof(fc.integer({ min: 30, max: 300 }), fc.integer({ min: 300, max: 1200 })),
      keepFirst: fc.integer({ min: 0, max: 2 }),
      keepLast: fc.integer({ min: 0, max: 6 }),
      withSummary: fc.nat(3).map((v) => v === 0),
    });
    let passedOver = 0;
    const runs = Math.max(100, Math.floor(propertyParams().numRuns / 4));
    fc.assert(fc.property(validHistory(), fc.integer({ min: 1, max: 80 }), fc.array(step, { minLength: 2, maxLength: 6, size: 'max' }), (history, start, steps) => {
      const shared = createTokenCounter();
      const cache = createHistoryCache();
      const texts = new Map<number, string>();
      let length = Math.min(history.length, start);
      let previous: OpenAIChatMessage[] = [];
      let summary: { text: string; coveredIds: string[] } | undefined;
      for (const s of steps) {
        length = Math.min(history.length, length + s.extra);
        for (const e of s.edits) {
          // Most edits land in the older half, where text goes unread under a small budget.
          const at = e.at % (e.at % 3 === 0 ? length : Math.max(1, Math.ceil(length / 2)));
          if (e.revert) texts.delete(at);
          else texts.set(at, e.text);
        }
        // A re-parsed body: new objects, string content edited where the steps said so.
        const request = (JSON.parse(JSON.stringify(history.slice(0, length))) as OpenAIChatMessage[]).map((m, i) => (texts.has(i) && typeof m.content === 'string' ? { ...m, content: texts.get(i)! } : m));
        const tokens = compressContext(request, { counter: createTokenCounter(), format: 'openai' }).report.tokensBefore;
        const options: CompressOptions = { format: 'openai', maxContextTokens: Math.max(1, Math.floor((tokens * s.maxPermille) / 1000)), keepFirst: s.keepFirst, keepLast: s.keepLast, summary: s.withSummary ? summary : undefined };
        // The first message whose text differs from the request before, and how far the chat's memory still matches.
        let changed = 0;
        while (changed < Math.min(previous.length, request.length) && JSON.stringify(previous[changed]) === JSON.stringify(request[changed])) changed++;
        if (changed < Math.min(previous.length, request.length) && cache.recall('edited', request).shared > changed) passedOver++;
        const warm = compressContext(request, { ...options, counter: shared, historyCache: cache, chatId: 'edited' });
        const fresh = compressContext(request, { ...options, counter: createTokenCounter() });
        expect(observed(warm)).toEqual(observed(fresh));
        const range = fresh.report.summarize ?? { start: fresh.report.headEnd, end: fresh.report.tailStart };
        summary = { text: 'the summary so far', coveredIds: idsOf(request, openaiChatLens, fresh.report.headEnd, range.end) };
        previous = request;
      }
    }), { ...propertyParams(), numRuns: runs });
    // The runs reached what they are about: a changed message passed over as unread text.
    expect(passedOver).toBeGreaterThan(runs / 10);
  });

  test('example: text edited while unread, counted at a larger budget, then edited back, is counted again', () => {
    const history: OpenAIChatMessage[] = [{ role: 'system', content: 'rules' }];
    for (let i = 0; i < 12; i++) history.push({ role: 'user', content: `question ${i} `.repeat(20) }, { role: 'assistant', content: `answer ${i} `.repeat(20) });
    const cache = createHistoryCache();
    const counter = createTokenCounter();
    const edited = (text: string) => history.map((m, i) => (i === 3 ? { ...m, content: text } : { ...m }));
    const total = compressContext(history, { counter: createTokenCounter() }).report.tokensBefore;
    const requests = [
      { messages: edited(history[3].content as string), maxContextTokens: Math.floor(total / 5) },
      { messages: edited('a much longer text than before '.repeat(30)), maxContextTokens: 2 * total },
      { messages: edited(history[3].content as string), maxContextTokens: 2 * total },
    ];
    for (const r of requests) {
      const warm = compressContext(r.messages, { maxContextTokens: r.maxContextTokens, counter, historyCache: cache, chatId: 'back' });
      const fresh = compressContext(r.messages, { maxContextTokens: r.maxContextTokens, counter: createTokenCounter() });
      expect(observed(warm)).toEqual(observed(fresh));
    }
  });
});
