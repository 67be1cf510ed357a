import { describe, expect, test } from '@jest/globals';
import { compressContext, createTokenCounter, validateMessages } from '../../src/index.js';
import { fromOpenAIChat, toOpenAIChat } from '../../src/formats/anthropic/convert.js';
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';
import { anthropicProblems } from '../helpers/anthropic-checker.js';
import { corpusDescribe, loadCorpus } from '../helpers/corpus.js';

/**
 * The shared corpus of real OpenAI Chat conversations, converted to Anthropic Messages: the round
 * trip gives each conversation back apart from what `lost` names, and every conversation
 * compresses to views the provider accepts at 25, 50 and 75% of its size.
 */

const counter = createTokenCounter();
const FORMATTING = /^messages\[\d+\]\.tool_calls\[\d+\]\.function\.arguments: formatting not kept \(sent as a JSON object\)$/;
const RENAMED = /^messages\[\d+\]\.tool_calls\[\d+\]\.id: (\S+) is used again in this history; Anthropic wants unique tool_use ids, so it is (\S+) here and in its result$/;

/** `messages` with the arguments of the calls `lost` names re-serialized as compact JSON (what the round trip gives). */
function withCompactArguments(messages: readonly OpenAIChatMessage[], lost: readonly string[]): OpenAIChatMessage[] {
  const named = new Set(lost.filter((l) => FORMATTING.test(l)).map((l) => l.slice(0, l.indexOf('.function'))));
  return messages.map((m, i) => (m.tool_calls
    ? { ...m, tool_calls: m.tool_calls.map((c, k) => (named.has(`messages[${i}].tool_calls[${k}]`) ? { ...c, function: { ...c.function, arguments: JSON.stringify(JSON.parse(c.function.arguments)) } } : c)) }
    : m));
}

corpusDescribe(describe)('anthropic: the shared corpus', () => {
  const conversations = loadCorpus();

  test('round trip with ids kept: the conversation comes back, apart from the argument formatting lost names', () => {
    let lossless = 0;
    let reformatted = 0;
    for (const c of conversations) {
      const there = fromOpenAIChat(c.messages, { uniqueIds: false });
      expect(there.lost.filter((l) => !FORMATTING.test(l))).toEqual([]);
      expect(there.system).toBe(c.messages[0].content);
      const back = toOpenAIChat(there.messages, { system: there.system, toolNames: true });
      expect(back.lost).toEqual([]);
      expect(back.messages).toEqual(withCompactArguments(c.messages, there.lost));
      if (there.lost.length === 0) {
        lossless++;
        expect(back.messages).toEqual(c.messages);
      }
      reformatted += there.lost.length;
    }
    // eslint-disable-next-line no-console
    console.log(`anthropic corpus round trip: ${lossless} of ${conversations.length} lossless; ${reformatted} calls' arguments re-serialized`);
    expect(lossless).toBeGreaterThan(0);
  });

  test('with unique ids (the default): reused ids are renamed and reported, and the result is valid Anthropic', () => {
    let renamed = 0;
    let bedrockProblems = 0;
    for (const c of conversations) {
      const there = fromOpenAIChat(c.messages);
      const renames = there.lost.flatMap((l) => {
        const m = RENAMED.exec(l);
        return m ? [[m[2], m[1]] as const] : [];
      });
      expect(there.lost.filter((l) => !FORMATTING.test(l) && !RENAMED.test(l))).toEqual([]);
      renamed += renames.length;
      expect(validateMessages(there.messages, 'anthropic')).toEqual([]);
      expect(anthropicProblems(there.messages)).toEqual([]);
      if (validateMessages(there.messages, 'bedrock').length > 0) bedrockProblems++;
      // Undoing the renames named in lost gives the conversation back.
      const original = new Map(renames);
      const back = toOpenAIChat(there.messages, { system: there.system, toolNames: true }).messages.map((m) => ({
        ...m,
        ...(m.tool_calls ? { tool_calls: m.tool_calls.map((t) => ({ ...t, id: original.get(t.id) ?? t.id })) } : {}),
        ...(m.tool_call_id !== undefined ? { tool_call_id: original.get(m.tool_call_id) ?? m.tool_call_id } : {}),
      }));
      expect(back).toEqual(withCompactArguments(c.messages, there.lost));
    }
    // eslint-disable-next-line no-console
    console.log(`anthropic corpus: ${renamed} reused call ids renamed; ${bedrockProblems} conversations break a Bedrock-only rule`);
    expect(renamed).toBe(73); // the corpus README counts 73 reused ids
  });

  test('every conversation compresses to views the provider accepts at 25, 50 and 75% of its size (Anthropic; Bedrock without a head)', () => {
    let views = 0;
    let dropped = 0;
    let overBudget = 0;
    for (const c of conversations) {
      const { messages, system } = fromOpenAIChat(c.messages);
      const before = structuredClone(messages);
      const size = compressContext(messages, { format: 'anthropic', counter, instructions: system }).report.tokensBefore;
      for (const share of [0.25, 0.5, 0.75]) {
        const r = compressContext(messages, { format: 'anthropic', counter, instructions: system, maxContextTokens: Math.floor(size * share) });
        views++;
        if (r.report.droppedCounts.budget > 0) dropped++;
        if (r.report.overBudget) overBudget++;
        expect({ id: c.id, share, violations: validateMessages(r.messages, 'anthropic') }).toEqual({ id: c.id, share, violations: [] });
        expect({ id: c.id, share, problems: anthropicProblems(r.messages) }).toEqual({ id: c.id, share, problems: [] });
        expect(r.report.repaired).toEqual([]);
        // Kept messages are the converted history's own objects, in order.
        const kept = r.messages.filter((m) => messages.includes(m));
        expect(kept).toEqual(messages.filter((m) => kept.includes(m)));
        // Claude on Bedrock: without a head kept before the cut, the view also alternates and starts with a user turn.
        const b = compressContext(messages, { format: 'anthropic', counter, instructions: system, maxContextTokens: Math.floor(size * share), keepFirst: 0 });
        expect({ id: c.id, share, violations: validateMessages(b.messages, 'bedrock') }).toEqual({ id: c.id, share, violations: [] });
        expect({ id: c.id, share, problems: anthropicProblems(b.messages, { bedrock: true }) }).toEqual({ id: c.id, share, problems: [] });
      }
      expect(messages).toEqual(before);
    }
    // eslint-disable-next-line no-console
    console.log(`anthropic corpus: ${views} views, ${dropped} dropped history, ${overBudget} over budget (protected tail alone too large)`);
    expect(dropped).toBeGreaterThan(views / 2);
  });

  test('with ids kept as they are, compressContext with provider anthropic / bedrock makes them unique: every view is accepted', () => {
    let rekeyed = 0;
    for (const c of conversations) {
      const { messages, system } = fromOpenAIChat(c.messages, { uniqueIds: false });
      for (const provider of ['anthropic', 'bedrock'] as const) {
        const r = compressContext(messages, { provider, counter, instructions: system, maxContextTokens: 4000, keepFirst: provider === 'bedrock' ? 0 : 1 });
        if (r.report.repaired.length > 0) rekeyed++;
        expect({ id: c.id, provider, violations: r.report.violations }).toEqual({ id: c.id, provider, violations: [] });
        expect({ id: c.id, provider, problems: anthropicProblems(r.messages, { bedrock: provider === 'bedrock' }) }).toEqual({ id: c.id, provider, problems: [] });
      }
    }
    expect(rekeyed).toBeGreaterThan(0);
  });
});
