import assert from 'node:assert/strict';
import { expect } from '@jest/globals';
import type { CompressResult } from '../../src/index.js';
import { validateMessages } from '../../src/formats/profiles.js';

/**
 * Checks a view `compressContext` made of a Qwen-Agent or Hermes history (both are role/content
 * messages), from the outside: the provider profile and the format's independent checker accept
 * it; the input was not changed; every input message in the view is the caller's own object, in
 * order, byte-identical to a copy taken before the call; anything else in the view is something
 * ctxfold writes (a summary, a cleared result, a repair's error result, or a repaired copy of a
 * faulty message); the last user turn is there; the budget holds unless reported over.
 */

/** What one check looks at. */
export interface FormatViewCase<M> {
  /** The messages passed to compressContext, and a structuredClone taken before the call. */
  readonly input: readonly M[];
  readonly snapshot: readonly M[];
  readonly result: CompressResult<M>;
  readonly profile: 'qwen-agent' | 'hermes';
  readonly checker: (messages: readonly M[]) => readonly unknown[];
  readonly maxContextTokens?: number;
  /** True for a message a human typed (the last one must stay). */
  readonly userText: (m: M) => boolean;
  /** True for a message ctxfold may write itself or a repaired copy of an input message. */
  readonly written: (m: M) => boolean;
  /**
   * The user's own text of a message (without results), where repair may hand back a copy of a
   * user message that also carries results; the last user turn may then be that copy.
   */
  readonly ownText?: (m: M) => string;
}

/** What a checked view did, so properties can show their runs reached the interesting cases. */
export interface FormatViewFacts {
  readonly dropped: number;
  readonly collapsed: number;
  readonly summarized: boolean;
  readonly overBudget: boolean;
  readonly repaired: number;
}

/** Asserts every invariant of a view (see the file comment); returns what the view did. */
export function expectSafeFormatView<M extends { role: string; content?: unknown }>(c: FormatViewCase<M>): FormatViewFacts {
  const { input, snapshot, result } = c;
  const view = result.messages;
  const report = result.report;
  // structuredClone makes objects of another realm under jest: compare values and their JSON bytes.
  expect(input).toEqual(snapshot);
  assert.equal(JSON.stringify(input), JSON.stringify(snapshot), 'compressContext changed its input');
  assert.deepEqual(validateMessages(view, c.profile), [], 'the provider profile rejects the view');
  assert.deepEqual(c.checker(view), [], 'the independent checker rejects the view');
  const position = new Map<M, number>();
  input.forEach((m, i) => { if (!position.has(m)) position.set(m, i); });
  let last = -1;
  let summarized = false;
  for (const m of view) {
    const at = position.get(m);
    if (at === undefined) {
      if (typeof m.content === 'string' && m.content.startsWith('[Summary of ')) summarized = true;
      else assert.ok(c.written(m), `view message ${JSON.stringify(m).slice(0, 160)} is neither an input message nor one ctxfold writes`);
      continue;
    }
    assert.ok(at > last, `input message ${at} is out of order in the view`);
    last = at;
    assert.equal(JSON.stringify(m), JSON.stringify(snapshot[at]), `input message ${at} differs from its copy taken before the call`);
  }
  for (let i = input.length - 1; i >= 0; i--) {
    if (!c.userText(input[i])) continue;
    const own = c.ownText;
    const kept = view.includes(input[i]) || (own !== undefined && view.some((m) => c.written(m) && own(m) === own(input[i])));
    assert.ok(kept, `the last user message (${i}) is not in the view`);
    break;
  }
  const max = c.maxContextTokens;
  if (max !== undefined && !report.overBudget) assert.ok(report.tokensAfter <= max, `view of ${report.tokensAfter} tokens is over the limit of ${max}, and not reported so`);
  if (max === undefined) assert.equal(report.overBudget, false);
  if (report.overBudget && report.repaired.length === 0) {
    // Over budget only when what is never dropped does not fit: nothing droppable was kept.
    for (const m of view) {
      const at = position.get(m);
      if (at === undefined) continue;
      assert.ok(at < report.headEnd || at >= report.protectedStart || m.role === 'system', `over budget, yet droppable message ${at} was kept`);
    }
  }
  return {
    dropped: report.droppedCounts.budget + report.droppedCounts.summarized,
    collapsed: report.collapsed.length,
    summarized,
    overBudget: report.overBudget,
    repaired: report.repaired.length,
  };
}
