import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { AI_SDK_RECALL } from '../../src/recall/ai-sdk-dialect.js';
import { assembleParts, recallPartStripper, streamSignal } from '../../src/recall/ai-sdk-stream.js';
import { propertyParams } from '../helpers/property-runs.js';

/**
 * The AI SDK recall dialect reads a `doGenerate` result's content parts. Judged by rules restated
 * here from the middleware's contract, not by the dialect's own helpers.
 */
type Part = Record<string, unknown>;
const RECALL = 'ctxfold_recall';

const part = fc.oneof(
  fc.record({ type: fc.constant('text'), text: fc.string({ maxLength: 8 }) }),
  fc.record({ type: fc.constant('reasoning'), text: fc.string({ maxLength: 8 }) }),
  fc.record({
    type: fc.constant('tool-call'),
    toolName: fc.constantFrom(RECALL, RECALL, 'weather', 'lookup'),
    input: fc.oneof(fc.constant('{"query":"x"}'), fc.constant('{"ids":["#2"]}'), fc.constant('not json'), fc.constant('{}')),
    providerExecuted: fc.constantFrom(undefined, false, true),
  }, { requiredKeys: ['type', 'toolName', 'input'] }),
  fc.record({ type: fc.constant('tool-approval-request'), approvalId: fc.constant('a1'), toolCallId: fc.constant('t0') }),
);
const finish = fc.constantFrom<unknown>({ unified: 'tool-calls', raw: 'tool_calls' }, { unified: 'stop', raw: 'stop' }, 'tool-calls', 'stop', undefined);
const result = fc.tuple(fc.array(part, { maxLength: 6 }), finish).map(([parts, finishReason]) => ({
  // Tool-call ids unique within the result, as providers give them.
  content: parts.map((p, k) => (p.type === 'tool-call' ? { ...p, toolCallId: `call_${k}` } : p)) as Part[],
  finishReason,
  usage: { inputTokens: 1 },
}));

const isRecall = (p: Part) => p.type === 'tool-call' && p.toolName === RECALL;

describe('AI SDK recall dialect', () => {
  test('read finds exactly the recall calls, and nothing is read exactly when without changes nothing', () => {
    fc.assert(fc.property(result, (r) => {
      const recalls = r.content.filter(isRecall);
      const asked = AI_SDK_RECALL.read(r);
      const stripped = AI_SDK_RECALL.without(r);
      expect(asked === undefined).toBe(recalls.length === 0);
      expect(stripped === r).toBe(recalls.length === 0);
      if (!asked) return;
      expect(asked.calls.map((c) => c.id)).toEqual(recalls.map((p) => p.toolCallId));
      expect(asked.calls.map((c) => c.arguments)).toEqual(recalls.map((p) => p.input));
      // Answerable: nothing else the application or the provider would act on.
      const others = r.content.some((p) => (p.type === 'tool-call' && !isRecall(p)) || p.type === 'tool-approval-request');
      expect(asked.answerable).toBe(!others && recalls.every((p) => p.providerExecuted !== true));
    }), propertyParams());
  });

  test('without keeps every other part in order (the same objects) and finishes for stop when no call is left', () => {
    fc.assert(fc.property(result, (r) => {
      const out = AI_SDK_RECALL.without(r);
      const kept = r.content.filter((p) => !isRecall(p));
      expect(out.content).toEqual(kept);
      out.content.forEach((p, k) => expect(p).toBe(kept[k]));
      const callsLeft = kept.some((p) => p.type === 'tool-call');
      const before = r.finishReason;
      const unifiedBefore = typeof before === 'object' && before !== null ? (before as { unified: string }).unified : before;
      const after = out.finishReason;
      const unifiedAfter = typeof after === 'object' && after !== null ? (after as { unified: string }).unified : after;
      if (r.content.some(isRecall) && !callsLeft && unifiedBefore === 'tool-calls') expect(unifiedAfter).toBe('stop');
      else expect(after).toEqual(before);
      expect(r.content.filter(isRecall).length === 0 || out !== r).toBe(true);
    }), propertyParams());
  });

  test('the turn and one result per call form a complete call turn of the provider prompt', () => {
    fc.assert(fc.property(result, (r) => {
      const asked = AI_SDK_RECALL.read(r);
      if (!asked) return;
      const [assistant, ...rest] = AI_SDK_RECALL.turn(r) as { role: string; content: Part[] }[];
      expect(rest).toEqual([]);
      expect(assistant.role).toBe('assistant');
      const calls = assistant.content.filter((p) => p.type === 'tool-call');
      // Only the recall calls go into the history, each with its input parsed where it is JSON.
      expect(calls.map((p) => [p.toolCallId, p.toolName])).toEqual(asked.calls.map((c) => [c.id, RECALL]));
      calls.forEach((p, k) => {
        let expected: unknown = asked.calls[k].arguments;
        try {
          expected = JSON.parse(asked.calls[k].arguments);
        } catch {
          // not JSON: carried as the text it was
        }
        expect(p.input).toEqual(expected);
      });
      // Texts and reasoning come along, in order; nothing else does.
      const others = assistant.content.filter((p) => p.type !== 'tool-call');
      expect(others.map((p) => [p.type, p.text])).toEqual(r.content.filter((p) => (p.type === 'text' && p.text !== '') || p.type === 'reasoning').map((p) => [p.type, p.text]));
      const results = asked.calls.map((c) => AI_SDK_RECALL.result(c, `answer ${c.id}`) as { role: string; content: Part[] });
      for (const [k, m] of results.entries()) {
        expect(m).toEqual({ role: 'tool', content: [{ type: 'tool-result', toolCallId: asked.calls[k].id, toolName: RECALL, output: { type: 'text', value: `answer ${asked.calls[k].id}` } }] });
      }
    }), propertyParams());
  });

  /** The stream parts a provider would send for `r`: text and reasoning in deltas, each call's input in two deltas, then the finish. */
  function partsOf(r: { content: Part[]; finishReason: unknown }, cut: number): Part[] {
    const out: Part[] = [{ type: 'stream-start', warnings: [] }];
    r.content.forEach((p, k) => {
      const id = `p${k}`;
      if (p.type === 'text' || p.type === 'reasoning') {
        const text = p.text as string;
        const at = Math.min(text.length, cut);
        out.push({ type: `${p.type}-start`, id }, { type: `${p.type}-delta`, id, delta: text.slice(0, at) }, { type: `${p.type}-delta`, id, delta: text.slice(at) }, { type: `${p.type}-end`, id });
      } else if (p.type === 'tool-call') {
        const input = p.input as string;
        out.push({ type: 'tool-input-start', id: p.toolCallId, toolName: p.toolName, ...(p.providerExecuted !== undefined ? { providerExecuted: p.providerExecuted } : {}) });
        out.push({ type: 'tool-input-delta', id: p.toolCallId, delta: input.slice(0, cut) }, { type: 'tool-input-delta', id: p.toolCallId, delta: input.slice(cut) }, { type: 'tool-input-end', id: p.toolCallId }, p);
      } else out.push(p);
    });
    out.push({ type: 'finish', finishReason: r.finishReason, usage: { inputTokens: { total: 1 } } });
    return out;
  }

  test('streams: stripping the recall calls from the parts adds up to the result without them', () => {
    fc.assert(fc.property(result, fc.nat(6), (r, cut) => {
      const parts = partsOf(r, cut);
      const strip = recallPartStripper();
      const kept = parts.map((p) => strip(p)).filter((p): p is Part => p !== undefined);
      const whole = assembleParts(parts);
      const expected = AI_SDK_RECALL.without(whole);
      const got = assembleParts(kept);
      expect(got.content).toEqual(expected.content);
      expect(got.finishReason).toEqual(expected.finishReason);
      // No part of a recall call is left, and every other part passed as the same object.
      const recallIds = new Set(r.content.filter(isRecall).map((p) => p.toolCallId));
      for (const p of kept) expect(recallIds.has((p.id ?? p.toolCallId) as string) && String(p.type).startsWith('tool-')).toBe(false);
      for (const p of kept) if (p.type !== 'finish') expect(parts).toContain(p);
    }), propertyParams());
  });

  test('streams: the first telling part is text for the user, a recall call, or anything else the application acts on', () => {
    fc.assert(fc.property(result, fc.nat(6), (r, cut) => {
      const parts = partsOf(r, cut);
      const first = parts.map((p) => streamSignal(p)).find((x) => x !== undefined);
      // Restated: the first non-empty text delta, the first call or approval request, whichever comes first.
      const telling = parts.find((p) => (p.type === 'text-delta' && p.delta !== '') || p.type === 'tool-input-start' || p.type === 'tool-call' || p.type === 'tool-approval-request');
      const expected = telling === undefined ? undefined
        : telling.type === 'text-delta' ? 'text'
          : telling.type !== 'tool-approval-request' && telling.toolName === RECALL && telling.providerExecuted !== true ? 'recall' : 'other';
      expect(first).toBe(expected);
    }), propertyParams());
  });
});
