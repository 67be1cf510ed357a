import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { ANTHROPIC_RECALL } from '../../src/recall/anthropic-dialect.js';
import { propertyParams } from '../helpers/property-runs.js';

/** The Messages (Anthropic) recall dialect, judged by rules restated here from the Messages API's shapes. */
type Block = Record<string, unknown>;
const RECALL = 'ctxfold_recall';
const block = fc.oneof(
  fc.record({ type: fc.constant('text'), text: fc.string({ maxLength: 6 }) }),
  fc.record({ type: fc.constant('thinking'), thinking: fc.string({ maxLength: 6 }), signature: fc.constant('sig') }),
  fc.record({ type: fc.constantFrom('tool_use', 'tool_use', 'server_tool_use'), name: fc.constantFrom(RECALL, RECALL, 'lookup', 'web_search'), input: fc.dictionary(fc.constantFrom('q', 'ids'), fc.string({ maxLength: 4 })) }),
);
const message = fc.tuple(fc.array(block, { maxLength: 5 }), fc.constantFrom('tool_use', 'end_turn', 'max_tokens')).map(([blocks, stop]) => ({
  type: 'message', role: 'assistant', content: blocks.map((b, k) => (String(b.type).endsWith('tool_use') ? { ...b, id: `toolu_${k}` } : b)) as Block[], stop_reason: stop,
}));
const isRecall = (b: Block) => b.type === 'tool_use' && b.name === RECALL;

describe('Messages recall dialect', () => {
  test('read, answerable and without follow the rules: recall blocks only, a tool_use stop, nothing else to act on', () => {
    fc.assert(fc.property(message, (m) => {
      const recalls = m.content.filter(isRecall);
      const asked = ANTHROPIC_RECALL.read(m);
      const stripped = ANTHROPIC_RECALL.without(m);
      expect(asked === undefined).toBe(recalls.length === 0);
      expect(stripped === m).toBe(recalls.length === 0);
      if (!asked) return;
      expect(asked.calls.map((c) => c.id)).toEqual(recalls.map((b) => b.id));
      expect(asked.calls.map((c) => JSON.parse(c.arguments) as unknown)).toEqual(recalls.map((b) => b.input));
      const others = m.content.some((b) => String(b.type).endsWith('tool_use') && !isRecall(b));
      expect(asked.answerable).toBe(!others && m.stop_reason === 'tool_use');
      expect(stripped.content).toEqual(m.content.filter((b) => !isRecall(b)));
      expect(stripped.stop_reason).toBe(m.stop_reason === 'tool_use' && !others ? 'end_turn' : m.stop_reason);
      // The turn is the message's blocks as they came; the answers one user message of tool_result blocks.
      expect(ANTHROPIC_RECALL.turn(m)).toEqual([{ role: 'assistant', content: m.content }]);
      const results = ANTHROPIC_RECALL.combine!(asked.calls.map((c) => ANTHROPIC_RECALL.result(c, `a ${c.id}`)));
      expect(results).toEqual([{ role: 'user', content: asked.calls.map((c) => ({ type: 'tool_result', tool_use_id: c.id, content: `a ${c.id}` })) }]);
    }), propertyParams());
  });
});
