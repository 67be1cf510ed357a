import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { expect } from '@jest/globals';
import type { CompressResult } from '../../src/index.js';
import { MISSING_RESULT_TEXT } from '../../src/core/repair.js';
import { openaiChatLens } from '../../src/formats/openai-chat/lens.js';
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';
import type { TokenCounter } from '../../src/tokens/counter.js';
import { expectedRepair, matchesAddedResult, pairingProblems, unitStarts } from './oracle.js';

/**
 * Checks a view made by `compressContext` against the history it came from, computing what must
 * hold independently of the planner: the view is valid, the head, system messages and the last
 * user turn are there untouched, every other message is the caller's own object in order (or a
 * reported collapsed copy, a repair's synthetic result, or the summary), and the token figures add up.
 * Validity, units and repairs are judged by `oracle.ts`, which shares no code with the planner.
 */

/**
 * Everything a caller can observe of one result, as plain data (the report's getters read), for
 * comparing a plan made with a chat memory against a fresh one; `prefixTokensShared` is left out,
 * since it compares with the chat's previous view and exists only with a chat memory.
 */
export function observedResult<M>(r: CompressResult<M>): { messages: M[]; report: unknown } {
  return { messages: r.messages, report: JSON.parse(JSON.stringify({ ...r.report, prefixTokensShared: undefined })) as unknown };
}

/** End (exclusive) of the first `keepFirst` messages rounded out to whole units. */
export function expectedHeadEnd(messages: readonly OpenAIChatMessage[], keepFirst: number): number {
  const n = messages.length;
  if (keepFirst <= 0 || n === 0) return 0;
  if (keepFirst >= n) return n;
  const starts = unitStarts(messages);
  return starts.find((s) => s >= keepFirst) ?? n;
}

/**
 * Start of what is never dropped at the end: the unit holding the last `keepLast` messages'
 * first one, or the last user message (a user message is always a unit of its own in OpenAI
 * Chat) when that is earlier, else the start of the last unit.
 */
export function expectedProtectedStart(messages: readonly OpenAIChatMessage[], keepLast = 0): number {
  const starts = unitStarts(messages);
  let start = starts.length > 0 ? starts[starts.length - 1] : 0;
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === 'user') { start = i; break; }
  const n = messages.length;
  if (keepLast > 0 && n - keepLast < n) {
    const first = Math.max(0, n - keepLast);
    const tail = Math.max(...starts.filter((s) => s <= first));
    start = Math.min(start, tail);
  }
  return start;
}

const isSystem = (m: OpenAIChatMessage) => m.role === 'system' || m.role === 'developer';

function isCollapsedCopy(out: OpenAIChatMessage, original: OpenAIChatMessage): boolean {
  return out !== original
    && typeof out.content === 'string'
    && out.content.startsWith('[tool result cleared')
    && isDeepStrictEqual({ ...out, content: null }, { ...original, content: null });
}

/** What a checked view did, so a property can show its runs reached the interesting cases. */
export interface ViewFacts {
  readonly asksSummary: boolean;
  readonly repaired: boolean;
  readonly dropped: number;
  readonly collapsed: number;
  readonly summarized: boolean;
  readonly overBudget: boolean;
  /** Results of the kept tail cleared to fit the budget. */
  readonly tailCleared: number;
}

/** Inputs of `expectSafeView`: the caller's history, the options used, the result and the counter. */
export interface ViewUnderTest {
  readonly original: readonly OpenAIChatMessage[];
  readonly keepFirst: number;
  /** The `keepLast` the view was made with (default 6, as compressContext's). */
  readonly keepLast?: number;
  /**
   * The kept tail may yield to the summary (`keepLastYields`, the default): a summary applied
   * may cover into the last `keepLast` messages, never past the start of the last user message's
   * unit; what is never dropped then starts where the summary ends. Off: the tail is sent whole.
   */
  readonly tailYieldsToSummary?: boolean;
  readonly maxContextTokens?: number;
  /** The `toolOutputTrim` the view was made with (default off). */
  readonly toolOutputTrim?: boolean | { readonly minChars?: number };
  readonly result: CompressResult<OpenAIChatMessage>;
  readonly counter: TokenCounter;
}

/** The text length of a tool message's content, as it is sent (a string, or its text parts joined). */
function resultChars(m: OpenAIChatMessage): number {
  if (typeof m.content === 'string') return m.content.length;
  if (!Array.isArray(m.content)) return 0;
  let chars = 0;
  for (const part of m.content as unknown[]) {
    if (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string') chars += (part as { text: string }).text.length;
  }
  return chars;
}

const isResult = (m: OpenAIChatMessage) => m.role === 'tool' || m.role === 'function';

/**
 * Indexes of the newest tool results, those the next reply reads: the last result message (role
 * `tool`, or legacy `function`) when no user message comes after it, and the `tool` messages right
 * before it that answer the same assistant turn. They are never cleared.
 */
function newestResults(messages: readonly OpenAIChatMessage[]): Set<number> {
  const out = new Set<number>();
  let last = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (isResult(messages[i])) { last = i; break; }
    if (messages[i].role === 'user') break;
  }
  if (last < 0) return out;
  out.add(last);
  if (messages[last].role === 'tool') for (let i = last - 1; i >= 0 && messages[i].role === 'tool'; i--) out.add(i);
  return out;
}

/** Asserts every invariant of a view (see the file comment); returns what the view did. */
export function expectSafeView(v: ViewUnderTest): ViewFacts {
  const { original, result, counter } = v;
  const { messages: out, report } = result;
  const originals = new Set<OpenAIChatMessage>(original);
  const repaired = expectedRepair(original);
  const ref = repaired.messages;
  const n = ref.length;
  const hEnd = expectedHeadEnd(ref, v.keepFirst);
  let pStart = Math.max(hEnd, expectedProtectedStart(ref, v.keepLast ?? 6));
  if (v.tailYieldsToSummary && report.summary.applied) {
    const coveredEnd = hEnd + report.summary.coveredMessages;
    if (coveredEnd > pStart) {
      let lastUser = -1;
      for (let i = n - 1; i >= 0; i--) if (ref[i].role === 'user') { lastUser = i; break; }
      const starts = unitStarts(ref);
      // Without a user message, the turn answered is the last unit.
      const bound = lastUser >= 0 ? lastUser : (starts[starts.length - 1] ?? 0);
      assert.ok(starts.includes(coveredEnd), `the summary ends at ${coveredEnd}, inside a unit`);
      assert.ok(coveredEnd <= Math.max(bound, hEnd), `the summary covers to ${coveredEnd}, past the last user message or last unit (${bound})`);
      pStart = coveredEnd;
    }
  }

  // (a) the provider accepts the view, and the repairs made are the ones the history needed.
  expect(pairingProblems(out)).toEqual([]);
  assert.equal(report.repaired.some((r) => r.action !== 'reported'), repaired.from.length !== original.length || repaired.from.some((f, k) => f !== k), 'report.repaired does not match what the history needed');
  assert.equal(report.messagesAfter, out.length);
  assert.equal(report.messagesBefore, n);
  assert.equal(report.headEnd, hEnd, 'report.headEnd');
  assert.equal(report.protectedStart, pStart, 'report.protectedStart');

  // (c) every message is the caller's own object, in order, unless reported as changed.
  const collapsedAt = new Set(report.collapsed.map((c) => c.index));
  const summaryAt = report.summary.applied ? hEnd : -1;
  if (summaryAt >= 0) {
    expect(out[summaryAt].content).toEqual(expect.stringMatching(/^\[Summary of \d+ earlier messages/));
    expect(originals.has(out[summaryAt])).toBe(false);
  }
  const refIndex: number[] = [];
  let j = 0;
  for (let k = 0; k < out.length; k++) {
    if (k === summaryAt) {
      refIndex.push(-1);
      continue;
    }
    const o = out[k];
    const matches = (i: number) => o === ref[i]
      || (repaired.from[i] === -1 && matchesAddedResult(o, ref[i]))
      || (collapsedAt.has(i) && isCollapsedCopy(o, ref[i]));
    while (j < n && !matches(j)) j++;
    if (j >= n) throw new Error(`view[${k}] (${JSON.stringify(o).slice(0, 200)}) is not an input message kept in order`);
    refIndex.push(j);
    j++;
  }
  const sent = new Map<number, OpenAIChatMessage>();
  refIndex.forEach((i, k) => {
    if (i >= 0) sent.set(i, out[k]);
  });
  // The report lists exactly the messages left out.
  const left = report.dropped.map((d) => d.index);
  const expectedLeft: number[] = [];
  for (let i = 0; i < n; i++) if (!sent.has(i)) expectedLeft.push(i);
  assert.deepEqual(left, expectedLeft, 'report.dropped does not list the messages left out');
  assert.equal(report.droppedCounts.summarized + report.droppedCounts.budget, left.length);
  for (const c of report.collapsed) assert.ok(isCollapsedCopy(sent.get(c.index)!, ref[c.index]), `collapsed message ${c.index} is not a collapsed copy in the view`);

  // (b) the head, the system messages and the last user turn onward are sent, untouched except
  // for a bulky tool result of the kept tail cleared as a last resort (see (g)).
  const trim = v.toolOutputTrim;
  const minChars = trim === undefined || trim === false ? undefined : trim === true ? 2000 : (trim.minChars ?? 2000);
  const newest = newestResults(ref);
  const tailCleared: number[] = [];
  for (let i = 0; i < n; i++) {
    if (i < hEnd || i >= pStart || isSystem(ref[i])) {
      const o = sent.get(i);
      if (o === undefined) throw new Error(`protected message ${i} (${ref[i].role}) is missing from the view`);
      if (collapsedAt.has(i)) {
        assert.ok(i >= pStart && minChars !== undefined, `protected message ${i} was cleared, but it is in the head or toolOutputTrim is off`);
        assert.ok(!newest.has(i), `message ${i}, one of the newest tool results, was cleared`);
        tailCleared.push(i);
        continue;
      }
      assert.ok(o === ref[i] || (repaired.from[i] === -1 && matchesAddedResult(o, ref[i])), `protected message ${i} was changed`);
    }
  }

  // (f) the reported size is a recount of the view.
  let recount = counter.requestOverhead;
  for (const m of out) recount += counter.message(m, openaiChatLens);
  assert.equal(report.tokensAfter, recount, 'report.tokensAfter is not a recount of the view');

  // (d) within budget unless reported otherwise; (e) never over budget when the protected part fits
  // (head + system messages + the last user turn onward + the summary + request overhead).
  const max = v.maxContextTokens;
  if (max !== undefined) {
    if (!report.overBudget) assert.ok(report.tokensAfter <= max, `view of ${report.tokensAfter} tokens is over the limit of ${max}, and not reported so`);
    // A summary only ever takes the room the protected part leaves, so it is not part of the floor.
    let floor = counter.requestOverhead;
    for (let i = 0; i < n; i++) if (i < hEnd || i >= pStart || isSystem(ref[i])) floor += counter.message(sent.get(i) ?? ref[i], openaiChatLens);
    // Nothing protected is ever dropped, so the view is over budget exactly when the protected part is.
    assert.equal(report.overBudget, floor > max, `overBudget is ${report.overBudget} while the protected part is ${floor} tokens for a limit of ${max}`);
    if (report.overBudget || tailCleared.length > 0) {
      for (const i of sent.keys()) assert.ok(i < hEnd || i >= pStart || isSystem(ref[i]), `${report.overBudget ? 'over budget' : 'a kept-tail result was cleared'}, yet droppable message ${i} was kept`);
    }
    // (g) with toolOutputTrim, a view over budget has cleared every bulky result of its kept tail
    // but the newest (where clearing saves tokens); one within budget cleared no more than it had to.
    if (report.overBudget && minChars !== undefined) {
      for (let i = pStart; i < n; i++) {
        if (!isResult(ref[i]) || newest.has(i) || collapsedAt.has(i) || resultChars(ref[i]) < minChars) continue;
        const copy = { ...ref[i], content: `[tool result cleared to save context: ${resultChars(ref[i])} characters omitted]` };
        assert.ok(counter.message(copy, openaiChatLens) >= counter.message(ref[i], openaiChatLens), `over budget, yet the kept tail's bulky result ${i} (${resultChars(ref[i])} chars) was not cleared`);
      }
    }
    if (!report.overBudget && tailCleared.length > 0) {
      const lastCleared = tailCleared[tailCleared.length - 1];
      // A result repair added stands in the oracle's reference as a short stand-in: priced at the text repair writes.
      const original = repaired.from[lastCleared] === -1 ? { ...ref[lastCleared], content: MISSING_RESULT_TEXT } : ref[lastCleared];
      const restored = report.tokensAfter - counter.message(sent.get(lastCleared)!, openaiChatLens) + counter.message(original, openaiChatLens);
      assert.ok(restored > max, `result ${lastCleared} of the kept tail was cleared, but the view fits without clearing it (${restored} <= ${max})`);
    }
  } else {
    expect(report.overBudget).toBe(false);
  }
  // What a summarizer is asked to fold in lies between the head and the protected turn, in whole
  // groups; where the summary in force was shortened for room, it may take in the kept
  // tail too (unless keepLastYields is false), but never the last user message or what follows it.
  if (report.summarize) {
    const { start, end } = report.summarize;
    const starts = new Set(unitStarts(ref));
    assert.ok(starts.has(start) && (starts.has(end) || end === n), `summarize range [${start}, ${end}) splits a group`);
    let lastUser = -1;
    for (let i = 0; i < n; i++) if (ref[i].role === 'user') lastUser = i;
    const squeezed = report.summary.shortened && v.tailYieldsToSummary !== false;
    const limit = squeezed ? Math.max(pStart, lastUser) : pStart;
    assert.ok(hEnd <= start && start < end && end <= limit, `summarize range [${start}, ${end}) is outside [${hEnd}, ${limit})`);
  }
  return {
    asksSummary: report.summarize !== undefined,
    repaired: report.repaired.length > 0,
    dropped: n - (out.length - (summaryAt >= 0 ? 1 : 0)),
    collapsed: report.collapsed.length,
    summarized: summaryAt >= 0,
    overBudget: report.overBudget,
    tailCleared: tailCleared.length,
  };
}
