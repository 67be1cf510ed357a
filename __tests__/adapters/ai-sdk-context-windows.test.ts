import { describe, expect, test } from '@jest/globals';
import { CONTEXT_WINDOWS, contextWindowOf, normalizeModelId } from '../../src/runtime/context-windows.js';

describe('contextWindowOf: the published window of a known model, undefined otherwise', () => {
  test.each([
    ['gpt-4o', 128_000],
    ['gpt-4o-2024-08-06', 128_000],
    ['openai/gpt-4o-mini', 128_000],
    ['gpt-4-0613', 8_192],
    ['gpt-4.1-2025-04-14', 1_047_576],
    ['o3-2025-04-16', 200_000],
    ['gpt-5-chat-latest', 128_000],
    ['gpt-5-mini', 400_000],
    ['claude-sonnet-4-20250514', 200_000],
    ['claude-3-5-sonnet-latest', 200_000],
    ['claude-3-5-sonnet-v2@20241022', 200_000],
    ['us.anthropic.claude-3-7-sonnet-20250219-v1:0', 200_000],
    ['anthropic/claude-opus-4-1', 200_000],
    ['models/gemini-2.5-pro', 1_048_576],
    ['gemini-1.5-pro-002', 2_097_152],
    ['GPT-4O', 128_000],
  ])('%s → %i', (id, window) => {
    expect(contextWindowOf(id)).toBe(window);
  });

  test.each(['my-local-llama', 'gpt-4-32k', 'gpt-4o-audio-preview', 'gpt-5.4', 'o1-mini', 'claude-opus-4-6', '', 'gpt'])('%j is unknown (never guessed)', (id) => {
    expect(contextWindowOf(id)).toBeUndefined();
  });

  test('normalizeModelId strips prefixes and date/version suffixes only', () => {
    expect(normalizeModelId('anthropic.claude-3-5-sonnet-20240620-v1:0')).toBe('claude-3-5-sonnet');
    expect(normalizeModelId('openai/gpt-4.1-nano')).toBe('gpt-4.1-nano');
    expect(normalizeModelId('claude-opus-4-1')).toBe('claude-opus-4-1');
  });

  test('every entry names its source page and the date it was checked; the table is frozen', () => {
    for (const [id, e] of Object.entries(CONTEXT_WINDOWS)) {
      expect({ id, ok: Number.isSafeInteger(e.tokens) && e.tokens > 0 && /^https:\/\//.test(e.source) && /^\d{4}-\d{2}-\d{2}$/.test(e.checked) }).toEqual({ id, ok: true });
      expect(normalizeModelId(id)).toBe(id);
    }
    expect(Object.isFrozen(CONTEXT_WINDOWS)).toBe(true);
  });
});
