import { isDeepStrictEqual } from 'node:util';
import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { compressContext, createTokenCounter, repairHistory, validateMessages, type CompressOptions } from '../../src/index.js';
import { geminiLens } from '../../src/formats/gemini/lens.js';
import type { GeminiContent } from '../../src/formats/gemini/types.js';
import { Fingerprints } from '../../src/runtime/fingerprints.js';
import { brokenGeminiHistory, geminiTextArb, validGeminiHistory } from '../helpers/gemini-arbitraries.js';
import { checkGemini } from '../helpers/gemini-checker.js';
import { expectGeminiView, type GeminiViewFacts } from '../helpers/gemini-view.js';
import { formatPropertyParams } from '../helpers/property-runs.js';

/**
 * Properties of compressContext on Gemini histories (seeded; 1000 runs under CI, 200 locally):
 * for valid histories, broken ones (after repair), and with a stored summary, at budgets from one
 * token to more than the history, every view passes the gemini profile and the independent
 * checker, keeps the caller's contents as the same unchanged objects in order (thought signatures
 * byte-identical), keeps the last user turn, and keeps the budget whenever the protected tail fits.
 */

const counter = createTokenCounter();

const optionsArb = fc.record({
  keepFirst: fc.integer({ min: 0, max: 3 }),
  keepLast: fc.integer({ min: 0, max: 8 }),
  maxPermille: fc.option(fc.integer({ min: 0, max: 1200 }), { nil: undefined, freq: 8 }),
  trim: fc.option(fc.oneof(fc.constant(true), fc.record({ minChars: fc.integer({ min: 0, max: 4000 }) })), { nil: undefined, freq: 3 }),
});
type OptionDraw = typeof optionsArb extends fc.Arbitrary<infer T> ? T : never;

function optionsFor(contents: readonly GeminiContent[], o: OptionDraw): CompressOptions {
  const before = compressContext(contents, { counter, format: 'gemini' }).report.tokensBefore;
  return {
    counter,
    format: 'gemini',
    keepFirst: o.keepFirst,
    keepLast: o.keepLast,
    maxContextTokens: o.maxPermille === undefined ? undefined : Math.max(1, Math.floor((before * o.maxPermille) / 1000)),
    toolOutputTrim: o.trim,
  };
}

function tally() {
  const t = { runs: 0, dropped: 0, collapsed: 0, summarized: 0, noted: 0, overBudget: 0 };
  return {
    t,
    add(f: GeminiViewFacts) {
      t.runs++;
      if (f.dropped > 0) t.dropped++;
      if (f.collapsed > 0) t.collapsed++;
      if (f.summarized) t.summarized++;
      if (f.noted) t.noted++;
      if (f.overBudget) t.overBudget++;
    },
  };
}

describe('compressContext on Gemini histories: every view is valid', () => {
  test('valid histories: profile and checker pass, own objects unchanged in order, last user turn kept, budget kept', () => {
    const { t, add } = tally();
    let parallelSameName = 0;
    fc.assert(fc.property(validGeminiHistory(), optionsArb, (contents, o) => {
      expect(validateMessages(contents, 'gemini')).toEqual([]);
      expect(checkGemini(contents)).toEqual([]);
      if (contents.some((c) => { const calls = geminiLens.read(c).calls; return calls.length > 1 && calls.every((x) => x.id === undefined && x.name === calls[0].name); })) parallelSameName++;
      const snapshot = structuredClone(contents);
      const options = optionsFor(contents, o);
      const result = compressContext(contents, options);
      expect(result.report.repaired).toEqual([]);
      add(expectGeminiView({ original: contents, snapshot, ref: contents, maxContextTokens: options.maxContextTokens, result, counter }));
      if (!isDeepStrictEqual(contents, snapshot)) expect(contents).toEqual(snapshot);
    }), formatPropertyParams());
    expect(t.dropped).toBeGreaterThan(t.runs / 10);
    expect(t.collapsed).toBeGreaterThan(0);
    expect(t.noted).toBeGreaterThan(0);
    expect(t.overBudget).toBeGreaterThan(0);
    expect(parallelSameName).toBeGreaterThan(0);
  });

  test('repairHistory on broken histories (every mutation): valid after, deleting only orphan and duplicate responses', () => {
    const seen = new Set<string>();
    fc.assert(fc.property(brokenGeminiHistory(), (broken) => {
      const { contents, real, added } = broken;
      const snapshot = structuredClone(contents);
      const { messages: ref, actions } = repairHistory(contents, { format: 'gemini' });
      expect(actions.length).toBeGreaterThan(0);
      for (const a of actions) seen.add(a.action);
      expect(validateMessages(ref, 'gemini')).toEqual([]);
      expect(checkGemini(ref)).toEqual([]);
      const kept = new Set<object>(ref.flatMap((c) => c.parts));
      expect([...real].filter((p) => !kept.has(p))).toEqual([]);
      expect(contents.flatMap((c) => c.parts).filter((p) => p.functionResponse && !kept.has(p) && !added.has(p))).toEqual([]);
      if (!isDeepStrictEqual(contents, snapshot)) expect(contents).toEqual(snapshot);
    }), formatPropertyParams());
    expect([...seen].sort()).toEqual(['added-result', 'removed-duplicate', 'removed-orphan', 'reported']);
  });

  test('a user text content between a call turn (with ids, or none: by position) and its responses: every response kept, moved back after its call, valid', () => {
    let moved = 0;
    let idless = 0;
    fc.assert(fc.property(validGeminiHistory(), geminiTextArb, fc.nat(), (contents, words, pick) => {
      // Call turns whose every call has an id, or none has, each followed by its response content.
      const turns = contents.flatMap((c, i) => {
        const calls = c.role === 'model' ? c.parts.filter((p) => p.functionCall) : [];
        const withId = calls.filter((p) => p.functionCall!.id !== undefined).length;
        return calls.length > 0 && (withId === calls.length || withId === 0) ? [i] : [];
      });
      fc.pre(turns.length > 0);
      const at = turns[pick % turns.length];
      const interjection: GeminiContent = { role: 'user', parts: [{ text: `wait: ${words}` }] };
      const input = [...contents.slice(0, at + 1), interjection, ...contents.slice(at + 1)];
      const responses = input.flatMap((c) => c.parts.filter((p) => p.functionResponse));
      const { messages } = compressContext(input, { counter, format: 'gemini' });
      expect(checkGemini(messages)).toEqual([]);
      const parts = new Set<object>(messages.flatMap((c) => c.parts));
      // Every real response part is sent (the same objects), and so are the user's words.
      expect(responses.filter((p) => !parts.has(p))).toEqual([]);
      expect(messages).toContain(interjection);
      // The interjection now follows the response content of that call turn.
      const call = messages.indexOf(input[at]);
      expect(messages[call + 2]).toBe(interjection);
      moved++;
      if (input[at].parts.every((p) => !p.functionCall || p.functionCall.id === undefined)) idless++;
    }), formatPropertyParams());
    expect(moved).toBeGreaterThan(0);
    expect(idless).toBeGreaterThan(0);
  });

  // Not 'dup-part': a duplicate response inside the content that also answers is missed by the
  // grouping's `regular` flag, so compressContext skips repair (core change asked for; see below).
  test('broken histories: repair makes them valid deleting only orphan and duplicate responses, then the view is valid', () => {
    const { t, add } = tally();
    fc.assert(fc.property(brokenGeminiHistory(['drop-part', 'drop-content', 'dup-content', 'orphan']), optionsArb, (broken, o) => {
      const { contents, real, added } = broken;
      const snapshot = structuredClone(contents);
      const { messages: ref, actions } = repairHistory(contents, { format: 'gemini' });
      expect(actions.length).toBeGreaterThan(0);
      expect(validateMessages(ref, 'gemini')).toEqual([]);
      expect(checkGemini(ref)).toEqual([]);
      // Every real response is still there (as the same part object); only added ones were removed.
      const kept = new Set<object>(ref.flatMap((c) => c.parts));
      expect([...real].filter((p) => !kept.has(p))).toEqual([]);
      expect(contents.flatMap((c) => c.parts).filter((p) => p.functionResponse && !kept.has(p) && !added.has(p))).toEqual([]);
      const options = optionsFor(contents, o);
      const result = compressContext(contents, options);
      expect(result.report.repaired.length).toBeGreaterThan(0);
      add(expectGeminiView({ original: contents, snapshot, ref: ref as GeminiContent[], maxContextTokens: options.maxContextTokens, result, counter }));
      if (!isDeepStrictEqual(contents, snapshot)) expect(contents).toEqual(snapshot);
    }), formatPropertyParams());
    expect(t.dropped).toBeGreaterThan(t.runs / 10);
  });

  test('with a stored summary: applied right after the head as ONE user content, and the view stays valid', () => {
    const { t, add } = tally();
    fc.assert(fc.property(validGeminiHistory(), fc.integer({ min: 0, max: 3 }), fc.nat(), geminiTextArb, fc.option(fc.integer({ min: 0, max: 1200 }), { nil: undefined }), (contents, keepFirst, cutPick, text, maxPermille) => {
      const snapshot = structuredClone(contents);
      const base = optionsFor(contents, { keepFirst, keepLast: 2, maxPermille, trim: undefined });
      const headEnd = compressContext(contents, base).report.headEnd;
      fc.pre(headEnd < contents.length);
      const cut = headEnd + 1 + (cutPick % (contents.length - headEnd));
      const coveredIds = new Fingerprints().idsOf(contents, geminiLens, headEnd, cut);
      const result = compressContext(contents, { ...base, summary: { text, coveredIds } });
      const facts = expectGeminiView({ original: contents, snapshot, ref: contents, maxContextTokens: base.maxContextTokens, result, counter });
      add(facts);
      if (result.report.summary.applied) expect(result.messages[headEnd].parts[0].text).toMatch(/^\[Summary of \d+ earlier messages/);
    }), formatPropertyParams());
    expect(t.summarized).toBeGreaterThan(t.runs / 3);
  });

  // Fails until src/core/groups.ts marks a history irregular when a result inside a message that
  // also answers is a duplicate or a stray (structure.results with pairing 'duplicate'/'stray'):
  // today `grouping.regular` stays true, compressContext skips repair, and the view keeps the
  // duplicate (Gemini: count error). Flip to `test` once core is fixed.
  test('CORE: a duplicate response inside the answering content is repaired by compressContext', () => {
    const contents: GeminiContent[] = [
      { role: 'user', parts: [{ text: 'go' }] },
      { role: 'model', parts: [{ functionCall: { name: 'f', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'f', response: { result: 'a' } } }, { functionResponse: { name: 'f', response: { result: 'a' } } }] },
      { role: 'model', parts: [{ text: 'ok' }] },
    ];
    const { messages, report } = compressContext(contents, { format: 'gemini' });
    expect(report.repaired.map((a) => a.action)).toEqual(['removed-duplicate']);
    expect(validateMessages(messages, 'gemini')).toEqual([]);
  });

  // Fails until src/core/repair.ts (completeAndPrune) puts a turn's missing responses in the last
  // run message that is KEPT: today, when the run's last message is an orphan it removes, the error
  // responses get a content of their own after the one holding the real responses (Gemini: split
  // responses, count error). Flip to `test` once core is fixed.
  test('CORE: missing responses join the kept response content when an orphan after it is removed', () => {
    const contents: GeminiContent[] = [
      { role: 'user', parts: [{ text: 'go' }] },
      { role: 'model', parts: [{ functionCall: { name: 'f', args: { n: 1 } } }, { functionCall: { name: 'f', args: { n: 2 } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'f', response: { result: 'one' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'stray_tool', response: { result: 'left over' } } }] },
      { role: 'model', parts: [{ text: 'ok' }] },
    ];
    const { messages } = repairHistory(contents, { format: 'gemini' });
    expect(validateMessages(messages, 'gemini')).toEqual([]);
  });
});
