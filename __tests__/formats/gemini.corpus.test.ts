import { describe, expect, test } from '@jest/globals';
import { compressContext, createTokenCounter, validateMessages } from '../../src/index.js';
import { fromOpenAIChat, toOpenAIChat } from '../../src/formats/gemini/convert.js';
import type { GeminiContent } from '../../src/formats/gemini/types.js';
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';
import { corpusDescribe, loadCorpus } from '../helpers/corpus.js';
import { checkGemini } from '../helpers/gemini-checker.js';
import { expectGeminiView } from '../helpers/gemini-view.js';

/**
 * The real conversations of the shared corpus (OpenAI Chat), converted to Gemini: each converts to
 * valid contents, compresses to valid views at 25/50/75% of its tokens, and converts back to
 * exactly the input, except the one thing Gemini cannot carry that the corpus has: the formatting
 * of a call's arguments text (Gemini's args is an object), which `lost` names every time.
 */

const counter = createTokenCounter();
const ARGUMENTS_LOST = /^messages\[\d+\]\.tool_calls\[\d+\]\.function\.arguments: arguments formatting \(whitespace, escapes\) not kept; they come back as compact JSON$/;

/** `messages` with every call's arguments re-serialized compactly (what the round trip gives back). */
function compactArguments(messages: readonly OpenAIChatMessage[]): OpenAIChatMessage[] {
  return messages.map((m) => (m.tool_calls
    ? { ...m, tool_calls: m.tool_calls.map((c) => ({ ...c, function: { ...c.function, arguments: JSON.stringify(JSON.parse(c.function.arguments)) } })) }
    : m));
}

corpusDescribe(describe)('corpus conversations as Gemini contents', () => {
  const corpus = loadCorpus();

  test('each converts to valid contents and back: exactly the input where lost is empty; else lost names each re-serialized arguments text', () => {
    let exact = 0;
    let named = 0;
    for (const conversation of corpus) {
      const input = structuredClone(conversation.messages);
      const converted = fromOpenAIChat(input);
      expect(input).toEqual(conversation.messages); // not mutated
      expect(converted.systemInstruction?.parts).toHaveLength(1);
      expect(validateMessages(converted.messages, 'gemini')).toEqual([]);
      expect(checkGemini(converted.messages)).toEqual([]);
      const back = toOpenAIChat(converted.messages, converted.systemInstruction);
      expect(back.lost).toEqual([]);
      if (converted.lost.length === 0) {
        expect(back.messages).toEqual(conversation.messages);
        exact++;
        continue;
      }
      for (const entry of converted.lost) expect(entry).toMatch(ARGUMENTS_LOST);
      // Exactly the calls whose arguments text is not compact JSON are named, and nothing else differs.
      const expected: string[] = [];
      conversation.messages.forEach((m, i) => m.tool_calls?.forEach((c, k) => {
        if (JSON.stringify(JSON.parse(c.function.arguments)) !== c.function.arguments) expected.push(`messages[${i}].tool_calls[${k}]`);
      }));
      expect(converted.lost.map((l) => l.split('.function')[0])).toEqual(expected);
      expect(back.messages).toEqual(compactArguments(conversation.messages));
      named++;
    }
    expect(exact + named).toBe(corpus.length);
    expect(exact).toBeGreaterThan(corpus.length / 2);
  });

  test('each compresses to valid views at 25%, 50% and 75% of its tokens (0 violations in profile and checker)', () => {
    let cut = 0;
    let views = 0;
    for (const conversation of corpus) {
      const { messages: contents, systemInstruction } = fromOpenAIChat(conversation.messages);
      const snapshot = structuredClone(contents);
      const full = compressContext(contents, { format: 'gemini', counter, instructions: systemInstruction }).report.tokensBefore;
      for (const share of [0.25, 0.5, 0.75]) {
        for (const keep of [{}, { keepFirst: 0, keepLast: 1 }]) {
          const maxContextTokens = Math.floor(full * share);
          const result = compressContext(contents, { format: 'gemini', counter, instructions: systemInstruction, maxContextTokens, ...keep });
          views++;
          expect(validateMessages(result.messages, 'gemini')).toEqual([]);
          expect(checkGemini(result.messages)).toEqual([]);
          expectGeminiView({ original: contents, snapshot, ref: contents as GeminiContent[], maxContextTokens, result, counter });
          if (result.report.droppedCounts.budget > 0) cut++;
        }
      }
    }
    expect(views).toBe(corpus.length * 6);
    expect(cut).toBeGreaterThan(views / 2);
  });
});
