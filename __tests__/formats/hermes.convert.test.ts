import { describe, expect, test } from '@jest/globals';
import { compressContext, createTokenCounter, validateMessages } from '../../src/index.js';
import { fromOpenAIChat, toOpenAIChat } from '../../src/formats/hermes/convert.js';
import { hermesLens } from '../../src/formats/hermes/lens.js';
import type { HermesMessage } from '../../src/formats/hermes/types.js';
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';
import { FIXTURES } from '../fixtures/formats/hermes.js';
import { corpusDescribe, loadCorpus } from '../helpers/corpus.js';
import { checkHermes } from '../helpers/hermes-checker.js';

const counter = createTokenCounter();

const history = (): OpenAIChatMessage[] => [
  { role: 'system', content: 'You are a helpful assistant.' },
  { role: 'user', content: 'Weather in two cities?' },
  { role: 'assistant', content: 'Checking.', reasoning_content: 'Two lookups.', tool_calls: [
    { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Hangzhou"}' } },
    { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lisbon"}' } },
  ] },
  { role: 'tool', tool_call_id: 'call_b', name: 'get_weather', content: 'clear, 19C' },
  { role: 'tool', tool_call_id: 'call_a', name: 'get_weather', content: 'rain, 24C' },
  { role: 'assistant', content: 'Hangzhou is rainy, Lisbon clear.' },
];

/** The same history with the ids Hermes mints (`call_<messageIndex>_<k>`) and results in call order. */
function normalized(messages: readonly OpenAIChatMessage[]): OpenAIChatMessage[] {
  const out: OpenAIChatMessage[] = [];
  let ids = new Map<string, string>();
  let order: string[] = [];
  let run: OpenAIChatMessage[] = [];
  const flush = () => {
    out.push(...order.map((id) => run.find((t) => t.tool_call_id === id)!).filter(Boolean).map((t) => ({ ...t, tool_call_id: ids.get(t.tool_call_id!)! })));
    run = [];
  };
  messages.forEach((m) => {
    if (m.role === 'tool') {
      run.push(m);
      return;
    }
    if (run.length > 0) flush();
    if (m.role === 'assistant' && m.tool_calls) {
      const at = out.length;
      ids = new Map(m.tool_calls.map((c, k) => [c.id, `call_${at}_${k}`]));
      order = m.tool_calls.map((c) => c.id);
      out.push({ ...m, tool_calls: m.tool_calls.map((c) => ({ ...c, id: ids.get(c.id)! })) });
    } else out.push(m);
  });
  if (run.length > 0) flush();
  return out;
}

describe('OpenAI Chat -> Hermes text', () => {
  test('calls become <tool_call> blocks after the text, results one user message in call order, reasoning a <think> block', () => {
    const { messages, lost } = fromOpenAIChat(history());
    expect(messages).toEqual([
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: 'Weather in two cities?' },
      { role: 'assistant', content: '<think>\nTwo lookups.\n</think>\n\nChecking.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Hangzhou"}}\n</tool_call>\n<tool_call>\n{"name": "get_weather", "arguments": {"city":"Lisbon"}}\n</tool_call>' },
      { role: 'user', content: '<tool_response>\nrain, 24C\n</tool_response>\n<tool_response>\nclear, 19C\n</tool_response>' },
      { role: 'assistant', content: 'Hangzhou is rainy, Lisbon clear.' },
    ]);
    // Ids are lost (Hermes pairs by position), and the reordering is said.
    expect(lost).toEqual([
      'messages[2].tool_calls[0].id: call_a dropped (Hermes pairs calls and results by position)',
      'messages[2].tool_calls[1].id: call_b dropped (Hermes pairs calls and results by position)',
      'messages[4]: result moved to call order (place 1)',
      'messages[3]: result moved to call order (place 2)',
      'messages[4].tool_call_id: call_a dropped (Hermes pairs calls and results by position)',
      'messages[3].tool_call_id: call_b dropped (Hermes pairs calls and results by position)',
    ]);
    expect(validateMessages(messages, 'hermes')).toEqual([]);
    expect(checkHermes(messages)).toEqual([]);
  });

  test('back to OpenAI Chat: the same history with minted ids call_<messageIndex>_<k>', () => {
    const back = toOpenAIChat(fromOpenAIChat(history()).messages);
    expect(back.lost).toEqual([]);
    expect(back.messages).toEqual(normalized(history()));
    expect(back.messages[2].tool_calls!.map((c) => c.id)).toEqual(['call_2_0', 'call_2_1']);
    expect(validateMessages(back.messages, 'openai')).toEqual([]);
  });

  test('arguments that are not JSON, or a JSON string, survive the round trip exactly', () => {
    const input: OpenAIChatMessage[] = [
      { role: 'user', content: 'x' },
      { role: 'assistant', content: null, tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'f', arguments: 'not json' } },
        { id: 'c2', type: 'function', function: { name: 'g', arguments: '"a string"' } },
        { id: 'c3', type: 'function', function: { name: 'h', arguments: '{\n  "pretty": true\n}' } },
      ] },
      { role: 'tool', tool_call_id: 'c1', name: 'f', content: '1' },
      { role: 'tool', tool_call_id: 'c2', name: 'g', content: '2' },
      { role: 'tool', tool_call_id: 'c3', name: 'h', content: '3' },
    ];
    const there = fromOpenAIChat(input).messages;
    expect(hermesLens.read(there[1]).calls.map((c) => c.arguments)).toEqual(['not json', '"a string"', '{\n  "pretty": true\n}']);
    expect(toOpenAIChat(there).messages).toEqual(normalized(input));
  });

  test('what text cannot carry is named in lost', () => {
    const { lost } = fromOpenAIChat([
      { role: 'developer', content: 'terse' },
      { role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }], name: 'sam' },
      { role: 'assistant', content: 'ok', refusal: null },
    ]);
    expect(lost).toEqual([
      'messages[0]: role "developer" became "system"',
      'messages[1].name dropped (Hermes messages are role and text)',
      'messages[1].content: parts joined into one text (Hermes messages are text)',
      'messages[1].content[1]: part of type image_url dropped (Hermes text has no images, audio or files)',
      'messages[2].refusal dropped (Hermes messages are role and text)',
    ]);
  });

  test('a history without tool calls converts with nothing lost, and back to itself', () => {
    const plain: OpenAIChatMessage[] = [{ role: 'system', content: 's' }, { role: 'user', content: 'u' }, { role: 'assistant', content: 'a', reasoning_content: 'r' }];
    const there = fromOpenAIChat(plain);
    expect(there.lost).toEqual([]);
    expect(toOpenAIChat(there.messages)).toEqual({ messages: plain, lost: [] });
  });
});

describe('Hermes text -> OpenAI Chat', () => {
  test('every fixture becomes valid OpenAI Chat; a user note beside results becomes a user message after them', () => {
    for (const f of FIXTURES) expect({ name: f.name, v: validateMessages(toOpenAIChat(f.messages as HermesMessage[]).messages, 'openai') }).toEqual({ name: f.name, v: [] });
    const { messages, lost } = toOpenAIChat(FIXTURES[3].messages as HermesMessage[]);
    expect(messages.slice(1, 4)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1_0', type: 'function', function: { name: 'web_search', arguments: '{"query": "next LTS kernel release date"}' } }] },
      { role: 'tool', tool_call_id: 'call_1_0', name: 'web_search', content: 'No official date announced yet.' },
      { role: 'user', content: 'Also check the mailing list, please.' },
    ]);
    expect(lost).toEqual(["messages[2]: the user's text beside the results goes in a user message after them"]);
  });
});

corpusDescribe(describe)('the real corpus as Hermes text', () => {
  const corpus = loadCorpus();

  test('every conversation converts; lost names every id, and back it is the same history with minted ids', () => {
    for (const c of corpus) {
      const there = fromOpenAIChat(c.messages);
      const ids = c.messages.flatMap((m) => [...(m.tool_calls ?? []).map((t) => t.id), ...(m.role === 'tool' ? [m.tool_call_id] : [])]);
      // Ids are all Hermes loses of these conversations.
      expect(there.lost).toHaveLength(ids.length);
      for (const id of ids) expect(there.lost.some((l) => l.includes(` ${id} dropped (Hermes pairs calls and results by position)`))).toBe(true);
      const back = toOpenAIChat(there.messages);
      expect(back.lost).toEqual([]);
      expect(back.messages).toEqual(normalized(c.messages));
    }
  });

  test('every conversation compresses to valid views at 25%, 50% and 75% of its size', () => {
    let cut = 0;
    for (const c of corpus) {
      const messages = fromOpenAIChat(c.messages).messages;
      const full = compressContext(messages, { format: 'hermes', counter }).report;
      expect(full.repaired).toEqual([]);
      for (const share of [0.25, 0.5, 0.75]) {
        const max = Math.max(1, Math.floor(full.tokensBefore * share));
        const { messages: view, report } = compressContext(messages, { format: 'hermes', counter, maxContextTokens: max });
        expect({ id: c.id, share, violations: validateMessages(view, 'hermes'), checker: checkHermes(view) }).toEqual({ id: c.id, share, violations: [], checker: [] });
        if (!report.overBudget) expect(report.tokensAfter).toBeLessThanOrEqual(max);
        if (report.droppedCounts.budget > 0) cut++;
      }
    }
    expect(cut).toBeGreaterThan(corpus.length);
  });
});
