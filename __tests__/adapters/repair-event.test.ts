import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { compressorOf, withCtxfold } from '../../src/adapters/openai/index.js';
import type { CompressorEvents } from '../../src/runtime/compressor.js';
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';
import { validateMessages } from '../../src/formats/profiles.js';
import { startOpenAIApiServer, type OpenAIApiServer } from '../helpers/openai-api-server.js';

/** What an adapter repairs in a request's history is told through the compressor's `repair` event. */
let server: OpenAIApiServer;
beforeAll(async () => {
  server = await startOpenAIApiServer();
});
afterAll(async () => {
  await server.close();
});

/** A tool result no call made (call_ghost), and a call (call_2) whose result never came. */
const broken: ChatCompletionMessageParam[] = [
  { role: 'user', content: 'What is the weather in Oslo and in Bergen?' },
  { role: 'tool', tool_call_id: 'call_ghost', content: 'a result for no call' },
  { role: 'assistant', content: null, tool_calls: [
    { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
    { id: 'call_2', type: 'function', function: { name: 'weather', arguments: '{"city":"Bergen"}' } },
  ] },
  { role: 'tool', tool_call_id: 'call_1', content: 'Oslo: 4 C, rain' },
  { role: 'user', content: 'And tomorrow?' },
];

describe('the repair event', () => {
  test('withCtxfold: an orphan result removed and a missing one added are emitted with the chat id, and what went out is valid', async () => {
    const w = withCtxfold(new OpenAI({ apiKey: 'test-key', baseURL: server.baseURL, maxRetries: 0 }), { maxContextTokens: 8000, summarizer: null });
    const compressor = compressorOf(w)!;
    const repairs: CompressorEvents['repair'][] = [];
    const order: string[] = [];
    compressor.on('repair', (e) => { repairs.push(e); order.push('repair'); });
    compressor.on('compressed', () => order.push('compressed'));
    try {
      await w.chat.completions.create({ model: 'gpt-4o', messages: broken, metadata: { chat_id: 'weather-1' } });
      expect(repairs).toHaveLength(1);
      expect(repairs[0].chatId).toBe('weather-1');
      expect(repairs[0].actions).toEqual(expect.arrayContaining([
        expect.objectContaining({ action: 'removed-orphan', index: 1, id: 'call_ghost' }),
        expect.objectContaining({ action: 'added-result', id: 'call_2' }),
      ]));
      expect(order).toEqual(['repair', 'compressed']);
      const sent = server.requests.at(-1)!.body!.messages as OpenAIChatMessage[];
      expect(validateMessages(sent, 'openai')).toEqual([]);
      expect(JSON.stringify(sent)).not.toContain('call_ghost');

      // A history with nothing to repair emits none.
      await w.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hello' }], metadata: { chat_id: 'weather-2' } });
      expect(repairs).toHaveLength(1);
      expect(order).toEqual(['repair', 'compressed', 'compressed']);
    } finally {
      await compressor.close(0);
    }
  });
});
