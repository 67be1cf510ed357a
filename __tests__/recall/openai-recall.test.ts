import { describe, expect, test } from '@jest/globals';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { compressorOf, withCtxfold } from '../../src/adapters/openai/index.js';
import { validateMessages } from '../../src/formats/profiles.js';
import type { CompressorEvents } from '../../src/runtime/compressor.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import { chatStandInForFile } from './chat-stand-in.js';

const BUDGET = 2000;
const counter = createTokenCounter();

const bed = chatStandInForFile();
const { open } = bed;

/** A chat of `turns` user/assistant pairs (about 70 tokens each); message 2 holds a sentence found nowhere else. */
function history(turns: number): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = [{ role: 'system', content: 'You are a careful assistant.' }];
  for (let t = 0; t < turns; t++) {
    out.push({ role: 'user', content: `Question ${t} about shelf ${t % 7}. ${'Some filler words for the question. '.repeat(8)}` });
    out.push({ role: 'assistant', content: t === 0 ? 'Noted: the spare key hangs behind the blue clock, code QX-4471.' : `Answer ${t}. ${'Some filler words for the answer. '.repeat(8)}` });
  }
  return out;
}

const APP_TOOL = { type: 'function' as const, function: { name: 'lookup', description: 'Looks a thing up.', parameters: { type: 'object', properties: { q: { type: 'string' } } } } };

/** A wrapped client with recall on, whose chat "c" already has a summary covering its early messages. */
async function withSummary(rounds?: number) {
  const client = withCtxfold(new OpenAI({ apiKey: 'k', baseURL: bed.server.baseURL, maxRetries: 0 }), {
    maxContextTokens: BUDGET, keepLast: 4, recall: rounds === undefined ? true : { rounds }, counter,
  });
  const compressor = compressorOf(client)!;
  open.push(compressor);
  const reports: CompressorEvents['compressed']['report'][] = [];
  compressor.on('compressed', (e) => reports.push(e.report));
  const messages = history(24);
  await client.chat.completions.create({ model: 'm', messages, metadata: { chat_id: 'c' }, tools: [APP_TOOL] });
  await compressor.drain();
  return { client, compressor, messages, reports };
}

const toolNames = (body: Record<string, unknown>) => ((body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
const contents = (body: Record<string, unknown>) => (body.messages as { content?: unknown }[]).map((m) => (typeof m.content === 'string' ? m.content : ''));

describe('ctxfold/openai answers ctxfold_recall calls itself', () => {
  test('the model recalls a summarized message: the second request carries its original, the application gets the final answer only', async () => {
    const { client, messages, reports } = await withSummary();
    const before = bed.server.bodies.length;
    // #2 is messages[2], the first assistant answer (the head is the system message).
    bed.server.enqueue({ calls: [{ name: 'ctxfold_recall', arguments: { ids: ['#2'] } }] }, { text: 'The code is QX-4471.' });
    const asked = [...messages, { role: 'user', content: 'Where is the spare key again?' } as ChatCompletionMessageParam];
    const copy = structuredClone(asked);
    const response = await client.chat.completions.create({ model: 'm', messages: asked, metadata: { chat_id: 'c' }, tools: [APP_TOOL] });

    expect(response.choices[0].message).toEqual({ role: 'assistant', content: 'The code is QX-4471.', refusal: null });
    expect(asked).toEqual(copy); // the application's list is never changed
    const [first, second] = bed.server.bodies.slice(before);
    expect(bed.server.bodies.length - before).toBe(2);
    // The first view no longer holds the message: it was summarized away, and the summary says what can be recalled.
    expect(contents(first).some((c) => c.includes('spare key hangs'))).toBe(false);
    expect(contents(first).find((c) => c.startsWith('[Summary of'))).toMatch(/#1-#\d+.*ctxfold_recall/);
    expect(toolNames(first)).toEqual(['lookup', 'ctxfold_recall']);
    // The second request ends with the recall call and its answer, which holds the original text.
    const tail = (second.messages as Record<string, unknown>[]).slice(-2);
    expect(tail[0]).toMatchObject({ role: 'assistant', tool_calls: [{ id: 'call_2_0', function: { name: 'ctxfold_recall' } }] });
    expect(tail[1]).toMatchObject({ role: 'tool', tool_call_id: 'call_2_0' });
    expect(tail[1].content).toContain('Noted: the spare key hangs behind the blue clock, code QX-4471.');
    expect(tail[1].content).toContain('--- #2 (assistant) ---');
    // Both views are valid and within the budget.
    for (const body of [first, second]) expect(validateMessages(body.messages as unknown[], 'openai')).toEqual([]);
    for (const r of reports.slice(-2)) expect(r.tokensAfter).toBeLessThanOrEqual(BUDGET);
  });

  test('a search query finds the message by its identifier', async () => {
    const { client, messages } = await withSummary();
    const before = bed.server.bodies.length;
    bed.server.enqueue({ calls: [{ name: 'ctxfold_recall', arguments: { query: 'QX-4471' } }] }, { text: 'found it' });
    await client.chat.completions.create({ model: 'm', messages: [...messages, { role: 'user', content: 'The code?' }], metadata: { chat_id: 'c' } });
    const second = bed.server.bodies[before + 1];
    const last = (second.messages as { role: string; content: string }[]).at(-1)!;
    expect(last.role).toBe('tool');
    expect(last.content).toContain('spare key hangs behind the blue clock');
  });

  test('a response mixing recall with the application\'s calls is passed on with the recall calls removed', async () => {
    const { client, messages } = await withSummary();
    const before = bed.server.bodies.length;
    bed.server.enqueue({ calls: [{ name: 'ctxfold_recall', arguments: { ids: ['#2'] } }, { name: 'lookup', arguments: { q: 'x' } }] });
    const response = await client.chat.completions.create({ model: 'm', messages: [...messages, { role: 'user', content: 'Go.' }], metadata: { chat_id: 'c' }, tools: [APP_TOOL] });
    expect(bed.server.bodies.length - before).toBe(1);
    const calls = response.choices[0].message.tool_calls!;
    expect(calls.map((c) => (c as { function: { name: string } }).function.name)).toEqual(['lookup']);
    expect(response.choices[0].finish_reason).toBe('tool_calls');
  });

  test('rounds are bounded: past them a reply that only recalls is answered once more and the model asked with tool_choice none', async () => {
    const { client, messages } = await withSummary(2);
    const before = bed.server.bodies.length;
    const recall = { calls: [{ name: 'ctxfold_recall', arguments: { ids: ['#1'] } }] };
    bed.server.enqueue(recall, recall, { calls: [{ name: 'ctxfold_recall', arguments: { ids: ['#2'] } }] }, { text: 'The code is QX-4471.' });
    const response = await client.chat.completions.create({ model: 'm', messages: [...messages, { role: 'user', content: 'Go.' }], metadata: { chat_id: 'c' }, tools: [APP_TOOL], tool_choice: 'auto' });
    const sent = bed.server.bodies.slice(before);
    expect(sent).toHaveLength(4); // the first call, two answered rounds, the final call
    expect(sent.map((b) => b.tool_choice)).toEqual(['auto', 'auto', 'auto', 'none']);
    // The final call answers the recall call it follows (the original of #2 is in its view), tools still listed.
    expect(contents(sent[3]).join('\n')).toContain('QX-4471');
    expect(toolNames(sent[3])).toEqual(['lookup', 'ctxfold_recall']);
    expect(validateMessages(sent[3].messages as never[], 'openai')).toEqual([]);
    expect(response.choices[0].message).toEqual({ role: 'assistant', content: 'The code is QX-4471.', refusal: null });
  });

  test('a final reply that recalls anyway comes back without recall calls, ending with stop', async () => {
    const { client, messages } = await withSummary(1);
    const before = bed.server.bodies.length;
    const recall = { calls: [{ name: 'ctxfold_recall', arguments: { ids: ['#1'] } }] };
    bed.server.enqueue(recall, recall, recall);
    const response = await client.chat.completions.create({ model: 'm', messages: [...messages, { role: 'user', content: 'Go.' }], metadata: { chat_id: 'c' } });
    expect(bed.server.bodies.length - before).toBe(3); // the first call, one answered round, the final call
    expect(bed.server.bodies.at(-1)!.tool_choice).toBe('none');
    expect(response.choices[0].message.tool_calls).toBeUndefined();
    expect(response.choices[0].finish_reason).toBe('stop');
  });

  test('a final call the server refuses (a 400 for tool_choice none) falls back to the reply before it, without its recall calls', async () => {
    const { client, compressor, messages } = await withSummary(1);
    const samples: { billed: number }[] = [];
    compressor.on('calibration', (e) => samples.push(e));
    const before = bed.server.bodies.length;
    const recall = { calls: [{ name: 'ctxfold_recall', arguments: { ids: ['#1'] } }] };
    bed.server.enqueue(recall, recall, { fail: 400 });
    const response = await client.chat.completions.create({ model: 'm', messages: [...messages, { role: 'user', content: 'Go.' }], metadata: { chat_id: 'c' } });
    expect(bed.server.bodies.slice(before).map((b) => b.tool_choice)).toEqual([undefined, undefined, 'none']);
    expect(response.choices[0].message.tool_calls).toBeUndefined();
    expect(response.choices[0].finish_reason).toBe('stop');
    // Usage: the first two calls' (as the stand-in bills them), each once; the refused call billed nothing.
    const billed = bed.server.bodies.slice(before, before + 2).reduce((n, b) => n + Math.ceil(JSON.stringify(b).length / 4), 0);
    expect(response.usage!.prompt_tokens).toBe(billed);
    // The chat is calibrated on the reply shown: its own call's input tokens.
    expect(samples.map((e) => e.billed)).toEqual([Math.ceil(JSON.stringify(bed.server.bodies[before + 1]).length / 4)]);

    bed.server.enqueue(recall, recall, { fail: 400 });
    const streamed = await client.chat.completions.stream({ model: 'm', messages: [...messages, { role: 'user', content: 'Go.' }], metadata: { chat_id: 'c' } }).finalChatCompletion();
    expect(bed.server.bodies.length - before).toBe(6);
    expect(streamed.choices[0].message.tool_calls ?? []).toEqual([]);
    expect(streamed.choices[0].finish_reason).toBe('stop');
  });

  test('legacy functions get no recall tool and no recall note', async () => {
    const { client, messages } = await withSummary();
    const functions = [{ name: 'lookup', parameters: { type: 'object', properties: {} } }];
    await client.chat.completions.create({ model: 'm', messages: [...messages, { role: 'user', content: 'Go.' }], metadata: { chat_id: 'c' }, functions });
    const body = bed.server.bodies.at(-1)!;
    expect(body.tools).toBeUndefined();
    expect(contents(body).join('\n')).not.toContain('ctxfold_recall');
  });
});

describe('ctxfold/openai answers ctxfold_recall calls in streamed chat.completions', () => {
  const ask = (messages: ChatCompletionMessageParam[], text: string) => [...messages, { role: 'user', content: text } as ChatCompletionMessageParam];

  test('a recall call first: answered here, the application streams only the second answer', async () => {
    const { client, messages, reports } = await withSummary();
    const before = bed.server.bodies.length;
    bed.server.enqueue({ calls: [{ name: 'ctxfold_recall', arguments: { ids: ['#2'] } }] }, { text: 'The code is QX-4471.' });
    const stream = await client.chat.completions.create({ model: 'm', messages: ask(messages, 'Where is the spare key?'), metadata: { chat_id: 'c' }, tools: [APP_TOOL], stream: true, stream_options: { include_usage: true } });
    let text = '';
    const finishes: string[] = [];
    for await (const chunk of stream) {
      expect(chunk.choices[0]?.delta.tool_calls).toBeUndefined();
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.choices[0]?.finish_reason) finishes.push(chunk.choices[0].finish_reason);
    }
    expect(text).toBe('The code is QX-4471.');
    expect(finishes).toEqual(['stop']);
    const [first, second, ...more] = bed.server.bodies.slice(before);
    expect(more).toEqual([]);
    expect([first.stream, second.stream]).toEqual([true, true]);
    expect(toolNames(first)).toEqual(['lookup', 'ctxfold_recall']);
    const tail = (second.messages as Record<string, unknown>[]).slice(-2);
    expect(tail[0]).toMatchObject({ role: 'assistant', tool_calls: [{ function: { name: 'ctxfold_recall', arguments: '{"ids":["#2"]}' } }] });
    expect(tail[1]).toMatchObject({ role: 'tool' });
    expect(tail[1].content).toContain('Noted: the spare key hangs behind the blue clock, code QX-4471.');
    for (const body of [first, second]) expect(validateMessages(body.messages as unknown[], 'openai')).toEqual([]);
    for (const r of reports.slice(-2)) expect(r.tokensAfter).toBeLessThanOrEqual(BUDGET);
  });

  test('text, then a recall call: the next round continues the streamed message (the SDK\'s stream helper sees one message)', async () => {
    const { client, messages } = await withSummary();
    const before = bed.server.bodies.length;
    bed.server.enqueue({ say: 'Let me look. ', calls: [{ name: 'ctxfold_recall', arguments: { query: 'QX-4471' } }] }, { text: 'It is QX-4471.' });
    const final = await client.chat.completions.stream({ model: 'm', messages: ask(messages, 'The code?'), metadata: { chat_id: 'c' } }).finalChatCompletion();
    expect(final.choices[0].message.content).toBe('Let me look. It is QX-4471.');
    expect(final.choices[0].message.tool_calls ?? []).toEqual([]);
    expect(final.choices[0].finish_reason).toBe('stop');
    expect(bed.server.bodies.length - before).toBe(2);
    expect((bed.server.bodies[before + 1].messages as Record<string, unknown>[]).at(-2)).toMatchObject({ role: 'assistant', content: 'Let me look. ' });
    // One message, one completion: every chunk the application gets carries the first chunk's id.
    bed.server.enqueue({ say: 'Let me look. ', calls: [{ name: 'ctxfold_recall', arguments: { query: 'QX-4471' } }] }, { text: 'It is QX-4471.' });
    const stream = await client.chat.completions.create({ model: 'm', messages: ask(messages, 'Again?'), metadata: { chat_id: 'c' }, stream: true, stream_options: { include_usage: true } });
    const ids = new Set<string>();
    for await (const chunk of stream) ids.add(chunk.id);
    expect(ids.size).toBe(1);
  });

  test('recall mixed with the application\'s call: one request, the application gets its call alone, at index 0', async () => {
    const { client, messages } = await withSummary();
    const before = bed.server.bodies.length;
    bed.server.enqueue({ calls: [{ name: 'ctxfold_recall', arguments: { ids: ['#2'] } }, { name: 'lookup', arguments: { q: 'x' } }] });
    const final = await client.chat.completions.stream({ model: 'm', messages: ask(messages, 'Go.'), metadata: { chat_id: 'c' }, tools: [APP_TOOL] }).finalChatCompletion();
    expect(bed.server.bodies.length - before).toBe(1);
    const calls = final.choices[0].message.tool_calls ?? [];
    expect(calls.map((c) => (c as { function: { name: string; arguments: string } }).function)).toEqual([{ name: 'lookup', arguments: '{"q":"x"}' }]);
    expect(final.choices[0].finish_reason).toBe('tool_calls');
  });

  test('a text answer streams as it comes: the first delta reaches the application while the model is still writing', async () => {
    const { client, messages } = await withSummary();
    let release!: () => void;
    const pause = new Promise<void>((resolve) => { release = resolve; });
    bed.server.enqueue({ text: 'first half, second half', pause });
    const stream = await client.chat.completions.create({ model: 'm', messages: ask(messages, 'Hi.'), metadata: { chat_id: 'c' }, stream: true });
    const seen: string[] = [];
    for await (const chunk of stream) {
      const piece = chunk.choices[0]?.delta.content;
      if (!piece) continue;
      seen.push(piece);
      // The model holds the rest until the application has the first piece: a wrapper that buffered would hang here.
      if (seen.length === 1) release();
    }
    expect(seen.join('')).toBe('first half, second half');
    expect(seen.length).toBeGreaterThan(1);
  });

  test('a round that fails makes the iteration throw the SDK\'s error; rounds are bounded as on the non-streamed path', async () => {
    const { client, messages } = await withSummary(1);
    bed.server.enqueue({ calls: [{ name: 'ctxfold_recall', arguments: { ids: ['#2'] } }] }, { fail: 500 });
    const failing = await client.chat.completions.create({ model: 'm', messages: ask(messages, 'Go.'), metadata: { chat_id: 'c' }, stream: true });
    await expect((async () => { for await (const _ of failing) { /* drain */ } })()).rejects.toThrow(/500/);

    const before = bed.server.bodies.length;
    const recall = { calls: [{ name: 'ctxfold_recall', arguments: { ids: ['#1'] } }] };
    bed.server.enqueue(recall, recall, { text: 'Done.' });
    const final = await client.chat.completions.stream({ model: 'm', messages: ask(messages, 'Go.'), metadata: { chat_id: 'c' } }).finalChatCompletion();
    const sent = bed.server.bodies.slice(before);
    expect(sent.map((b) => b.tool_choice)).toEqual([undefined, undefined, 'none']); // the first call, one answered round, the final call
    expect(final.choices[0].message.tool_calls ?? []).toEqual([]);
    expect(final.choices[0].message.content).toBe('Done.');
    expect(final.choices[0].finish_reason).toBe('stop');

    bed.server.enqueue(recall, recall, recall);
    const stubborn = await client.chat.completions.stream({ model: 'm', messages: ask(messages, 'Go.'), metadata: { chat_id: 'c' } }).finalChatCompletion();
    expect(bed.server.bodies.length - before).toBe(6);
    expect(stubborn.choices[0].message.tool_calls ?? []).toEqual([]);
    expect(stubborn.choices[0].finish_reason).toBe('stop');
  });

  test('the last round\'s usage calibrates the chat once the stream has ended; breaking off aborts the stream and tells nothing', async () => {
    const { client, compressor, messages } = await withSummary();
    const samples: unknown[] = [];
    compressor.on('calibration', (e) => samples.push(e));
    bed.server.enqueue({ calls: [{ name: 'ctxfold_recall', arguments: { ids: ['#2'] } }] }, { text: 'The code is QX-4471.' });
    const whole = await client.chat.completions.create({ model: 'm', messages: ask(messages, 'The code?'), metadata: { chat_id: 'c' }, stream: true, stream_options: { include_usage: true } });
    for await (const _ of whole) { /* drain */ }
    expect(samples).toHaveLength(1);

    bed.server.enqueue({ text: 'one two three four' });
    const stream = await client.chat.completions.create({ model: 'm', messages: ask(messages, 'Hi.'), metadata: { chat_id: 'c' }, stream: true, stream_options: { include_usage: true } });
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) break;
    expect(stream.controller.signal.aborted).toBe(true);
    expect(samples).toHaveLength(1);
  });
});
