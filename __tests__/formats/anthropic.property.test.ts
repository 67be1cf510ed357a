import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { compressContext, createTokenCounter, repairHistory, validateMessages, type CompressResult } from '../../src/index.js';
import { anthropicLens } from '../../src/formats/anthropic/lens.js';
import type { AnthropicBlock, AnthropicMessage } from '../../src/formats/anthropic/types.js';
import { Fingerprints } from '../../src/runtime/fingerprints.js';
import { anthropicProblems } from '../helpers/anthropic-checker.js';
import { brokenAnthropicHistory, validAnthropicHistory } from '../helpers/anthropic-arbitraries.js';
import { formatPropertyParams } from '../helpers/property-runs.js';

/**
 * Every view compressContext makes of an Anthropic history is one the provider accepts (the
 * anthropic profile and the independent checker agree), made of the caller's own objects,
 * untouched (thinking blocks and signatures byte for byte), with the last user turn, and within
 * the budget whenever what is protected fits. Broken histories are repaired first, deleting only
 * results that answer no call (or answer one twice).
 */

const counter = createTokenCounter();

const optionsArb = fc.record({
  keepFirst: fc.oneof({ weight: 2, arbitrary: fc.constant(0) }, { weight: 2, arbitrary: fc.integer({ min: 1, max: 3 }) }),
  keepLast: fc.integer({ min: 0, max: 8 }),
  maxPermille: fc.option(fc.integer({ min: 0, max: 1200 }), { nil: undefined, freq: 8 }),
  trim: fc.option(fc.oneof(fc.constant(true as const), fc.record({ minChars: fc.integer({ min: 0, max: 2000 }) })), { nil: undefined, freq: 2 }),
  summary: fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.record({ cut: fc.nat(), text: fc.constantFrom('The user asked for reports; two tools ran.', 'Earlier: files were listed and read.') }) }),
});
type Options = typeof optionsArb extends fc.Arbitrary<infer T> ? T : never;

/** A user message with anything but tool_result blocks: a human turn. */
const isHuman = (m: AnthropicMessage) => m.role === 'user' && (typeof m.content === 'string' || m.content.some((b) => b.type !== 'tool_result'));

/** True when `out` is `original` with some tool_result contents replaced by the collapse placeholder, nothing else changed. */
function isCollapsedCopy(out: AnthropicMessage, original: AnthropicMessage): boolean {
  if (out === original || !Array.isArray(out.content) || !Array.isArray(original.content) || out.content.length !== original.content.length) return false;
  const strip = (m: AnthropicMessage) => ({ ...m, content: (m.content as AnthropicBlock[]).map((b) => (b.type === 'tool_result' ? { ...b, content: null } : b)) });
  if (!isDeepStrictEqual(strip(out), strip(original))) return false;
  return (out.content as AnthropicBlock[]).some((b, k) => b.type === 'tool_result' && typeof b.content === 'string' && b.content.startsWith('[tool result cleared') && !isDeepStrictEqual(b, (original.content as AnthropicBlock[])[k]));
}

/** What the runs reached, to show they covered drops, collapses, summaries and overruns. */
const tally = () => ({ runs: 0, dropped: 0, collapsed: 0, summarized: 0, overBudget: 0, leadNote: 0, thinkingKept: 0, bedrockChecked: 0, bedrockBoundary: 0, agentStart: 0 });

/**
 * Checks one view against the history it was made from (`reference`: the input, or its repair for
 * broken input; `own`: whether the view's kept messages must be the input's own objects).
 */
function checkView(input: AnthropicMessage[], clone: AnthropicMessage[], reference: readonly AnthropicMessage[], result: CompressResult<AnthropicMessage>, max: number | undefined, t: ReturnType<typeof tally>, own: boolean) {
  const { messages: view, report } = result;
  t.runs++;
  // The caller's history is not changed.
  expect(input).toEqual(clone);
  // The provider accepts the view: the profile and the independent checker agree. Thinking is on
  // for the request when the history carries thinking, whether or not the view still does.
  const thinking = reference.some((m) => Array.isArray(m.content) && m.content.some((b) => b.type === 'thinking' || b.type === 'redacted_thinking'));
  expect(validateMessages(view, 'anthropic')).toEqual([]);
  expect(anthropicProblems(view, { thinking })).toEqual([]);

  // Every message of the reference the report does not list as left out is in the view, in order:
  // the caller's own object untouched (deep-equal for a repaired input), or a collapsed copy.
  // Anything else in the view is the summary or the note of what was left out.
  const left = new Set(report.dropped.map((d) => d.index));
  const keptAt: number[] = [];
  for (let i = 0; i < reference.length; i++) if (!left.has(i)) keptAt.push(i);
  const isNote = (m: AnthropicMessage) => m.role === 'user' && typeof m.content === 'string' && /^\[(Summary of \d+|\d+ earlier messages)/.test(m.content) && !reference.includes(m);
  const body = view.filter((m) => !isNote(m));
  const notes = view.length - body.length;
  expect(notes).toBeLessThanOrEqual(1);
  expect(body.length).toBe(keptAt.length);
  const inputIndex = new Map(input.map((m, i) => [m, i]));
  let collapsed = 0;
  body.forEach((m, k) => {
    const r = reference[keptAt[k]];
    if (isCollapsedCopy(m, r)) {
      collapsed++;
      return;
    }
    if (own) {
      assert.ok(m === r, `view message ${k} is not the caller's own object for messages[${keptAt[k]}]`);
      expect(m).toEqual(clone[inputIndex.get(m)!]);
    } else {
      expect(m).toEqual(r);
    }
  });
  if (collapsed > 0) t.collapsed++;
  if (report.summary.applied) t.summarized++;
  else if (notes > 0) t.leadNote++;
  if (report.droppedCounts.budget + report.droppedCounts.summarized > 0) t.dropped++;
  // Thinking blocks that went out are byte-identical to the caller's (they are in kept, untouched messages).
  if (view.some((m) => Array.isArray(m.content) && m.content.some((b) => b.type === 'thinking'))) t.thinkingKept++;

  // The last user turn is kept.
  let lastHuman = -1;
  reference.forEach((m, i) => { if (isHuman(m)) lastHuman = i; });
  // The last user turn is kept: the caller's message, or (clearing the kept tail's bulky results,
  // the last resort against the budget) a copy whose only change is a cleared tool result.
  const sameAs = (m: AnthropicMessage, r: AnthropicMessage) => (own ? m === r : isDeepStrictEqual(m, r)) || (max !== undefined && isCollapsedCopy(m, r));
  if (lastHuman >= 0) expect(view.some((m) => sameAs(m, reference[lastHuman]))).toBe(true);
  // The newest tool results (the last message carrying any, with no human turn after it) are never
  // cleared when they are in the kept tail.
  let newest = -1;
  reference.forEach((m, i) => {
    if (Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_result')) newest = i;
    else if (isHuman(m)) newest = -1;
  });
  if (newest >= report.protectedStart) expect(view.some((m) => isCollapsedCopy(m, reference[newest]))).toBe(false);

  // The reported size is a recount of the view.
  let recount = counter.requestOverhead;
  for (const m of view) recount += counter.message(m, anthropicLens);
  expect(report.tokensAfter).toBe(recount);

  // Within the budget unless the protected part alone is over it.
  if (max !== undefined) {
    if (!report.overBudget) expect(report.tokensAfter).toBeLessThanOrEqual(max);
    else {
      t.overBudget++;
      // Over budget only when nothing droppable is left: the head and the protected tail (which holds the last user turn).
      expect(report.protectedStart).toBeLessThanOrEqual(Math.max(report.headEnd, lastHuman >= 0 ? lastHuman : reference.length));
      // Or, where the view would otherwise lead its kept part with a model turn, the turns from the
      // nearest user turn before it are kept instead of a note of what was left out, when they
      // cost less: one run, up to the protected tail, starting with a user turn, and no note.
      const extra = keptAt.filter((i) => !(i < report.headEnd || i >= report.protectedStart));
      if (extra.length > 0) {
        expect(notes).toBe(0);
        expect(reference[extra[0]].role).toBe('user');
        expect(extra).toEqual(Array.from({ length: report.protectedStart - extra[0] }, (_, k) => extra[0] + k));
      }
    }
  }
}

/** Options for one history: budgets from 0 to 1.2x its size, a summary covering a prefix after the head. */
function run(messages: AnthropicMessage[], o: Options) {
  const before = compressContext(messages, { counter, format: 'anthropic', keepFirst: o.keepFirst }).report;
  const max = o.maxPermille === undefined ? undefined : Math.max(1, Math.floor((before.tokensBefore * o.maxPermille) / 1000));
  let summary: { text: string; coveredIds: string[] } | undefined;
  if (o.summary) {
    const reference = repairHistory(messages, { format: 'anthropic' }).messages;
    const from = before.headEnd;
    if (from < reference.length) {
      const cut = from + 1 + (o.summary.cut % (reference.length - from));
      summary = { text: o.summary.text, coveredIds: new Fingerprints().idsOf(reference, anthropicLens, from, cut) };
    }
  }
  // This file's rules keep the tail whole; the default (it yields) is in keep-last-yields.property.test.ts.
  const result = compressContext(messages, { counter, format: 'anthropic', keepFirst: o.keepFirst, keepLast: o.keepLast, keepLastYields: false, maxContextTokens: max, toolOutputTrim: o.trim, summary });
  return { result, max, summary };
}

describe('anthropic: every view of a valid history is accepted, own objects untouched, budget kept', () => {
  test('valid histories', () => {
    const t = tally();
    fc.assert(fc.property(validAnthropicHistory(), optionsArb, (messages, o) => {
      // The generator makes only histories the provider accepts (on Bedrock too, when they start with a user turn).
      const userFirst = messages[0].role === 'user';
      expect(anthropicProblems(messages, { bedrock: userFirst })).toEqual([]);
      expect(validateMessages(messages, userFirst ? 'bedrock' : 'anthropic')).toEqual([]);
      if (!userFirst) t.agentStart++;
      const clone = structuredClone(messages);
      const { result, max, summary } = run(messages, o);
      expect(result.report.repaired).toEqual([]);
      checkView(messages, clone, messages, result, max, t, true);
      // Bedrock wants strict alternation: a view cut after a head, or with a summary, may put two
      // user turns side by side (the planner does not merge them); without either it must pass.
      const bedrock = validateMessages(result.messages, 'bedrock');
      if (o.keepFirst === 0 && summary === undefined && userFirst) {
        t.bedrockChecked++;
        expect(bedrock).toEqual([]);
        expect(anthropicProblems(result.messages, { bedrock: true })).toEqual([]);
      } else if (userFirst) {
        if (bedrock.length > 0) t.bedrockBoundary++;
        expect(bedrock.filter((v) => v.rule !== 'roles-not-alternating')).toEqual([]);
      }
    }), formatPropertyParams());
    // eslint-disable-next-line no-console
    console.log('anthropic valid histories:', JSON.stringify(t));
    expect(t.dropped).toBeGreaterThan(t.runs / 10);
    expect(t.collapsed).toBeGreaterThan(0);
    expect(t.summarized).toBeGreaterThan(0);
    expect(t.overBudget).toBeGreaterThan(0);
    expect(t.thinkingKept).toBeGreaterThan(t.runs / 10);
    expect(t.bedrockChecked).toBeGreaterThan(t.runs / 10);
    expect(t.agentStart).toBeGreaterThan(t.runs / 20);
  });

  test('broken histories: repaired first, deleting only results that answer no call or answer one twice', () => {
    const t = tally();
    fc.assert(fc.property(brokenAnthropicHistory(), optionsArb, ({ messages }, o) => {
      expect(anthropicProblems(messages).length).toBeGreaterThan(0);
      const clone = structuredClone(messages);
      const repaired = repairHistory(messages, { format: 'anthropic' }).messages as AnthropicMessage[];
      expect(validateMessages(repaired, 'anthropic')).toEqual([]);
      expect(anthropicProblems(repaired)).toEqual([]);
      // Which results answer a call, judged here: a tool_use of the message right before, first answer only.
      const key = (b: AnthropicBlock) => `${String(b.tool_use_id)}\u0000${JSON.stringify(b.content)}`;
      const real: string[] = [];
      messages.forEach((m, i) => {
        if (m.role !== 'user' || !Array.isArray(m.content)) return;
        const prev = messages[i - 1];
        const uses = new Set(prev && prev.role === 'assistant' && Array.isArray(prev.content) ? prev.content.filter((b) => b.type === 'tool_use').map((b) => b.id) : []);
        const answered = new Set<unknown>();
        for (const b of m.content) {
          if (b.type !== 'tool_result') continue;
          if (uses.has(b.tool_use_id) && !answered.has(b.tool_use_id)) real.push(key(b));
          answered.add(b.tool_use_id);
        }
      });
      const synthetic = (b: AnthropicBlock) => b.is_error === true && typeof b.content === 'string' && b.content.startsWith('Error: this tool call produced no result');
      const kept = repaired.flatMap((m) => (Array.isArray(m.content) ? m.content.filter((b) => b.type === 'tool_result' && !synthetic(b)).map(key) : []));
      expect(kept.sort()).toEqual(real.sort());
      const { result, max } = run(messages, o);
      expect(result.report.repaired.length).toBeGreaterThan(0);
      checkView(messages, clone, repaired, result, max, t, false);
    }), formatPropertyParams());
    // eslint-disable-next-line no-console
    console.log('anthropic broken histories:', JSON.stringify(t));
    expect(t.dropped).toBeGreaterThan(t.runs / 10);
  });
});

describe('anthropic: the user\'s words before the results of a message', () => {
  test('property: a text block put before a results message\'s tool_result blocks: repair moves the results first, every block kept, the history valid', () => {
    let fixed = 0;
    fc.assert(fc.property(validAnthropicHistory(), fc.nat(), (history, pick) => {
      const at = history.flatMap((m, i) => (m.role === 'user' && Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_result') ? [i] : []));
      fc.pre(at.length > 0);
      // With thinking on, the user's words inside the open tool loop start a new loop (see below).
      fc.pre(!history.some((m) => Array.isArray(m.content) && m.content.some((b) => b.type === 'thinking' || b.type === 'redacted_thinking')));
      const k = at[pick % at.length];
      const words: AnthropicBlock = { type: 'text', text: 'here is what the tools said' };
      const input = history.map((m, i) => (i === k ? { ...m, content: [words, ...(m.content as AnthropicBlock[])] } : m));
      expect(anthropicProblems(input).length).toBeGreaterThan(0);
      const { messages } = repairHistory(input, { format: 'anthropic' });
      expect(anthropicProblems(messages)).toEqual([]);
      const blocks = (list: readonly AnthropicMessage[]) => list.flatMap((m): unknown[] => (Array.isArray(m.content) ? m.content : [m.content])).map((b) => JSON.stringify(b)).sort();
      expect(blocks(messages)).toEqual(blocks(input));
      fixed++;
    }), formatPropertyParams());
    expect(fixed).toBeGreaterThan(10);
  });
});

describe('anthropic: a user message written while the tools ran', () => {
  test('property: a user text put between a tool_use turn and its results message: repair keeps every result, first in that user message, and the history is valid, with no two user turns in a row', () => {
    let joined = 0;
    fc.assert(fc.property(validAnthropicHistory(), fc.nat(), (history, pick) => {
      // Turns whose next message holds only tool_result blocks.
      const at = history.flatMap((m, i) => (m.role === 'assistant' && Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_use')
        && Array.isArray(history[i + 1]?.content) && (history[i + 1].content as AnthropicBlock[]).every((b) => b.type === 'tool_result') ? [i] : []));
      fc.pre(at.length > 0);
      // With thinking on, the user's words inside the open tool loop start a new loop whose first
      // assistant message lacks thinking: the API refuses that whatever repair does, so those
      // histories are left out here.
      fc.pre(!history.some((m) => Array.isArray(m.content) && m.content.some((b) => b.type === 'thinking' || b.type === 'redacted_thinking')));
      const turn = at[pick % at.length];
      const words: AnthropicMessage = { role: 'user', content: 'also, check the other one' };
      const input = [...history.slice(0, turn + 1), words, ...history.slice(turn + 1)];
      const { messages } = repairHistory(input, { format: 'anthropic' });
      expect(anthropicProblems(messages)).toEqual([]);
      const blocks = (list: readonly AnthropicMessage[]) => list.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === 'tool_result').map((b) => JSON.stringify(b));
      expect(blocks(messages)).toEqual(blocks(history));
      const host = messages[turn + 1].content as AnthropicBlock[];
      expect(host.at(-1)).toEqual({ type: 'text', text: 'also, check the other one' });
      // The two user turns became one: as many messages as the history had.
      expect(messages).toHaveLength(history.length);
      joined++;
    }), formatPropertyParams());
    expect(joined).toBeGreaterThan(10);
  });
});

