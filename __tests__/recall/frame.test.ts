import { describe, expect, test } from '@jest/globals';
import { recallNoteText, summaryMessageText } from '../../src/core/summary-frame.js';
import { recallToolDefinition, RECALL_TOOL_NAME } from '../../src/recall/tool-definition.js';
import { keepingRecallNote, recallNoteSuffix } from '../../src/recall/summary-note.js';
import { keepNewestLines } from '../../src/core/summary-fit.js';
import { createCompressor } from '../../src/runtime/compressor.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import { InputError } from '../../src/errors.js';
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';

const counter = createTokenCounter();

/** A plain chat: a system prompt, then `turns` user/assistant pairs of about 60 tokens each. */
function chat(turns: number): OpenAIChatMessage[] {
  const out: OpenAIChatMessage[] = [{ role: 'system', content: 'You are a careful assistant.' }];
  for (let t = 0; t < turns; t++) {
    out.push({ role: 'user', content: `Question ${t}: how should item ${t} be arranged on shelf ${t % 7}? ${'Some detail words follow here. '.repeat(8)}` });
    out.push({ role: 'assistant', content: `Answer ${t}: put item ${t} at the left of shelf ${t % 7}. ${'More explanation words here. '.repeat(8)}` });
  }
  return out;
}

const summaryText = (view: readonly OpenAIChatMessage[]) => view.map((m) => (typeof m.content === 'string' ? m.content : '')).find((c) => c.startsWith('[Summary of')) ?? '';

describe('the recall note and the tool definition', () => {
  test('the note names the range of recallable numbers and the tool; it is a pure function of its arguments', () => {
    const note = recallNoteText(RECALL_TOOL_NAME, 37);
    expect(note).toContain('#1-#37');
    expect(note).toContain('ctxfold_recall');
    expect(recallNoteText(RECALL_TOOL_NAME, 37)).toBe(note);
    // The frame itself is unchanged: the note rides in the summary's text.
    expect(summaryMessageText('s', 3)).toBe('[Summary of 3 earlier messages of this conversation, which are not repeated here]\ns');
  });

  test('definitions in each format\'s shape, with the same arguments schema', () => {
    const chatTool = recallToolDefinition('openai') as { type: string; function: { name: string; parameters: unknown } };
    const responsesTool = recallToolDefinition('openai-responses') as { type: string; name: string; parameters: unknown };
    const anthropicTool = recallToolDefinition('anthropic') as { name: string; input_schema: unknown };
    expect(chatTool.type).toBe('function');
    expect(chatTool.function.name).toBe('ctxfold_recall');
    expect(responsesTool).toMatchObject({ type: 'function', name: 'ctxfold_recall' });
    expect(anthropicTool.name).toBe('ctxfold_recall');
    expect(chatTool.function.parameters).toEqual(responsesTool.parameters);
    expect(anthropicTool.input_schema).toEqual(chatTool.function.parameters);
    // AI SDK provider tools (LanguageModelV3FunctionTool), what a middleware sees in params.tools.
    const aiSdkTool = recallToolDefinition('ai-sdk') as { type: string; name: string; inputSchema: unknown };
    expect(aiSdkTool).toMatchObject({ type: 'function', name: 'ctxfold_recall' });
    expect(aiSdkTool.inputSchema).toEqual(chatTool.function.parameters);
    expect(JSON.stringify(recallToolDefinition('openai'))).toBe(JSON.stringify(chatTool));
    expect(() => recallToolDefinition('gemini' as never)).toThrow(InputError);
    expect(() => recallToolDefinition('gemini' as never)).toThrow(/format: must be one of openai, openai-responses, anthropic, ai-sdk/);
  });

  test('a shortened summary keeps its note whole at the end', () => {
    const body = Array.from({ length: 40 }, (_, i) => `line ${i} with a few words of summary`).join('\n');
    const text = body + recallNoteSuffix(12);
    const shorten = keepingRecallNote((t, max) => keepNewestLines(t, max, counter.text), counter.text);
    const out = shorten(text, 120);
    expect(out.endsWith(recallNoteSuffix(12))).toBe(true);
    expect(counter.text(out)).toBeLessThanOrEqual(120);
    expect(out.length).toBeLessThan(text.length);
    expect(shorten('no note here\nsecond line', 100)).toBe('no note here\nsecond line');
  });

  test('where nothing of the summary fits beside its note, the note stands alone (absent only when it alone does not fit)', () => {
    const body = Array.from({ length: 40 }, (_, i) => `line ${i} with a few words of summary`).join('\n');
    const note = recallNoteSuffix(12).slice(1);
    const shorten = keepingRecallNote((t, max) => keepNewestLines(t, max, counter.text), counter.text);
    expect(shorten(body + recallNoteSuffix(12), counter.text(note) + 2)).toBe(note);
    expect(shorten(body + recallNoteSuffix(12), counter.text(note) - 1)).toBe('');
  });
});

describe('the compressor names recallable messages in the summary', () => {
  test('after a fold the summary message carries #1-#n (n = the covered messages), byte-identical while the summary stays', async () => {
    const c = createCompressor({ maxContextTokens: 1500, keepLast: 4, recall: true, counter });
    const history = chat(20);
    const first = await c.compress('a', history);
    c.afterResponse('a', history, first.report);
    await c.drain();
    const second = await c.compress('a', history);
    const n = second.report.summary.coveredMessages;
    expect(n).toBeGreaterThan(0);
    const text = summaryText(second.messages);
    expect(text).toContain(`#1-#${n}`);
    const grown = [...history, { role: 'user', content: 'One more question.' } as OpenAIChatMessage];
    const third = await c.compress('a', grown);
    expect(summaryText(third.messages)).toBe(text);
    // Off for one request: no note and no tool.
    const off = await c.compress('a', history, { recall: false });
    expect(summaryText(off.messages)).not.toContain('ctxfold_recall');
    expect(off.tools).toBeUndefined();
    await c.close();
  });

  test('without recall the summary has no note and compress adds no tool', async () => {
    const c = createCompressor({ maxContextTokens: 1500, keepLast: 4, counter });
    const history = chat(20);
    c.afterResponse('a', history, (await c.compress('a', history)).report);
    await c.drain();
    const view = await c.compress('a', history);
    expect(view.report.summary.applied).toBe(true);
    expect(summaryText(view.messages)).not.toContain('Recall');
    expect(view.tools).toBeUndefined();
    expect(c.recall).toBeUndefined();
    await c.close();
  });
});
