import { describe, expect, test } from '@jest/globals';
import { compressContext, createTokenCounter, validateMessages } from '../../src/index.js';
import { fromOpenAIChat, toOpenAIChat } from '../../src/formats/openai-responses/convert.js';
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';
import { corpusDescribe, loadCorpus } from '../helpers/corpus.js';
import { checkResponsesInput } from '../helpers/openai-responses-checker.js';

const counter = createTokenCounter();
const FORMAT = 'openai-responses' as const;
const RENAMED = /^messages\[(\d+)\]: tool call id (\S+) is used again \(Responses needs each call_id unique in the request\); it is (\S+) in the call and its results$/;

/** The Chat history with the renames `lost` reports applied: the call at messages[i] and the tool messages of its run. */
function withRenames(messages: readonly OpenAIChatMessage[], lost: readonly string[]): OpenAIChatMessage[] {
  const out = messages.map((m) => ({ ...m }));
  for (const entry of lost) {
    const [, at, from, to] = RENAMED.exec(entry)!;
    const i = Number(at);
    out[i].tool_calls = out[i].tool_calls!.map((c) => (c.id === from ? { ...c, id: to } : c));
    for (let k = i + 1; k < out.length && out[k].role === 'tool'; k++) if (out[k].tool_call_id === from) out[k] = { ...out[k], tool_call_id: to };
  }
  return out;
}

corpusDescribe(describe)('openai-responses on the real conversations (converted from OpenAI Chat)', () => {
  const corpus = loadCorpus();

  test('every conversation converts to a valid Responses input, and back to the same Chat history but for the renamed call ids', () => {
    let lossless = 0;
    let renamed = 0;
    for (const conv of corpus) {
      const c = fromOpenAIChat(conv.messages);
      expect(validateMessages(c.messages, FORMAT)).toEqual([]);
      expect(checkResponsesInput(c.messages)).toEqual([]);
      // The corpus's tool messages carry their call's name: it comes back from the call.
      expect(c.toolNames).toBe(conv.messages.some((m) => m.role === 'tool'));
      const back = toOpenAIChat(c.messages, { toolNames: c.toolNames });
      expect(back.lost).toEqual([]);
      if (c.lost.length === 0) {
        lossless++;
        expect(back.messages).toEqual(conv.messages);
      } else {
        // The only loss: call ids an earlier call already used, renamed in the call and its results.
        for (const entry of c.lost) expect(entry).toMatch(RENAMED);
        renamed += c.lost.length;
        expect(back.messages).toEqual(withRenames(conv.messages, c.lost));
      }
    }
    expect(lossless + renamed).toBeGreaterThan(0);
    // The corpus notes: 49 conversations reuse an id (73 cases).
    expect(corpus.length - lossless).toBe(49);
    expect(renamed).toBe(73);
  });

  test('each compresses to views valid for the profile and the checker at 25%, 50% and 75% of its size', () => {
    let dropped = 0;
    let views = 0;
    for (const conv of corpus) {
      const items = fromOpenAIChat(conv.messages).messages;
      const before = compressContext(items, { format: FORMAT, counter }).report.tokensBefore;
      for (const share of [0.25, 0.5, 0.75]) {
        const { messages, report } = compressContext(items, { format: FORMAT, counter, maxContextTokens: Math.floor(before * share) });
        expect(validateMessages(messages, FORMAT)).toEqual([]);
        expect(checkResponsesInput(messages)).toEqual([]);
        expect(report.repaired).toEqual([]);
        views++;
        if (report.droppedCounts.budget > 0) dropped++;
      }
    }
    expect(views).toBe(corpus.length * 3);
    expect(dropped).toBeGreaterThan(views / 2);
  });
});
