import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { validateMessages } from '../../src/index.js';
import { fromOpenAIChat, resultValue, toOpenAIChat } from '../../src/formats/gemini/convert.js';
import type { GeminiContent } from '../../src/formats/gemini/types.js';
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';
import { FIXTURES } from '../fixtures/formats/gemini.js';
import { checkGemini } from '../helpers/gemini-checker.js';
import { validGeminiHistory } from '../helpers/gemini-arbitraries.js';
import { formatPropertyParams } from '../helpers/property-runs.js';

/**
 * OpenAI Chat <-> Gemini conversion: the mapping of each message kind, what `lost` reports, the
 * ids minted for id-less calls (paired as Gemini pairs them), and round trips.
 */

const tc = (id: string, name: string, args: string) => ({ id, type: 'function', function: { name, arguments: args } });

describe('fromOpenAIChat', () => {
  test('system first -> systemInstruction; tool calls -> functionCall parts with ids; consecutive tool messages -> ONE content', () => {
    const messages: OpenAIChatMessage[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in A and B?' },
      { role: 'assistant', content: null, tool_calls: [tc('c1', 'weather', '{"city":"A"}'), tc('c2', 'weather', '{"city":"B"}')] },
      { role: 'tool', tool_call_id: 'c1', name: 'weather', content: '{"sky":"sun"}' },
      { role: 'tool', tool_call_id: 'c2', name: 'weather', content: 'rain, 4 degrees' },
      { role: 'assistant', content: 'A is sunny, B is rainy.' },
    ];
    const out = fromOpenAIChat(messages);
    expect(out.lost).toEqual([]);
    expect(out.systemInstruction).toEqual({ parts: [{ text: 'Be brief.' }] });
    expect(out.messages).toEqual([
      { role: 'user', parts: [{ text: 'Weather in A and B?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'weather', args: { city: 'A' }, id: 'c1' } }, { functionCall: { name: 'weather', args: { city: 'B' }, id: 'c2' } }] },
      { role: 'user', parts: [
        { functionResponse: { name: 'weather', response: { result: { sky: 'sun' } }, id: 'c1' } },
        { functionResponse: { name: 'weather', response: { result: 'rain, 4 degrees' }, id: 'c2' } },
      ] },
      { role: 'model', parts: [{ text: 'A is sunny, B is rainy.' }] },
    ]);
    expect(validateMessages(out.messages, 'gemini')).toEqual([]);
    expect(toOpenAIChat(out.messages, out.systemInstruction)).toEqual({ messages, lost: [] });
  });

  test('what Gemini cannot carry is named in lost: a later system message, invalid arguments, a tool message without name, unknown fields', () => {
    const messages: OpenAIChatMessage[] = [
      { role: 'user', content: 'go', name: 'ann' },
      { role: 'assistant', content: 'ok', tool_calls: [tc('c1', 'f', '{not json'), tc('c2', 'g', '[1,2]'), tc('c3', 'h', '{ "a": 1 }')] },
      { role: 'tool', tool_call_id: 'c1', content: 'x' },
      { role: 'tool', tool_call_id: 'c2', name: 'other', content: 'y' },
      { role: 'tool', tool_call_id: 'c3', name: 'h', content: 'z' },
      { role: 'system', content: 'Now be verbose.' },
      { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'high' } }] },
    ];
    const out = fromOpenAIChat(messages);
    expect(out.systemInstruction).toBeUndefined();
    expect(out.lost).toEqual([
      'messages[0].name: dropped (no Gemini form)',
      'messages[1].tool_calls[0].function.arguments: arguments are not valid JSON; sent as {}',
      'messages[1].tool_calls[1].function.arguments: arguments are JSON but not an object (Gemini args is an object); sent as {}',
      'messages[1].tool_calls[2].function.arguments: arguments formatting (whitespace, escapes) not kept; they come back as compact JSON',
      'messages[2].name: missing; the name of the call it answers comes back',
      'messages[3].name: "other" replaced by the name of the call it answers, "g" (Gemini checks it)',
      'messages[5]: a system message after the first turn is sent as user text (Gemini keeps instructions in systemInstruction only)',
      'messages[6].content[1].image_url.detail: dropped (Gemini has no image detail setting)',
    ]);
    expect(out.messages[3]).toEqual({ role: 'user', parts: [{ text: 'Now be verbose.' }] });
    expect(out.messages[4]).toEqual({ role: 'user', parts: [{ text: 'look' }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }] });
    expect(out.messages[2].parts.map((p) => p.functionResponse!.name)).toEqual(['f', 'g', 'h']);
    expect(validateMessages(out.messages, 'gemini')).toEqual([]);
  });

  test('an empty text beside tool calls is left out (Gemini refuses empty text) and named in lost', () => {
    const out = fromOpenAIChat([{ role: 'user', content: 'go' }, { role: 'assistant', content: '', tool_calls: [tc('c1', 'f', '{}')] }, { role: 'tool', tool_call_id: 'c1', name: 'f', content: '' }]);
    expect(out.messages[1]).toEqual({ role: 'model', parts: [{ functionCall: { name: 'f', args: {}, id: 'c1' } }] });
    expect(out.messages[2]).toEqual({ role: 'user', parts: [{ functionResponse: { name: 'f', response: { result: '' }, id: 'c1' } }] });
    expect(out.lost).toEqual(['messages[1].content: empty text beside tool calls left out; it comes back as null']);
  });

  test('resultValue parses JSON only when it converts back to the same text', () => {
    expect(resultValue('{"a":1}')).toEqual({ a: 1 });
    expect(resultValue('{"a": 1}')).toBe('{"a": 1}');
    expect(resultValue('"quoted"')).toBe('"quoted"');
    expect(resultValue('12')).toBe(12);
    expect(resultValue('1e3')).toBe('1e3');
    expect(resultValue('plain text')).toBe('plain text');
    fc.assert(fc.property(fc.oneof(fc.string(), fc.json()), (text) => {
      const v = resultValue(text);
      expect(typeof v === 'string' ? v : JSON.stringify(v)).toBe(text);
    }), formatPropertyParams());
  });
});

describe('toOpenAIChat', () => {
  test('id-less calls get call_<contentIndex>_<k>, used in their responses, paired by name in order', () => {
    const contents: GeminiContent[] = [
      { role: 'user', parts: [{ text: 'Prices?' }] },
      { role: 'model', parts: [{ text: 'thinking', thought: true }, { functionCall: { name: 'price', args: { t: 'A' } }, thoughtSignature: 'c2ln' }, { functionCall: { name: 'rate', args: {} } }, { functionCall: { name: 'price', args: { t: 'B' } } }] },
      { role: 'user', parts: [
        { functionResponse: { name: 'rate', response: { result: 1.1 } } },
        { functionResponse: { name: 'price', response: { result: 'ten' } } },
        { functionResponse: { name: 'price', response: { value: 20 } } },
      ] },
      { role: 'model', parts: [{ text: 'A is ten, B is 20.' }] },
    ];
    const out = toOpenAIChat(contents);
    expect(out.messages).toEqual([
      { role: 'user', content: 'Prices?' },
      { role: 'assistant', content: null, tool_calls: [tc('call_1_0', 'price', '{"t":"A"}'), tc('call_1_1', 'rate', '{}'), tc('call_1_2', 'price', '{"t":"B"}')] },
      { role: 'tool', tool_call_id: 'call_1_1', name: 'rate', content: '1.1' },
      { role: 'tool', tool_call_id: 'call_1_0', name: 'price', content: 'ten' },
      { role: 'tool', tool_call_id: 'call_1_2', name: 'price', content: '{"value":20}' },
      { role: 'assistant', content: 'A is ten, B is 20.' },
    ]);
    expect(out.lost).toEqual(['contents[1].parts[0]: thought summary dropped (OpenAI Chat has no place for it)', 'contents[1].parts[1].thoughtSignature: dropped (OpenAI Chat has no place for it)']);
    expect(validateMessages(out.messages, 'openai')).toEqual([]);
  });

  test('the fixtures convert to valid OpenAI Chat, naming what is lost (thoughts, signatures, code execution)', () => {
    for (const f of FIXTURES) {
      const out = toOpenAIChat(f.messages as GeminiContent[]);
      expect({ name: f.name, v: validateMessages(out.messages, 'openai') }).toEqual({ name: f.name, v: [] });
      const hasExtras = JSON.stringify(f.messages).match(/thought|executableCode|codeExecutionResult/);
      expect(out.lost.length > 0).toBe(Boolean(hasExtras));
    }
  });

  test('valid Gemini histories convert to valid OpenAI Chat (minted ids pair), and back to valid Gemini', () => {
    fc.assert(fc.property(validGeminiHistory(), (contents) => {
      const out = toOpenAIChat(contents);
      expect(validateMessages(out.messages, 'openai')).toEqual([]);
      const again = fromOpenAIChat(out.messages);
      expect(validateMessages(again.messages, 'gemini')).toEqual([]);
      expect(checkGemini(again.messages)).toEqual([]);
    }), formatPropertyParams());
  });
});
