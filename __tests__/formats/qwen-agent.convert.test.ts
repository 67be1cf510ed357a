import { describe, expect, test } from '@jest/globals';
import { compressContext, createTokenCounter, validateMessages } from '../../src/index.js';
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';
import { fromOpenAIChat, toOpenAIChat } from '../../src/formats/qwen-agent/convert.js';
import type { QwenAgentMessage } from '../../src/formats/qwen-agent/types.js';
import { FIXTURES } from '../fixtures/formats/qwen-agent.js';
import { corpusDescribe, loadCorpus } from '../helpers/corpus.js';
import { checkQwenAgent } from '../helpers/qwen-agent-checker.js';

const counter = createTokenCounter();

/** An OpenAI Chat history that Qwen-Agent can carry whole: parallel calls, reasoning, an image, legacy function calling. */
const lossless = (): OpenAIChatMessage[] => [
  { role: 'system', content: 'You are a helpful assistant.' },
  { role: 'user', content: [{ type: 'text', text: 'What is on this chart, and the weather in two cities?' }, { type: 'image_url', image_url: { url: 'https://example.com/chart.png' } }] },
  { role: 'assistant', content: 'Let me check both cities.', reasoning_content: 'Two independent lookups.', tool_calls: [
    { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Hangzhou"}' } },
    { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Lisbon"}' } },
  ] },
  { role: 'tool', tool_call_id: 'call_a', name: 'get_weather', content: 'rain, 24C' },
  { role: 'tool', tool_call_id: 'call_b', name: 'get_weather', content: 'clear, 19C' },
  { role: 'assistant', content: 'The chart shows sales; Hangzhou is rainy, Lisbon clear.' },
  { role: 'user', content: 'And the time?', name: 'sam' },
  { role: 'assistant', content: null, function_call: { name: 'get_time', arguments: '{}' } },
  { role: 'function', name: 'get_time', content: '10:42' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'call_c', type: 'function', function: { name: 'get_date', arguments: '{}' } }] },
  { role: 'tool', tool_call_id: 'call_c', name: 'get_date', content: '2026-05-01' },
  { role: 'assistant', content: 'It is 10:42 on May 1.' },
];

describe('OpenAI Chat -> Qwen-Agent', () => {
  test('tool_calls become consecutive function_call messages keyed by extra.function_id; text and reasoning go first', () => {
    const { messages, lost } = fromOpenAIChat(lossless());
    expect(lost).toEqual([]);
    expect(messages.slice(1, 6)).toEqual([
      { role: 'user', content: [{ text: 'What is on this chart, and the weather in two cities?' }, { image: 'https://example.com/chart.png' }] },
      { role: 'assistant', content: 'Let me check both cities.', reasoning_content: 'Two independent lookups.' },
      { role: 'assistant', content: '', function_call: { name: 'get_weather', arguments: '{"city": "Hangzhou"}' }, extra: { function_id: 'call_a' } },
      { role: 'assistant', content: '', function_call: { name: 'get_weather', arguments: '{"city": "Lisbon"}' }, extra: { function_id: 'call_b' } },
      { role: 'function', name: 'get_weather', content: 'rain, 24C', extra: { function_id: 'call_a' } },
    ]);
    expect(messages[9]).toEqual({ role: 'assistant', content: '', function_call: { name: 'get_time', arguments: '{}' } });
    expect(validateMessages(messages, 'qwen-agent')).toEqual([]);
    expect(checkQwenAgent(messages)).toEqual([]);
  });

  test('with nothing lost, converting back gives the input again', () => {
    const input = lossless();
    const there = fromOpenAIChat(input);
    expect(there.lost).toEqual([]);
    const back = toOpenAIChat(there.messages);
    expect(back.lost).toEqual([]);
    expect(back.messages).toEqual(input);
  });

  test('what Qwen-Agent cannot carry is named in lost', () => {
    const { messages, lost } = fromOpenAIChat([
      { role: 'developer', content: 'be terse' },
      { role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }, { type: 'image_url', image_url: { url: 'https://example.com/x.png', detail: 'low' } }] },
      { role: 'assistant', content: '', refusal: null, tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } },
        { id: 'call_2', function: { name: 'g', arguments: '{}' } },
      ] },
      { role: 'tool', tool_call_id: 'call_2', content: 'G' },
      { role: 'tool', tool_call_id: 'call_1', name: 'f', content: null },
      { role: 'assistant', content: 'ok' },
    ]);
    expect(lost).toEqual(expect.arrayContaining([
      'messages[0]: role "developer" became "system" (Qwen-Agent has no developer role)',
      expect.stringContaining('messages[1].content[0]: part of type input_audio dropped'),
      expect.stringContaining('messages[1].content[1].image_url: only the url is kept'),
      'messages[2].refusal dropped (Qwen-Agent has no such field)',
      'messages[2].content: empty content of a message with calls became null',
      'messages[2].tool_calls[1].type: missing type becomes "function"',
      'messages[3]: result moved to call order (Qwen-Agent reads results by position)',
      'messages[4]: result moved to call order (Qwen-Agent reads results by position)',
      expect.stringContaining('messages[3].name: the function message is named after its call (g)'),
      'messages[4].content: null became ""',
    ]));
    // Results follow the call order, so the Qwen-Agent history is valid.
    expect(messages.filter((m) => m.role === 'function').map((m) => m.name)).toEqual(['f', 'g']);
    expect(validateMessages(messages, 'qwen-agent')).toEqual([]);
  });
});

describe('Qwen-Agent -> OpenAI Chat', () => {
  test('one model response (reasoning, text, calls) becomes one assistant message; every fixture becomes valid OpenAI Chat', () => {
    for (const f of FIXTURES) {
      const { messages } = toOpenAIChat(f.messages as QwenAgentMessage[]);
      expect({ name: f.name, violations: validateMessages(messages, 'openai') }).toEqual({ name: f.name, violations: [] });
    }
    const reasoning = toOpenAIChat(FIXTURES[1].messages as QwenAgentMessage[]).messages;
    expect(reasoning[1]).toEqual({
      role: 'assistant',
      content: 'Let me look at the schema.',
      reasoning_content: 'I should list the tables first.',
      tool_calls: [{ id: 'chatcmpl-tool-1', type: 'function', function: { name: 'list_tables', arguments: '{}' } }],
    });
  });

  test('function_id "1" on every call (the Nous prompt): ids are minted per call and named in lost', () => {
    const { messages, lost } = toOpenAIChat(FIXTURES[2].messages as QwenAgentMessage[]);
    expect(messages[2].tool_calls!.map((c) => c.id)).toEqual(['1', 'call_3_0']);
    expect(messages.slice(3, 5).map((m) => m.tool_call_id)).toEqual(['1', 'call_3_0']);
    expect(lost).toContain('messages[3].extra.function_id: "1" repeats an id of the same turn; id call_3_0 minted (OpenAI tool calls need unique ids)');
    expect(validateMessages(messages, 'openai')).toEqual([]);
  });

  test('id-less parallel calls get minted ids; a lone id-less call stays a legacy function call', () => {
    const { messages, lost } = toOpenAIChat([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '', function_call: { name: 'a', arguments: '{}' } },
      { role: 'assistant', content: '', function_call: { name: 'b', arguments: '{}' } },
      { role: 'function', name: 'a', content: 'A' },
      { role: 'function', name: 'b', content: 'B' },
      { role: 'assistant', content: '', function_call: { name: 'c', arguments: '{}' } },
      { role: 'function', name: 'c', content: 'C' },
    ]);
    expect(messages).toEqual([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1_0', type: 'function', function: { name: 'a', arguments: '{}' } }, { id: 'call_2_0', type: 'function', function: { name: 'b', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_1_0', name: 'a', content: 'A' },
      { role: 'tool', tool_call_id: 'call_2_0', name: 'b', content: 'B' },
      { role: 'assistant', content: null, function_call: { name: 'c', arguments: '{}' } },
      { role: 'function', name: 'c', content: 'C' },
    ]);
    expect(lost).toHaveLength(2);
    expect(validateMessages(messages, 'openai')).toEqual([]);
  });
});

corpusDescribe(describe)('the real corpus as Qwen-Agent', () => {
  const corpus = loadCorpus();

  test('every conversation converts with nothing lost and converts back to itself', () => {
    for (const c of corpus) {
      const there = fromOpenAIChat(c.messages);
      expect({ id: c.id, lost: there.lost }).toEqual({ id: c.id, lost: [] });
      expect(toOpenAIChat(there.messages).messages).toEqual(c.messages);
    }
  });

  test('every conversation compresses to valid views at 25%, 50% and 75% of its size', () => {
    let views = 0;
    let cut = 0;
    for (const c of corpus) {
      const messages = fromOpenAIChat(c.messages).messages;
      const full = compressContext(messages, { format: 'qwen-agent', counter }).report;
      expect(full.repaired).toEqual([]);
      for (const share of [0.25, 0.5, 0.75]) {
        const max = Math.max(1, Math.floor(full.tokensBefore * share));
        const { messages: view, report } = compressContext(messages, { format: 'qwen-agent', counter, maxContextTokens: max });
        expect({ id: c.id, share, violations: validateMessages(view, 'qwen-agent'), checker: checkQwenAgent(view) }).toEqual({ id: c.id, share, violations: [], checker: [] });
        if (!report.overBudget) expect(report.tokensAfter).toBeLessThanOrEqual(max);
        views++;
        if (report.droppedCounts.budget > 0) cut++;
      }
    }
    expect(views).toBe(corpus.length * 3);
    expect(cut).toBeGreaterThan(corpus.length);
  });
});
