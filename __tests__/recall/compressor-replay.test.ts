import { describe, expect, test } from '@jest/globals';
import { generateConversation } from '../../bench/fixtures/conversation.js';
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';
import { validateMessages } from '../../src/formats/profiles.js';
import { createCompressor } from '../../src/runtime/compressor.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import { InputError } from '../../src/errors.js';

const counter = createTokenCounter();
const BUDGET = 8000;
const appTool = { type: 'function', function: { name: 'lookup', description: 'Looks a thing up.', parameters: { type: 'object', properties: { q: { type: 'string' } } } } };

const toolNames = (tools: readonly unknown[] | undefined) => (tools ?? []).map((t) => (t as { function: { name: string } }).function.name);

describe('a compressor with recall on, replayed turn by turn', () => {
  test('every view is within budget and valid with the recall tool counted; each summary\'s messages can be recalled', async () => {
    const messages = generateConversation({ messages: 400, seed: 11 });
    const store = new MemoryStore();
    const c = createCompressor({ maxContextTokens: BUDGET, keepLast: 6, recall: true, store, counter });
    const off = createCompressor({ maxContextTokens: BUDGET, keepLast: 6, counter });
    let summaries = 0;
    c.on('summary:done', () => summaries++);
    let views = 0;
    let overViews = 0;
    for (let k = 2; k <= messages.length; k++) {
      if (messages[k - 1].role !== 'user' && k !== messages.length) continue;
      const history = messages.slice(0, k);
      const request = { tools: [appTool], max_tokens: 300 };
      const result = await c.compress('replay', history, request);
      const plain = await off.compress('replay', history, request);
      views++;
      // Within budget, except where even the smallest valid view (head + the last user turn with
      // its bulky results) is over it: then it is so without recall too, and reported.
      const within = result.report.tokensAfter + result.report.reservedOutputTokens <= BUDGET;
      if (!within) overViews++;
      expect({ k, within: within || (result.report.overBudget && plain.report.overBudget) }).toEqual({ k, within: true });
      expect(validateMessages(result.messages, 'openai')).toEqual([]);
      expect(toolNames(result.tools)).toEqual(['lookup', 'ctxfold_recall']);
      // The recall tool is paid for in the budget: more request tokens than without it.
      expect(result.report.requestExtraTokens).toBeGreaterThan(plain.report.requestExtraTokens);
      c.afterResponse('replay', history, result.report);
      off.afterResponse('replay', history, plain.report);
      await Promise.all([c.drain(), off.drain()]);
    }
    expect(summaries).toBeGreaterThan(3);
    expect(overViews).toBeLessThan(views / 10);
    const state = (await store.get('replay'))!;
    const covered = state.coveredIds;
    // Every covered message's original was kept, and #k is the k-th of them.
    const kept = await store.getOriginals('replay', covered);
    expect(kept.map((r) => r.id)).toEqual(covered);
    const k = Math.ceil(covered.length / 2);
    const answer = await c.recall!.answer('replay', { ids: [`#${k}`] });
    const original = messages[kept[k - 1].index];
    expect(kept[k - 1].raw).toBe(JSON.stringify(original));
    const text = typeof original.content === 'string' ? original.content : '';
    if (text !== '') expect(answer.text).toContain(text.slice(0, 40));
    expect(counter.text(answer.text)).toBeLessThanOrEqual(c.recall!.maxTokens);
    console.log(`recall replay: ${views} views (${overViews} over budget with and without recall: the smallest valid view), ${summaries} summaries, ${covered.length} messages recallable, answer ${counter.text(answer.text)} of ${c.recall!.maxTokens} tokens`);
    await c.close();
    await off.close();
  });

  test('a tool result the view cleared to fit the budget names its id, and recall reads its original back', async () => {
    const store = new MemoryStore();
    const c = createCompressor({ maxContextTokens: 1300, keepLast: 6, toolOutputTrim: { minChars: 200 }, recall: true, store, counter });
    const off = createCompressor({ maxContextTokens: 1300, keepLast: 6, toolOutputTrim: { minChars: 200 }, counter });
    // One user turn whose tool exchanges alone are over the budget: only clearing its older results fits it.
    const bulky = (k: number) => `record ${k}: ` + Array.from({ length: 60 }, (_, j) => `field${j}=value-${k}-${j}`).join(', ');
    const history: OpenAIChatMessage[] = [{ role: 'system', content: 'You look things up.' }, { role: 'user', content: 'Compare the three records.' }];
    for (let k = 1; k <= 3; k++) {
      history.push({ role: 'assistant', content: null, tool_calls: [{ id: `call_${k}`, type: 'function', function: { name: 'lookup', arguments: `{"q":"${k}"}` } }] });
      history.push({ role: 'tool', tool_call_id: `call_${k}`, content: bulky(k) });
    }
    const result = await c.compress('cleared', history, { tools: [appTool] });
    expect(result.report.overBudget).toBe(false);
    expect(validateMessages(result.messages, 'openai')).toEqual([]);
    expect(result.report.collapsed.map((x) => x.index)).toEqual([3]);
    const placeholder = result.messages.find((m) => m.role === 'tool' && typeof m.content === 'string' && m.content.startsWith('[tool result cleared'))!;
    const id = result.report.collapsed[0].id;
    expect(placeholder.content).toContain(`ctxfold_recall with ids [${JSON.stringify(id)}] reads it again`);
    const answer = await c.recall!.answer('cleared', { ids: [id] });
    expect(answer.isError).toBe(false);
    expect(answer.text).toContain(bulky(1).slice(0, 200));
    // It is found by a query too.
    expect((await c.recall!.answer('cleared', { query: 'value-1-7' })).text).toContain('record 1');
    // The next request clears the same result: it is not written to the store again.
    let writes = 0;
    const put = store.putOriginals.bind(store);
    store.putOriginals = async (chat, records) => { writes += records.length; return put(chat, records); };
    const again = await c.compress('cleared', [...history, { role: 'assistant', content: 'Record 3 differs.' }, { role: 'user', content: 'Thanks.' }], { tools: [appTool] });
    expect(again.report.collapsed.map((x) => x.id)).toContain(id);
    expect(writes).toBe(again.report.collapsed.filter((x) => x.id !== id).length);
    // Without recall the placeholder names no tool, and nothing is kept.
    const plain = await off.compress('cleared', history, { tools: [appTool] });
    expect(plain.messages.some((m) => m.role === 'tool' && m.content === '[tool result cleared to save context: ' + bulky(1).length + ' characters omitted]')).toBe(true);
    await c.close();
    await off.close();
  });

  test('the answer bound defaults to 2000 tokens, at most an eighth of the window; options are checked', async () => {
    const small = createCompressor({ maxContextTokens: 4000, recall: true });
    expect(small.recall).toEqual({ maxTokens: 500, rounds: 3, answer: expect.any(Function) });
    const large = createCompressor({ maxContextTokens: 128_000, recall: { rounds: 1 } });
    expect(large.recall?.maxTokens).toBe(2000);
    expect(large.recall?.rounds).toBe(1);
    await small.close();
    await large.close();
    expect(() => createCompressor({ recall: 'yes' as never })).toThrow(/options\.recall: must be true, false or \{ maxTokens, rounds \}/);
    expect(() => createCompressor({ recall: { maxTokens: 0 } })).toThrow(/options\.recall\.maxTokens/);
    const bare = { get: async () => undefined, commit: async () => true, delete: async () => {}, close: async () => {} };
    expect(() => createCompressor({ recall: true, store: bare })).toThrow(InputError);
    expect(() => createCompressor({ recall: true, store: bare })).toThrow(/options\.recall: needs a store that keeps originals/);
  });

  test('a store that fails to keep originals is a warning; the summary still lands', async () => {
    const store = new MemoryStore();
    store.putOriginals = async () => { throw new Error('no room'); };
    const c = createCompressor({ maxContextTokens: 3000, keepLast: 4, recall: true, store, counter });
    const warnings: string[] = [];
    c.on('warning', (w) => warnings.push(w.code));
    const history = generateConversation({ messages: 120, seed: 5 }) as OpenAIChatMessage[];
    c.afterResponse('w', history, (await c.compress('w', history)).report);
    await c.drain();
    expect(await store.get('w')).toBeDefined();
    expect(warnings).toContain('recall-save-failed');
    await c.close();
  });
});
