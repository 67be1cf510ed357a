import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { compressContext, InputError, repairHistory, validateMessages } from '../src/index.js';
import { anyHistory } from './helpers/arbitraries.js';
import { propertyParams } from './helpers/property-runs.js';

/**
 * Detection by positive evidence: a format is picked only from features that belong to it. Until
 * a format's lens ships, its histories are refused with an error naming it, never read as OpenAI
 * Chat and "repaired" (which used to delete their tool results).
 */

/** Small, real-shaped histories of each other format (as their SDKs and APIs define them). */
const FOREIGN: Record<string, { format: RegExp; ambiguous?: boolean; messages: unknown[] }> = {
  'ai-sdk': { format: /Vercel AI SDK \(a "tool-call" part in content at messages\[1\]/, messages: [
    { role: 'user', content: 'What is the weather in Paris?' },
    { role: 'assistant', content: [{ type: 'text', text: 'Let me check.' }, { type: 'tool-call', toolCallId: 'call_1', toolName: 'weather', input: { city: 'Paris' } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'weather', output: { type: 'text', value: 'Sunny. '.repeat(800) } }] },
    { role: 'assistant', content: 'It is sunny.' },
  ] },
  anthropic: { format: /Anthropic Messages \(a "tool_use" block in content at messages\[1\]/, messages: [
    { role: 'user', content: 'Summarize the report.' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01', name: 'read_report', input: {} }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'word '.repeat(5000) }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
  ] },
  'qwen-agent': { format: /Qwen-Agent \(consecutive assistant messages with function_call/, ambiguous: true, messages: [
    { role: 'user', content: 'Compare the three tables.' },
    { role: 'assistant', content: '', function_call: { name: 'read_query', arguments: '{"query":"select * from a"}' } },
    { role: 'assistant', content: '', function_call: { name: 'read_query', arguments: '{"query":"select * from b"}' } },
    { role: 'assistant', content: '', function_call: { name: 'read_query', arguments: '{"query":"select * from c"}' } },
    { role: 'function', name: 'read_query', content: 'rows of a' },
    { role: 'function', name: 'read_query', content: 'rows of b' },
    { role: 'function', name: 'read_query', content: 'rows of c' },
    { role: 'assistant', content: 'Table b is the largest.' },
  ] },
  gemini: { format: /Gemini \(a functionCall part at messages\[1\]/, messages: [
    { role: 'user', parts: [{ text: 'Weather in Paris and Rome?' }] },
    { role: 'model', parts: [{ functionCall: { name: 'weather', args: { city: 'Paris' } } }, { functionCall: { name: 'weather', args: { city: 'Rome' } } }] },
    { role: 'user', parts: [{ functionResponse: { name: 'weather', response: { sky: 'sun' } } }, { functionResponse: { name: 'weather', response: { sky: 'rain' } } }] },
  ] },
  'openai-responses': { format: /OpenAI Responses \(an item of type "reasoning" at messages\[1\]/, messages: [
    { role: 'user', content: 'Look it up.' },
    { type: 'reasoning', id: 'rs_1', summary: [] },
    { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'lookup', arguments: '{}' },
    { type: 'function_call_output', call_id: 'call_1', output: 'found' },
  ] },
  hermes: { format: /Hermes \(<tool_call> text\) \(a <tool_call>\{\.\.\.\}<\/tool_call> block in assistant text at messages\[1\]/, messages: [
    { role: 'user', content: 'List the tables.' },
    { role: 'assistant', content: '<tool_call>\n{"name": "list_tables", "arguments": {}}\n</tool_call>' },
    { role: 'user', content: '<tool_response>\n["a", "b"]\n</tool_response>' },
    { role: 'assistant', content: 'There are two tables.' },
  ] },
};

describe('detection by positive evidence', () => {
  test.each(Object.entries(FOREIGN))('a %s history is named, refused, and left untouched', (_name, { format, ambiguous, messages }) => {
    const before = JSON.stringify(messages);
    let error: unknown;
    try {
      compressContext(messages, { maxContextTokens: 50 });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InputError);
    expect((error as Error).message).toMatch(format);
    if (ambiguous) {
      // Qwen-Agent's parallel calls are also OpenAI legacy calls left unanswered: both are named.
      expect((error as Error).message).toMatch(/^messages: the messages point to more than one format: .*OpenAI Chat Completions .*; pass format to say which/);
    } else {
      expect((error as Error).message).toMatch(/^messages: the messages are /);
      expect((error as Error).message).toMatch(/which ctxfold does not read yet \(supported: openai\); nothing was changed$/);
    }
    expect(() => repairHistory(messages)).toThrow(InputError);
    expect(() => validateMessages(messages)).toThrow(InputError);
    expect(JSON.stringify(messages)).toBe(before);
  });

  test('evidence of two formats at once is an error naming both', () => {
    const mixed = [
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'ok' },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'x' }] },
    ];
    expect(() => compressContext(mixed)).toThrow(/^messages: the messages point to more than one format: OpenAI Chat Completions \(.*\); Anthropic Messages \(.*\); pass format to say which/);
    // Saying which is enough: the caller's choice is read as such.
    expect(compressContext(mixed, { format: 'openai', repair: false }).messages).toHaveLength(3);
  });

  test('a history with no tool traffic has nothing to pair and is planned; a mention of <tool_call> in prose is not evidence', () => {
    const plain = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'What does <tool_call> mean in Hermes prompts?' }, { role: 'assistant', content: 'It wraps a call: <tool_call> ... </tool_call>.' }];
    expect(compressContext(plain).report.format).toBe('openai');
    expect(compressContext([{ role: 'user', content: [{ type: 'text', text: 'hi' }] }]).messages).toHaveLength(1);
  });

  test('OpenAI Chat histories, valid or broken, are detected as OpenAI Chat, or refused naming it among the candidates; never read as another format', () => {
    let refused = 0;
    fc.assert(fc.property(anyHistory(), (history) => {
      try {
        expect(compressContext(history).report.format).toBe('openai');
      } catch (error) {
        // Two legacy function_calls in a row (the first unanswered) are also Qwen-Agent's parallel calls.
        expect((error as Error).message).toMatch(/^messages: the messages point to more than one format: .*OpenAI Chat Completions \(/);
        expect((error as Error).message).toMatch(/Qwen-Agent \(consecutive assistant messages with function_call/);
        refused++;
      }
      expect(compressContext(history, { format: 'openai' }).report.format).toBe('openai');
    }), propertyParams());
    expect(refused).toBeGreaterThan(0);
  });

  test('a single legacy function_call is OpenAI Chat, consecutive ones are Qwen-Agent', () => {
    const legacy = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } },
      { role: 'function', name: 'f', content: 'r' },
    ];
    expect(compressContext(legacy).report.format).toBe('openai');
    expect(() => compressContext(FOREIGN['qwen-agent'].messages)).toThrow(/more than one format: .*Qwen-Agent/);
  });
});
