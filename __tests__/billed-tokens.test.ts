import { describe, expect, test } from '@jest/globals';
import { compressContext, createCompressor, createTokenCounter, InputError } from '../src/index.js';
import { openaiChatLens } from '../src/formats/openai-chat/lens.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { imageSize, tiledImageTokens } from '../src/formats/openai-chat/image-tokens.js';

const counter = createTokenCounter();

/** A PNG of `width` x `height` as far as its header goes, padded with `bytes` of filler (not a viewable image). */
function pngDataUrl(width: number, height: number, bytes: number): string {
  const b = new Uint8Array(bytes);
  b.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  new DataView(b.buffer).setUint32(16, width);
  new DataView(b.buffer).setUint32(20, height);
  return `data:image/png;base64,${Buffer.from(b).toString('base64')}`;
}

/** A JPEG header: SOI, an APP0 segment, then a start-of-frame segment with the size. */
function jpegBytes(width: number, height: number): Uint8Array {
  return new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 16, ...new Array(14).fill(0), 0xff, 0xc0, 0, 17, 8, height >> 8, height & 255, width >> 8, width & 255, 3, ...new Array(9).fill(0)]);
}

describe('what a provider bills is what ctxfold counts', () => {
  test('the published tile rule: 1024x1024 is 765 tokens, 2048x4096 is 1105, low detail 85', () => {
    expect(tiledImageTokens(1024, 1024)).toBe(765);
    expect(tiledImageTokens(2048, 4096)).toBe(1105);
    expect(tiledImageTokens(512, 512)).toBe(255);
  });

  test('image sizes are read from PNG and JPEG headers', () => {
    expect(imageSize(Buffer.from(pngDataUrl(640, 480, 64).split(',')[1], 'base64'))).toEqual({ width: 640, height: 480 });
    expect(imageSize(jpegBytes(1920, 1080))).toEqual({ width: 1920, height: 1080 });
  });

  test('a 100 KB inline image counts by its size, not as the 4 tokens its text part had', () => {
    const image: OpenAIChatMessage = { role: 'user', content: [{ type: 'text', text: 'What is in this picture?' }, { type: 'image_url', image_url: { url: pngDataUrl(2048, 4096, 100_000) } }] };
    const text: OpenAIChatMessage = { role: 'user', content: [{ type: 'text', text: 'What is in this picture?' }] };
    expect(counter.message(image, openaiChatLens) - counter.message(text, openaiChatLens)).toBe(1105);
    const low: OpenAIChatMessage = { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } }] };
    const remote: OpenAIChatMessage = { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] };
    expect(counter.message(remote, openaiChatLens) - counter.message(low, openaiChatLens)).toBe(765 - 85);
  });

  test('the reply reserve comes off the window; tools and the response format are counted', () => {
    const history = Array.from({ length: 20 }, (_, k) => ({ role: k % 2 ? 'assistant' : 'user', content: `message ${k} ${'word '.repeat(30)}` }));
    const plain = compressContext(history, { counter, maxContextTokens: 600, keepLast: 1 });
    const reserved = compressContext(history, { counter, maxContextTokens: 600, keepLast: 1, reserveOutputTokens: 300 });
    expect(plain.report.tokensAfter).toBeGreaterThan(300);
    expect(reserved.report.tokensAfter).toBeLessThanOrEqual(300);
    expect(reserved.report.maxContextTokens).toBe(600);
    expect(reserved.report.reservedOutputTokens).toBe(300);
    const tools = [{ type: 'function', function: { name: 'search_orders', description: 'Finds orders by customer email. '.repeat(10), parameters: { type: 'object', properties: { email: { type: 'string' } } } } }];
    const withTools = compressContext(history, { counter, tools, responseFormat: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' } } } });
    expect(withTools.report.requestExtraTokens).toBeGreaterThan(counter.text(JSON.stringify(tools)));
    expect(withTools.report.tokensBefore).toBe(compressContext(history, { counter }).report.tokensBefore + withTools.report.requestExtraTokens);
    expect(() => compressContext(history, { maxContextTokens: 100, reserveOutputTokens: 100 })).toThrow(InputError);
  });

  test('wrap takes the reserve from the request and counts its tools', async () => {
    const c = createCompressor({ maxContextTokens: 600, keepLast: 1, summarizer: null });
    const history = Array.from({ length: 20 }, (_, k) => ({ role: k % 2 ? 'assistant' : 'user', content: `message ${k} ${'word '.repeat(30)}` }));
    const reports: { tokensAfter: number; reservedOutputTokens: number }[] = [];
    c.on('compressed', (e) => reports.push(e.report));
    await c.wrap(async () => 'ok')({ chatId: 'a', messages: history, max_tokens: 300 } as never);
    expect(reports[0].reservedOutputTokens).toBe(300);
    expect(reports[0].tokensAfter).toBeLessThanOrEqual(300);
    await expect(c.wrap(async () => 'ok')({ chatId: 'a', messages: history, max_tokens: 900 } as never)).rejects.toThrow(/^request\.max_tokens: must be less than maxContextTokens \(600\)/);
    await c.close();
  });
});
