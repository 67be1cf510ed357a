import { isDeepStrictEqual } from 'node:util';
import { expect } from '@jest/globals';
import type { CompressResult, TokenCounter } from '../../src/index.js';
import { validateMessages } from '../../src/index.js';
import { geminiLens } from '../../src/formats/gemini/lens.js';
import type { GeminiContent } from '../../src/formats/gemini/types.js';
import { checkGemini, checkThoughtSignatures } from './gemini-checker.js';

/**
 * Checks one Gemini view made by `compressContext` against the history it was planned on (`ref`:
 * the input, or its repair) and the caller's own objects (`original`, with a deep copy taken before
 * the call): the view passes the gemini profile and the independent checker; every content that
 * came from the caller is the same object, unchanged to the byte (signatures included), in order;
 * anything else is the summary, the note of a cut, a collapsed copy or a repair's copy; the last
 * user turn is there; the token figures add up and keep the budget whenever the protected tail fits.
 */

/** What a checked view did, for the tallies that show a property reached the interesting cases. */
export interface GeminiViewFacts {
  readonly dropped: number;
  readonly collapsed: number;
  readonly summarized: boolean;
  readonly noted: boolean;
  readonly overBudget: boolean;
}

const hasUserStuff = (c: GeminiContent) => c.role !== 'model' && c.parts.some((p) => typeof p.text === 'string' || p.inlineData !== undefined || p.fileData !== undefined);
const textOf = (c: GeminiContent) => (c.parts.length === 1 && typeof c.parts[0].text === 'string' ? c.parts[0].text : undefined);

/** True when `out` is `ref` with some function responses replaced by the cleared-result placeholder (name and id kept). */
function isCollapsedCopy(out: GeminiContent, ref: GeminiContent): boolean {
  if (out.role !== ref.role || out.parts.length !== ref.parts.length) return false;
  let changed = 0;
  for (let k = 0; k < out.parts.length; k++) {
    const a = out.parts[k];
    const b = ref.parts[k];
    if (a === b || isDeepStrictEqual(a, b)) continue;
    const fa = a.functionResponse;
    const fb = b.functionResponse;
    if (!fa || !fb || fa.name !== fb.name || fa.id !== fb.id) return false;
    const placeholder = fa.response?.result;
    if (typeof placeholder !== 'string' || !placeholder.startsWith('[tool result cleared')) return false;
    const { functionResponse: _a, ...restA } = a;
    const { functionResponse: _b, ...restB } = b;
    if (!isDeepStrictEqual(restA, restB)) expect(restA).toEqual(restB); // the signature and every other field of the part stay
    changed++;
  }
  return changed > 0;
}

/** Inputs of `expectGeminiView`. */
export interface GeminiViewUnderTest {
  readonly original: readonly GeminiContent[];
  /** A deep copy of `original` taken before the call. */
  readonly snapshot: readonly GeminiContent[];
  /** The history the plan was made on (the input, or its repaired copy). */
  readonly ref: readonly GeminiContent[];
  readonly maxContextTokens?: number;
  readonly result: CompressResult<GeminiContent>;
  readonly counter: TokenCounter;
}

/** Asserts every invariant of a view (see the file comment) and returns what the view did. */
export function expectGeminiView(v: GeminiViewUnderTest): GeminiViewFacts {
  const { original, snapshot, ref, result, counter } = v;
  const { messages: view, report } = result;
  expect(validateMessages(view, 'gemini')).toEqual([]);
  expect(checkGemini(view)).toEqual([]);
  // A history whose current turn is signed step by step stays so (Gemini 3).
  if (checkThoughtSignatures(ref).length === 0) expect(checkThoughtSignatures(view)).toEqual([]);

  const inOriginal = new Map(original.map((m, i) => [m, i]));
  const inRef = new Map(ref.map((m, i) => [m, i]));
  const collapsedAt = new Set(report.collapsed.map((c) => c.index));
  let last = -1;
  let summarized = false;
  let noted = false;
  for (let k = 0; k < view.length; k++) {
    const m = view[k];
    const o = inOriginal.get(m);
    // The caller's object, unchanged (signatures byte-identical). Checked by hand first: jest's
    // expect costs a stack trace per call, and this runs for every message of every view.
    if (o !== undefined && !isDeepStrictEqual(m, snapshot[o])) expect(m).toEqual(snapshot[o]);
    const i = inRef.get(m);
    if (i !== undefined) {
      if (!(i > last)) expect({ k, order: i > last }).toEqual({ k, order: true });
      last = i;
      continue;
    }
    const text = textOf(m);
    if (m.role === 'user' && text?.startsWith('[Summary of')) {
      expect(summarized).toBe(false);
      summarized = true;
      continue;
    }
    if (m.role === 'user' && text !== undefined && /^\[\d+ earlier messages of this conversation were left out/.test(text)) {
      noted = true;
      expect(geminiLens.read(view[k + 1]).kind).not.toBe('user');
      continue;
    }
    // A repair's copy (made again inside the call, so equal to the reference's, not the same object).
    const repaired = ref.findIndex((r, x) => x > last && !inOriginal.has(r) && isDeepStrictEqual(r, m));
    if (repaired >= 0 && !collapsedAt.has(repaired)) {
      last = repaired;
      continue;
    }
    const j = [...collapsedAt].filter((x) => x > last && isCollapsedCopy(m, ref[x])).sort((a, b) => a - b)[0];
    expect({ k, made: j !== undefined ? 'collapsed' : 'unknown' }).toEqual({ k, made: 'collapsed' });
    last = j;
  }
  expect(summarized).toBe(report.summary.applied);

  // The last user turn (text or media from the user) is kept as it was.
  for (let i = ref.length - 1; i >= 0; i--) {
    if (hasUserStuff(ref[i])) {
      expect(view.some((m) => m === ref[i] || isDeepStrictEqual(m, ref[i]))).toBe(true);
      break;
    }
  }
  // Token figures: the report adds up the view, and keeps the budget whenever the protected tail fits.
  let total = counter.requestOverhead + report.requestExtraTokens;
  for (const m of view) total += counter.message(m, geminiLens);
  expect(report.tokensAfter).toBe(total);
  if (v.maxContextTokens !== undefined && !report.overBudget) expect(report.tokensAfter).toBeLessThanOrEqual(v.maxContextTokens);
  expect(report.messagesAfter).toBe(view.length);
  return { dropped: report.droppedCounts.budget, collapsed: report.collapsed.length, summarized, noted, overBudget: report.overBudget };
}
