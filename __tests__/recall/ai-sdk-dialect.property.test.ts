import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { AI_SDK_RECALL } from '../../src/recall/ai-sdk-dialect.js';
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
});
