/**
 * Does the 'ai-sdk' lens read the provider-level prompt a middleware receives
 * (`LanguageModelV3Prompt` from ai 6, `LanguageModelV4Prompt` from ai 7) correctly? The passing
 * tests pin what it reads right; each `test.failing` pins a gap of the lens (src/formats/ai-sdk/),
 * which this adapter must not edit: its title says the change the lens needs. When the lens is
 * changed, the failing test starts passing and jest reports it: turn it into a plain test.
 */
import { describe, expect, test } from '@jest/globals';
import { compressContext, validateMessages } from '../../src/index.js';
import { aiSdkLens } from '../../src/formats/ai-sdk/lens.js';
import type { AiSdkMessage } from '../../src/formats/ai-sdk/types.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import { providerPromptProblems } from '../helpers/ai-sdk-provider-prompt.js';

const counter = createTokenCounter();
const tokens = (m: AiSdkMessage) => counter.message(m, aiSdkLens);
const text = (t: string) => ({ type: 'text', text: t });

/** The first bytes of a PNG of `width` x `height` (enough for its size to be read). */
function pngHeader(width: number, height: number): Uint8Array {
  const b = new Uint8Array(33);
  b.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  new DataView(b.buffer).setUint32(16, width);
  new DataView(b.buffer).setUint32(20, height);
  return b;
}

describe('what the lens reads right in a provider-level prompt', () => {
  test('a tool-call part\'s `input` (an object at the provider level) is its arguments, as JSON text', () => {
    const m: AiSdkMessage = { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'weather', input: { city: 'Paris', days: 2 } }] };
    expect(aiSdkLens.read(m).calls).toEqual([{ id: 'c1', name: 'weather', arguments: '{"city":"Paris","days":2}' }]);
  });

  test.each([
    [{ type: 'text', value: 'Sunny' }, 'Sunny'],
    [{ type: 'json', value: { t: 21 } }, '{"t":21}'],
    [{ type: 'error-text', value: 'timeout' }, 'timeout'],
    [{ type: 'error-json', value: { code: 504 } }, '{"code":504}'],
    [{ type: 'execution-denied', reason: 'user said no' }, 'user said no'],
    [{ type: 'content', value: [text('a'), { type: 'image-data', data: 'AAAA', mediaType: 'image/png' }, text('b')] }, 'ab'],
  ])('a tool-result part\'s `output` %j reads as %j', (output, expected) => {
    const m = { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'weather', output }] } as AiSdkMessage;
    expect(aiSdkLens.read(m).results).toEqual([{ id: 'c1', name: 'weather', idHint: undefined, content: expected }]);
  });

  test('reasoning parts count as the assistant\'s text; providerOptions (a signature) stay on the caller\'s object', () => {
    const reasoning = { type: 'reasoning', text: 'Let me think.', providerOptions: { anthropic: { signature: 'sig-1' } } };
    const m = { role: 'assistant', content: [reasoning, text('Done.')], providerOptions: { openai: { itemId: 'i1' } } } as AiSdkMessage;
    expect(aiSdkLens.read(m).text).toBe('Let me think.Done.');
    const history = [{ role: 'system', content: 's' }, { role: 'user', content: [text('q')] }, m, { role: 'user', content: [text('more')] }] as AiSdkMessage[];
    const { messages } = compressContext(history, { format: 'ai-sdk', maxContextTokens: 10_000 });
    expect(messages[2]).toBe(m);
  });

  test('system messages in the prompt are read as system messages (pinned, never summarized)', () => {
    expect(aiSdkLens.read({ role: 'system', content: 'Be brief.' }).kind).toBe('system');
  });

  test('a provider-executed call answered in the same assistant message is read in place (nothing to pair)', () => {
    const history = [
      { role: 'user', content: [text('search the web')] },
      { role: 'assistant', content: [
        { type: 'tool-call', toolCallId: 'ws1', toolName: 'web_search', input: { q: 'x' }, providerExecuted: true },
        { type: 'tool-result', toolCallId: 'ws1', toolName: 'web_search', output: { type: 'json', value: [{ url: 'https://e.example' }] } },
        text('Found it.'),
      ] },
    ] as AiSdkMessage[];
    expect(validateMessages(history, 'ai-sdk')).toEqual([]);
    expect(aiSdkLens.read(history[1]).inPlace).toHaveLength(1);
  });

  test('V3 file parts: an image is billed by its size, from bytes or base64 alike', () => {
    const bytes = pngHeader(512, 512);
    const asBytes = tokens({ role: 'user', content: [{ type: 'file', mediaType: 'image/png', data: bytes }] } as AiSdkMessage);
    const asBase64 = tokens({ role: 'user', content: [{ type: 'file', mediaType: 'image/png', data: Buffer.from(bytes).toString('base64') }] } as AiSdkMessage);
    const empty = tokens({ role: 'user', content: [] });
    expect(asBytes - empty).toBe(255); // 512x512: one tile (170) + base (85)
    expect(asBase64).toBe(asBytes);
  });
});

describe('gaps of the lens for provider-level prompts (each title names the change needed in src/formats/ai-sdk/)', () => {
  /**
   * At the provider level the SDK drops every `tool-approval-request` part but keeps the
   * `tool-approval-response` of a provider-executed tool (ai 6 and ai 7 `convertToLanguageModelPrompt`:
   * "Only include tool-approval-response for provider-executed tools"). The lens reads that response as a
   * result keyed by its approvalId, finds no call for it, and repair removes it: the provider then
   * never learns the user's answer (an MCP approval flow breaks).
   */
  test.failing('lens.ts: a tool-approval-response whose approvalId no tool-approval-request in the history names is a provider approval, kept with the assistant message before it, never an orphan to remove', () => {
    const prompt = [
      { role: 'system', content: 's' },
      { role: 'user', content: [text('delete the old branch')] },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'mcp1', toolName: 'git_delete', input: { branch: 'old' }, providerExecuted: true }] },
      { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'ap1', approved: true }] },
    ] as AiSdkMessage[];
    expect(validateMessages(prompt, 'ai-sdk')).toEqual([]);
    const { messages, report } = compressContext(prompt, { format: 'ai-sdk', maxContextTokens: 10_000 });
    expect(report.repaired).toEqual([]);
    expect(messages).toEqual(prompt);
  });

  /**
   * A provider-level user message holds a list of parts (`LanguageModelV3Message`); the summary
   * message the lens writes has string content, which providers iterate as parts. The adapter
   * rewrites it (`asProviderPrompt`) until the lens writes `[{ type: 'text', text }]` itself (valid
   * in ModelMessage lists too).
   */
  test('lens.ts summaryMessage: writes content as [{ type: "text", text }] for user and assistant roles (a string is not a provider-level user message)', () => {
    const prompt = [{ role: 'system', content: 's' }] as AiSdkMessage[];
    for (let i = 0; i < 30; i++) prompt.push({ role: 'user', content: [text(`question ${i} `.repeat(30))] }, { role: 'assistant', content: [text(`answer ${i} `.repeat(30))] });
    const first = compressContext(prompt, { format: 'ai-sdk', maxContextTokens: 2000, compressionThresholdTokens: 500 });
    expect(first.report.summarize).toBeDefined();
    const { messages, report } = compressContext(prompt, { format: 'ai-sdk', maxContextTokens: 2000, summary: { text: 'Earlier questions were answered.', coveredIds: [...first.report.summarize!.ids] } });
    expect(report.summary.applied).toBe(true);
    expect(providerPromptProblems(messages)).toEqual([]);
  });

  /** V4 (ai 7) file data is a tagged union: `{ type: 'data', data }`, `{ type: 'url', url }`, `{ type: 'reference' }`, `{ type: 'text', text }`. */
  test('media.ts: a V4 file part\'s tagged `data` ({ type: "data", data } / { type: "url", url }) is read for the image size as V3 `data` is', () => {
    const bytes = pngHeader(512, 512);
    const v3 = tokens({ role: 'user', content: [{ type: 'file', mediaType: 'image/png', data: bytes }] } as AiSdkMessage);
    const v4 = tokens({ role: 'user', content: [{ type: 'file', mediaType: 'image/png', data: { type: 'data', data: bytes } }] } as AiSdkMessage);
    expect(v4).toBe(v3);
  });

  /** V4 `mediaType` may be the top-level segment alone (`image`), and `image/*` is normalized to it. */
  test('media.ts: a V4 file part with mediaType "image" (top-level segment only) is billed as an image', () => {
    const empty = tokens({ role: 'user', content: [] });
    const image = tokens({ role: 'user', content: [{ type: 'file', mediaType: 'image', data: { type: 'url', url: new URL('https://img.example/a.png') } }] } as AiSdkMessage);
    expect(image - empty).toBeGreaterThan(0);
  });

  /** V4 tool-result `content` outputs carry images as `{ type: 'file', mediaType: 'image/png', data: { type: 'data', data } }` (V3: `image-data` / `file-data`). */
  test('media.ts: an image `file` item of a V4 tool-result content output is billed as V3 `image-data` is', () => {
    const b64 = Buffer.from(pngHeader(512, 512)).toString('base64');
    const part = (item: unknown) => ({ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c', toolName: 'shot', output: { type: 'content', value: [item] } }] } as AiSdkMessage);
    const v3 = tokens(part({ type: 'image-data', data: b64, mediaType: 'image/png' }));
    const v4 = tokens(part({ type: 'file', mediaType: 'image/png', data: { type: 'data', data: b64 } }));
    expect(v4).toBe(v3);
  });
});
