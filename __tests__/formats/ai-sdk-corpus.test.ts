import { describe, expect, test } from '@jest/globals';
import { compressContext, createTokenCounter, validateMessages } from '../../src/index.js';
import { fromOpenAIChat, toOpenAIChat } from '../../src/formats/ai-sdk/convert.js';
import type { AiSdkMessage } from '../../src/formats/ai-sdk/types.js';
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';
import { checkAiSdk } from '../helpers/ai-sdk-checker.js';
import { corpusDescribe, loadCorpus } from '../helpers/corpus.js';
import { FIXTURES } from '../fixtures/formats/ai-sdk.js';

/**
 * The real OpenAI Chat corpus, converted to AI SDK `ModelMessage`s with `fromOpenAIChat`: each
 * conversation compresses to valid views at 25/50/75% of its size (the `ai-sdk` profile and the
 * independent checker both find nothing), and converting back with `toOpenAIChat` gives the input
 * again, except exactly what `lost` names (which is checked field by field).
 */

const counter = createTokenCounter();

/** The (message, call) places `lost` says had their arguments re-serialized. */
function reserialized(lost: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const l of lost) {
    const m = /^messages\[(\d+)\]\.tool_calls\[(\d+)\]\.function\.arguments: arguments re-serialized/.exec(l);
    if (m) out.add(`${m[1]}:${m[2]}`);
  }
  return out;
}

/** `original` with the arguments `lost` names replaced by their re-serialized JSON (what converting back gives). */
function expectedBack(original: readonly OpenAIChatMessage[], lost: readonly string[]): OpenAIChatMessage[] {
  const places = reserialized(lost);
  return original.map((m, i) => (!Array.isArray(m.tool_calls) ? m : {
    ...m,
    tool_calls: m.tool_calls.map((c, k) => (places.has(`${i}:${k}`) ? { ...c, function: { ...c.function, arguments: JSON.stringify(JSON.parse(c.function.arguments)) } } : c)),
  }));
}

corpusDescribe(describe)('ai-sdk on the corpus', () => {
  const corpus = loadCorpus();

  test('every conversation converts, compresses at 25/50/75% to valid views, and is detected as ai-sdk', () => {
    let views = 0;
    let dropped = 0;
    for (const conv of corpus) {
      const { messages, lost } = fromOpenAIChat(conv.messages);
      // The corpus is well formed: nothing but re-serialized arguments is lost on the way in.
      for (const l of lost) expect(l).toMatch(/arguments re-serialized/);
      expect(validateMessages(messages, 'ai-sdk')).toEqual([]);
      expect(checkAiSdk(messages)).toEqual([]);
      const whole = compressContext(messages, { format: 'auto', counter });
      // Detected by its tool parts; a conversation without tool traffic is plain text, read as OpenAI Chat.
      expect(whole.report.format).toBe(conv.messages.some((m) => Array.isArray(m.tool_calls)) ? 'ai-sdk' : 'openai');
      for (const share of [0.25, 0.5, 0.75]) {
        const max = Math.max(1, Math.floor(whole.report.tokensBefore * share));
        const { messages: view, report } = compressContext(messages, { format: 'ai-sdk', counter, maxContextTokens: max });
        expect(validateMessages(view, 'ai-sdk')).toEqual([]);
        expect(checkAiSdk(view)).toEqual([]);
        expect(report.repaired).toEqual([]);
        if (!report.overBudget) expect(report.tokensAfter).toBeLessThanOrEqual(max);
        views++;
        dropped += report.droppedCounts.budget;
      }
    }
    expect(views).toBe(corpus.length * 3);
    expect(dropped).toBeGreaterThan(0);
  });

  test('toOpenAIChat(fromOpenAIChat(x)) is x, except the arguments lost names (re-serialized: equal as JSON)', () => {
    let exact = 0;
    let namedFields = 0;
    for (const conv of corpus) {
      const there = fromOpenAIChat(conv.messages);
      const back = toOpenAIChat(there.messages);
      expect(back.lost).toEqual([]);
      if (there.lost.length === 0) {
        expect(back.messages).toEqual(conv.messages);
        exact++;
      } else {
        expect(back.messages).toEqual(expectedBack(conv.messages, there.lost));
        namedFields += there.lost.length;
        // What lost names is only formatting: the arguments are equal as JSON.
        for (const place of reserialized(there.lost)) {
          const [i, k] = place.split(':').map(Number);
          expect(JSON.parse(back.messages[i].tool_calls![k].function.arguments)).toEqual(JSON.parse(conv.messages[i].tool_calls![k].function.arguments));
        }
      }
    }
    expect(exact).toBeGreaterThan(0);
    expect(namedFields).toBeGreaterThan(0);
    // eslint-disable-next-line no-console
    console.log(`ai-sdk corpus round trip: ${exact} of ${corpus.length} conversations exact, ${namedFields} re-serialized arguments named in lost`);
  });

  test('the AI SDK count of a converted conversation is close to the OpenAI count of the original', () => {
    let a = 0;
    let o = 0;
    for (const conv of corpus) {
      o += compressContext(conv.messages, { format: 'openai', counter }).report.tokensBefore;
      a += compressContext(fromOpenAIChat(conv.messages).messages, { format: 'ai-sdk', counter }).report.tokensBefore;
    }
    expect(Math.abs(a - o) / o).toBeLessThan(0.02);
  });
});

describe('ai-sdk converters', () => {
  const u = (content: OpenAIChatMessage['content']): OpenAIChatMessage => ({ role: 'user', content });

  test('fromOpenAIChat: arguments parsed, toolName from the call, consecutive tool messages in one, image detail kept', () => {
    const x: OpenAIChatMessage[] = [
      { role: 'system', content: 'sys' },
      u([{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'https://x/a.png', detail: 'low' } }]),
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }, { id: 'c2', type: 'function', function: { name: 'g', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', name: 'f', content: 'one' },
      { role: 'tool', tool_call_id: 'c2', name: 'g', content: [{ type: 'text', text: 'two' }] },
      { role: 'assistant', content: 'done' },
    ];
    const { messages, lost } = fromOpenAIChat(x);
    expect(lost).toEqual([]);
    expect(messages).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', image: 'https://x/a.png', providerOptions: { openai: { imageDetail: 'low' } } }] },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'f', input: { a: 1 } }, { type: 'tool-call', toolCallId: 'c2', toolName: 'g', input: {} }] },
      { role: 'tool', content: [
        { type: 'tool-result', toolCallId: 'c1', toolName: 'f', output: { type: 'text', value: 'one' } },
        { type: 'tool-result', toolCallId: 'c2', toolName: 'g', output: { type: 'content', value: [{ type: 'text', text: 'two' }] } },
      ] },
      { role: 'assistant', content: 'done' },
    ]);
    expect(toOpenAIChat(messages)).toEqual({ messages: x, lost: [] });
  });

  test('fromOpenAIChat names what it cannot carry', () => {
    const x: OpenAIChatMessage[] = [
      { role: 'developer', content: 'dev' },
      { role: 'user', content: 'hi', name: 'ann' },
      { role: 'assistant', content: 'x', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{bad json' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'r' },
      { role: 'tool', tool_call_id: 'zz', name: 'q', content: 'orphan' },
      { role: 'assistant', content: null, function_call: { name: 'old', arguments: '{"a": 2}' } },
      { role: 'function', name: 'old', content: 'legacy' },
    ];
    const { messages, lost } = fromOpenAIChat(x);
    expect(lost).toEqual([
      'messages[0].role: "developer" became "system"',
      'messages[1].name: dropped (an AI SDK message has no such field)',
      'messages[2].tool_calls[0].function.arguments: arguments are not valid JSON; kept as a string input',
      'messages[3]: has no name; converting back names it after its call (f)',
      'messages[4]: no call before it has this id; toolName taken from its own name',
      'messages[5].function_call: a legacy function call became a tool call with the made-up id function_call_5',
      'messages[5].function_call.arguments: arguments re-serialized from the parsed input (their formatting is not kept)',
      'messages[6].role: a legacy function result became the tool result of function_call_5',
    ]);
    expect(messages[2].content).toEqual([{ type: 'text', text: 'x' }, { type: 'tool-call', toolCallId: 'c1', toolName: 'f', input: '{bad json' }]);
    // A string input goes back as the very text it was.
    expect(toOpenAIChat([messages[2]]).messages[0].tool_calls![0].function.arguments).toBe('{bad json');
  });

  test('toOpenAIChat names what OpenAI Chat cannot carry: reasoning, provider calls, approvals, non-text outputs, provider options', () => {
    for (const f of FIXTURES) {
      const { messages, lost } = toOpenAIChat(f.messages as AiSdkMessage[]);
      expect(validateMessages(messages, 'openai')).toEqual([]);
      for (const l of lost) expect(l).toMatch(/^messages\[\d+\]/);
      const again = fromOpenAIChat(messages);
      if (lost.length === 0 && again.lost.length === 0) expect(again.messages).toEqual(f.messages);
    }
    const { lost } = toOpenAIChat(FIXTURES.find((f) => f.name.includes('approved'))!.messages as AiSdkMessage[]);
    expect(lost).toEqual(expect.arrayContaining([expect.stringMatching(/^messages\[1\]\.content\[1\]: a "tool-approval-request" part dropped/), expect.stringMatching(/^messages\[2\]\.content\[0\]: a "tool-approval-response" part dropped/)]));
    const reasoning = toOpenAIChat(FIXTURES.find((f) => f.name.includes('reasoning'))!.messages as AiSdkMessage[]).lost;
    expect(reasoning).toEqual(expect.arrayContaining([expect.stringMatching(/a "reasoning" part dropped/)]));
  });
});
