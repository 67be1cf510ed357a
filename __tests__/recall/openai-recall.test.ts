import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { compressorOf, withCtxfold } from '../../src/adapters/openai/index.js';
import { validateMessages } from '../../src/formats/profiles.js';
import type { Compressor, CompressorEvents } from '../../src/runtime/compressor.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import { startChatStandIn, type ChatStandIn } from './chat-stand-in.js';

const BUDGET = 2000;
const counter = createTokenCounter();

let server: ChatStandIn;
beforeAll(async () => {
  server = await startChatStandIn();
});
afterAll(async () => {
  await server.close();
});
const open: Compressor[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close(200)));
});

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
  const client = withCtxfold(new OpenAI({ apiKey: 'k', baseURL: server.baseURL, maxRetries: 0 }), {
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
    const before = server.bodies.length;
    // #2 is messages[2], the first assistant answer (the head is the system message).
    server.enqueue({ calls: [{ name: 'ctxfold_recall', arguments: { ids: ['#2'] } }] }, { text: 'The code is QX-4471.' });
    const asked = [...messages, { role: 'user', content: 'Where is the spare key again?' } as ChatCompletionMessageParam];
    const copy = structuredClone(asked);
    const response = await client.chat.completions.create({ model: 'm', messages: asked, metadata: { chat_id: 'c' }, tools: [APP_TOOL] });

    expect(response.choices[0].message).toEqual({ role: 'assistant', content: 'The code is QX-4471.', refusal: null });
    expect(asked).toEqual(copy); // the application's list is never changed
    const [first, second] = server.bodies.slice(before);
    expect(server.bodies.length - before).toBe(2);
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
    const before = server.bodies.length;
    server.enqueue({ calls: [{ name: 'ctxfold_recall', arguments: { query: 'QX-4471' } }] }, { text: 'found it' });
    await client.chat.completions.create({ model: 'm', messages: [...messages, { role: 'user', content: 'The code?' }], metadata: { chat_id: 'c' } });
    const second = server.bodies[before + 1];
    const last = (second.messages as { role: string; content: string }[]).at(-1)!;
    expect(last.role).toBe('tool');
    expect(last.content).toContain('spare key hangs behind the blue clock');
  });

  test('a response mixing recall with the application\'s calls is passed on with the recall calls removed', async () => {
    const { client, messages } = await withSummary();
    const before = server.bodies.length;
    server.enqueue({ calls: [{ name: 'ctxfold_recall', arguments: { ids: ['#2'] } }, { name: 'lookup', arguments: { q: 'x' } }] });
    const response = await client.chat.completions.create({ model: 'm', messages: [...messages, { role: 'user', content: 'Go.' }], metadata: { chat_id: 'c' }, tools: [APP_TOOL] });
    expect(server.bodies.length - before).toBe(1);
    const calls = response.choices[0].message.tool_calls!;
    expect(calls.map((c) => (c as { function: { name: string } }).function.name)).toEqual(['lookup']);
    expect(response.choices[0].finish_reason).toBe('tool_calls');
  });

  test('rounds are bounded: past them the response comes back without recall calls', async () => {
    const { client, messages } = await withSummary(2);
    const before = server.bodies.length;
    const recall = { calls: [{ name: 'ctxfold_recall', arguments: { ids: ['#1'] } }] };
    server.enqueue(recall, recall, recall);
    const response = await client.chat.completions.create({ model: 'm', messages: [...messages, { role: 'user', content: 'Go.' }], metadata: { chat_id: 'c' } });
    expect(server.bodies.length - before).toBe(3); // the first call and two answered rounds
    expect(response.choices[0].message.tool_calls).toBeUndefined();
    expect(response.choices[0].finish_reason).toBe('stop');
  });

  test('streamed calls get no recall tool and no recall note (recall is answered on non-streamed calls only)', async () => {
    const { client, messages } = await withSummary();
    const stream = await client.chat.completions.create({ model: 'm', messages: [...messages, { role: 'user', content: 'Go.' }], metadata: { chat_id: 'c' }, tools: [APP_TOOL], stream: true });
    for await (const _ of stream) { /* drain */ }
    const body = server.bodies.at(-1)!;
    expect(toolNames(body)).toEqual(['lookup']);
    expect(contents(body).join('\n')).not.toContain('ctxfold_recall');
  });
});
