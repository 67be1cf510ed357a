import { describe, expect, test } from '@jest/globals';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { compressorOf, withCtxfold } from '../../src/adapters/openai/index.js';
import type { CompressorEvents } from '../../src/runtime/compressor.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import { chatStandInForFile, type StandInReply } from './chat-stand-in.js';

/**
 * The usage an application is shown after ctxfold/openai answered recall calls is that of every
 * call made for its request, added up (it pays for all of them), while the chat is calibrated
 * on the last call's own input tokens (the view that call sent). The stand-in bills about a
 * token per four characters of each request body and 5 output tokens per answer, so the
 * expected figures are computed from the bodies it received.
 */

const BUDGET = 2000;
const counter = createTokenCounter();

const bed = chatStandInForFile();
const { open } = bed;

const filler = (what: string) => `${what}. ${'Some filler words for it. '.repeat(8)}`;
/** `turns` user/assistant pairs after a system message (about 70 tokens each). */
function pairs(turns: number): { role: 'system' | 'user' | 'assistant'; content: string }[] {
  const out: { role: 'system' | 'user' | 'assistant'; content: string }[] = [{ role: 'system', content: 'You are a careful assistant.' }];
  for (let t = 0; t < turns; t++) out.push({ role: 'user', content: filler(`Question ${t}`) }, { role: 'assistant', content: t === 0 ? 'Noted: code QX-4471.' : filler(`Answer ${t}`) });
  return out;
}

/** A wrapped client with recall on whose chat already has a summary (so recall has something to answer). */
async function wrapped() {
  const client = withCtxfold(new OpenAI({ apiKey: 'k', baseURL: bed.server.baseURL, maxRetries: 0 }), { maxContextTokens: BUDGET, keepLast: 4, recall: true, counter });
  const compressor = compressorOf(client)!;
  open.push(compressor);
  const samples: CompressorEvents['calibration'][] = [];
  compressor.on('calibration', (e) => samples.push(e));
  return { client, compressor, samples };
}

const billedFor = (body: Record<string, unknown>) => Math.ceil(JSON.stringify(body).length / 4);
const RECALL: StandInReply = { calls: [{ name: 'ctxfold_recall', arguments: { ids: ['#2'] } }] };
const ANSWER: StandInReply = { text: 'The code is QX-4471.' };

describe('ctxfold/openai: usage after answered recall rounds', () => {
  test('chat.completions, not streamed: usage adds up every call; calibration reads the last call alone', async () => {
    const { client, compressor, samples } = await wrapped();
    const messages = pairs(24) as ChatCompletionMessageParam[];
    await client.chat.completions.create({ model: 'm', messages, metadata: { chat_id: 'u1' } });
    await compressor.drain();
    const before = bed.server.bodies.length;
    const seen = samples.length;
    bed.server.enqueue(RECALL, ANSWER);
    const response = await client.chat.completions.create({ model: 'm', messages: [...messages, { role: 'user', content: 'The code?' }], metadata: { chat_id: 'u1' } });
    const sent = bed.server.bodies.slice(before);
    expect(sent).toHaveLength(2);
    expect(response.choices[0].message.content).toBe('The code is QX-4471.');
    expect(response.usage?.prompt_tokens).toBe(billedFor(sent[0]) + billedFor(sent[1]));
    expect(response.usage?.completion_tokens).toBe(10);
    expect(samples.slice(seen).map((s) => s.billed)).toEqual([billedFor(sent[1])]);
  });

  test('chat.completions, streamed: the usage chunk adds up every call; calibration reads the last call alone', async () => {
    const { client, compressor, samples } = await wrapped();
    const messages = pairs(24) as ChatCompletionMessageParam[];
    await client.chat.completions.create({ model: 'm', messages, metadata: { chat_id: 'u2' } });
    await compressor.drain();
    const before = bed.server.bodies.length;
    const seen = samples.length;
    bed.server.enqueue(RECALL, ANSWER);
    const stream = await client.chat.completions.create({ model: 'm', messages: [...messages, { role: 'user', content: 'The code?' }], metadata: { chat_id: 'u2' }, stream: true, stream_options: { include_usage: true } });
    const usages: unknown[] = [];
    for await (const chunk of stream) if (chunk.usage) usages.push(chunk.usage);
    const sent = bed.server.bodies.slice(before);
    expect(sent).toHaveLength(2);
    expect(usages).toEqual([expect.objectContaining({ prompt_tokens: billedFor(sent[0]) + billedFor(sent[1]), completion_tokens: 10 })]);
    expect(samples.slice(seen).map((s) => s.billed)).toEqual([billedFor(sent[1])]);
  });

  test('responses, not streamed and streamed: usage adds up every call; calibration reads the last call alone', async () => {
    const { client, compressor, samples } = await wrapped();
    const input = pairs(24) as ResponseInputItem[];
    await client.responses.create({ model: 'm', input, metadata: { chat_id: 'u3' } });
    await compressor.drain();
    const asked: ResponseInputItem[] = [...input, { role: 'user', content: 'The code?' }];

    let before = bed.server.bodies.length;
    let seen = samples.length;
    bed.server.enqueue(RECALL, ANSWER);
    const response = await client.responses.create({ model: 'm', input: asked, metadata: { chat_id: 'u3' } });
    let sent = bed.server.bodies.slice(before);
    expect(sent).toHaveLength(2);
    expect(response.usage).toMatchObject({ input_tokens: billedFor(sent[0]) + billedFor(sent[1]), output_tokens: 10, total_tokens: billedFor(sent[0]) + billedFor(sent[1]) + 10 });
    expect(samples.slice(seen).map((s) => s.billed)).toEqual([billedFor(sent[1])]);

    before = bed.server.bodies.length;
    seen = samples.length;
    bed.server.enqueue(RECALL, ANSWER);
    const stream = await client.responses.create({ model: 'm', input: asked, metadata: { chat_id: 'u3' }, stream: true });
    let completed: unknown;
    for await (const event of stream) if (event.type === 'response.completed') completed = event.response.usage;
    sent = bed.server.bodies.slice(before);
    expect(sent).toHaveLength(2);
    expect(completed).toMatchObject({ input_tokens: billedFor(sent[0]) + billedFor(sent[1]), output_tokens: 10 });
    expect(samples.slice(seen).map((s) => s.billed)).toEqual([billedFor(sent[1])]);
  });
});
