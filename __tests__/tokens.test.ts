import { describe, expect, test } from '@jest/globals';
import { get_encoding } from 'tiktoken';
import { openaiChatLens } from '../src/formats/openai-chat/lens.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { countInPieces } from '../src/tokens/tiktoken.js';
import { MESSAGE_OVERHEAD_TOKENS } from '../src/tokens/accounting.js';
import { compressContext, createHistoryCache } from '../src/index.js';
import { encodingForModel } from '../src/tokens/tiktoken.js';

const enc = get_encoding('o200k_base');
const exact = (t: string) => enc.encode_ordinary(t).length;

describe('token counting', () => {
  test('ordinary English, JSON and code count exactly as tiktoken does', () => {
    const texts = [
      'The quick brown fox jumps over the lazy dog. '.repeat(300),
      JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ id: `ABC${i}`, price: i * 7, note: 'ok' }))),
      'function f(x) { return x * 2; }\n'.repeat(100),
      '混合 text 和中文，带标点。'.repeat(200),
    ];
    for (const t of texts) expect(countInPieces(t, exact)).toBe(exact(t));
  });

  test('a long run without spaces or punctuation is sliced: within 1% of the exact count', () => {
    const zh = '我们的系统正在处理您的请求请稍候这是一个很长的没有标点的中文文本'.repeat(40);
    const sliced = countInPieces(zh, exact);
    const full = exact(zh);
    expect(sliced).toBeGreaterThanOrEqual(full);
    expect(sliced).toBeLessThanOrEqual(Math.ceil(full * 1.01));
  });

  test('counts content, tool-call names and arguments, and results, plus overhead', () => {
    const counter = createTokenCounter();
    const call: OpenAIChatMessage = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] };
    const bare: OpenAIChatMessage = { role: 'assistant', content: null, tool_calls: [] };
    const diff = counter.message(call, openaiChatLens) - counter.message(bare, openaiChatLens);
    expect(diff).toBeGreaterThanOrEqual(exact('get_weather') + exact('{"city":"Paris"}'));
    expect(counter.message({ role: 'user', content: 'hello there' }, openaiChatLens)).toBe(exact('hello there') + MESSAGE_OVERHEAD_TOKENS + 1);
    const parts: OpenAIChatMessage = { role: 'user', content: [{ type: 'text', text: 'hello ' }, { type: 'image_url', image_url: { url: 'x' } }, { type: 'text', text: 'there' }] };
    // The image part is billed by the tile rule; a URL whose size cannot be read counts as 1024x1024 (765 tokens).
    expect(counter.message(parts, openaiChatLens)).toBe(exact('hello there') + MESSAGE_OVERHEAD_TOKENS + 1 + 765);
  });

  test("a chat's repeated history is counted once: by position in its history cache, and by text for a re-parsed copy", () => {
    const counter = createTokenCounter();
    const cache = createHistoryCache();
    const history: OpenAIChatMessage[] = [
      { role: 'user', content: 'result text that is long enough to be cached '.repeat(5) },
      { role: 'assistant', content: 'short answer' },
    ];
    const plan = (messages: OpenAIChatMessage[]) => compressContext(messages, { counter, historyCache: cache, chatId: 'c' }).report.tokensBefore;
    const first = plan(history);
    const encoded = counter.stats().encoded;
    // The caller appends to its array and sends it again: the known messages are matched by position.
    history.push({ role: 'user', content: 'and one more question' });
    expect(cache.recall('c', history).shared).toBe(2);
    const second = plan(history);
    expect(counter.stats().encoded).toBe(encoded + 1);
    expect(second).toBe(first + counter.message(history[2], openaiChatLens));
    // A re-parsed copy shares no object, but equal content still matches by position: nothing is encoded.
    const copy = JSON.parse(JSON.stringify(history)) as OpenAIChatMessage[];
    expect(cache.recall('c', copy).shared).toBe(3);
    const before = counter.stats().encoded;
    expect(plan(copy)).toBe(second);
    expect(counter.stats().encoded).toBe(before);
    // Another chat shares nothing with this one.
    expect(cache.recall('other', copy).shared).toBe(0);
  });

  test('a pluggable text counter replaces tiktoken', () => {
    const counter = createTokenCounter({ countText: (t) => t.length });
    expect(counter.text('abcd')).toBe(4);
    expect(counter.message({ role: 'user', content: 'abcd' }, openaiChatLens)).toBe(4 + MESSAGE_OVERHEAD_TOKENS + 1);
  });

  test('encoding by model name, o200k_base when unknown', () => {
    expect(encodingForModel('gpt-4o-mini')).toBe('o200k_base');
    expect(encodingForModel('gpt-4')).toBe('cl100k_base');
    expect(encodingForModel('gpt-3.5-turbo')).toBe('cl100k_base');
    expect(encodingForModel('some-local-model')).toBe('o200k_base');
    expect(encodingForModel(undefined)).toBe('o200k_base');
  });
});

describe('the lens fast path for counting', () => {
  test('billedTextTokens agrees exactly with counting through the transcript', async () => {
    const fc = (await import('fast-check')).default;
    const { anyHistory } = await import('./helpers/arbitraries.js');
    const { propertyParams } = await import('./helpers/property-runs.js');
    const { billedTextTokens: _fast, ...slowLens } = openaiChatLens;
    const viaTranscript = createTokenCounter();
    const viaFastPath = createTokenCounter();
    const odd: OpenAIChatMessage[] = [
      { role: 'function', name: '', content: 'x' },
      { role: 'assistant', content: 'x', tool_calls: [null as never, { id: 'a', type: 'function', function: { name: 'f', arguments: { a: 1 } as never } }], function_call: { name: 'g', arguments: '{}' } },
      { role: 'user', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'bot', content: 'hello' },
    ];
    for (const m of odd) expect(viaFastPath.message(m, openaiChatLens)).toBe(viaTranscript.message(m, slowLens as typeof openaiChatLens));
    fc.assert(fc.property(anyHistory(), (messages) => {
      for (const m of messages) expect(viaFastPath.message(m, openaiChatLens)).toBe(viaTranscript.message(m, slowLens as typeof openaiChatLens));
    }), propertyParams());
  });
});
