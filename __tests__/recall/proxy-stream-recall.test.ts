import { describe, expect, test } from '@jest/globals';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { validateMessages } from '../../src/formats/profiles.js';
import { recallHistory, recallProxyHooks, startRecallProxy } from './recall-chat.js';

/**
 * `ctxfold serve --recall` on streamed requests: the real `openai` client streams through the
 * proxy from a loopback stand-in model that streams its replies as the APIs do. The proxy offers
 * the recall tool on streams too, answers the model's recall calls itself, and the client gets one
 * stream without them.
 */

const FACT = 'Noted: the nightly build keeps its cache in /srv/forge/cache-7, unlock token ZK-9031.';

const bed = recallProxyHooks();


const client = () => new OpenAI({ apiKey: 'key-s', baseURL: `${bed.proxy.url}/v1`, maxRetries: 0 });
type Body = Record<string, unknown>;
const recall = { name: 'ctxfold_recall', arguments: { ids: ['#2'] } };

/** A chat whose early messages a summary covers (one request, then the background summary). */
async function summarized(chat: string): Promise<ChatCompletionMessageParam[]> {
  const messages = recallHistory(24, FACT);
  await client().chat.completions.create({ model: 'm', messages, metadata: { chat_id: chat } });
  await bed.proxy.drain();
  return messages;
}

/** The raw SSE `data` payloads a streamed chat request through the proxy receives. */
async function rawStream(body: Body): Promise<{ status: number; events: string[] }> {
  const r = await fetch(`${bed.proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer key-s' }, body: JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, events: text.split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6)) };
}

describe('streamed chat/completions', () => {
  test('a recall call first: answered by the proxy, the client streams only the second answer', async () => {
    const messages = await summarized('s1');
    const before = bed.model.bodies.length;
    bed.model.enqueue({ calls: [recall] }, { text: 'The token is ZK-9031.' });
    const stream = await client().chat.completions.create({ model: 'm', stream: true, messages: [...messages, { role: 'user', content: 'Where is the cache?' }], metadata: { chat_id: 's1' } });
    let text = '';
    const finishes: (string | null)[] = [];
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      expect(chunk.choices[0]?.delta.tool_calls).toBeUndefined();
      if (chunk.choices[0]?.finish_reason) finishes.push(chunk.choices[0].finish_reason);
    }
    expect(text).toBe('The token is ZK-9031.');
    expect(finishes).toEqual(['stop']);
    const [first, second, ...more] = bed.model.bodies.slice(before);
    expect(more).toEqual([]);
    expect(first.stream).toBe(true);
    expect(second.stream).toBe(true);
    expect(JSON.stringify(first.tools)).toContain('ctxfold_recall');
    const tail = (second.messages as Body[]).slice(-2);
    expect(tail[0]).toMatchObject({ role: 'assistant', tool_calls: [{ id: 'call_' + String(before + 1) + '_0', function: { name: 'ctxfold_recall', arguments: '{"ids":["#2"]}' } }] });
    expect(tail[1]).toMatchObject({ role: 'tool', tool_call_id: 'call_' + String(before + 1) + '_0' });
    expect(tail[1].content).toContain(FACT);
    for (const body of [first, second]) expect(validateMessages(body.messages as unknown[], 'openai')).toEqual([]);
  });

  test('text, then a recall call: the next round continues the same streamed message', async () => {
    const messages = await summarized('s2');
    const before = bed.model.bodies.length;
    bed.model.enqueue({ say: 'Let me look. ', calls: [recall] }, { text: 'It is ZK-9031.' });
    const final = await client().chat.completions.stream({ model: 'm', messages: [...messages, { role: 'user', content: 'The token?' }], metadata: { chat_id: 's2' } }).finalChatCompletion();
    expect(final.choices[0].message.content).toBe('Let me look. It is ZK-9031.');
    expect(final.choices[0].message.tool_calls ?? []).toEqual([]);
    expect(final.choices[0].finish_reason).toBe('stop');
    const second = bed.model.bodies[before + 1];
    expect((second.messages as Body[]).at(-2)).toMatchObject({ role: 'assistant', content: 'Let me look. ' });
    // One message, one completion: every chunk the client gets carries the first chunk's id and created time.
    bed.model.enqueue({ say: 'Let me look. ', calls: [recall] }, { text: 'It is ZK-9031.' });
    const raw = await rawStream({ model: 'm', stream: true, stream_options: { include_usage: true }, messages: [...messages, { role: 'user', content: 'Again?' }], metadata: { chat_id: 's2' } });
    const chunks = raw.events.filter((e) => e !== '[DONE]').map((e) => JSON.parse(e) as Body);
    expect(chunks.map((c) => (c.choices as { delta?: { content?: string } }[])[0]?.delta?.content ?? '').join('')).toBe('Let me look. It is ZK-9031.');
    expect(new Set(chunks.map((c) => `${String(c.id)}@${String(c.created)}`)).size).toBe(1);
  });

  test('recall mixed with the application\'s call: one upstream request, the client gets its call alone, at index 0', async () => {
    const messages = await summarized('s3');
    const before = bed.model.bodies.length;
    bed.model.enqueue({ calls: [recall, { name: 'lookup', arguments: { q: 'x' } }] });
    const tools = [{ type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }];
    const { status, events } = await rawStream({ model: 'm', stream: true, messages: [...messages, { role: 'user', content: 'Go.' }], metadata: { chat_id: 's3' }, tools });
    expect(status).toBe(200);
    expect(bed.model.bodies.length - before).toBe(1);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as { choices: { delta: { tool_calls?: { index: number; function?: { name?: string; arguments?: string } }[] }; finish_reason: string | null }[] });
    const calls = chunks.flatMap((c) => c.choices.flatMap((ch) => ch.delta.tool_calls ?? []));
    expect(calls.map((c) => c.index)).toEqual([0, 0, 0]);
    expect(calls[0].function?.name).toBe('lookup');
    expect(calls.map((c) => c.function?.arguments).join('')).toBe('{"q":"x"}');
    expect(JSON.stringify(events)).not.toContain('ctxfold_recall');
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('tool_calls');
  });

  test('a text answer streams through as it comes: the first delta reaches the client while the model is still writing', async () => {
    const messages = await summarized('s4');
    let release!: () => void;
    const pause = new Promise<void>((resolve) => { release = resolve; });
    bed.model.enqueue({ text: 'first half, second half', pause });
    const stream = await client().chat.completions.create({ model: 'm', stream: true, messages: [...messages, { role: 'user', content: 'Hi.' }], metadata: { chat_id: 's4' } });
    const seen: string[] = [];
    for await (const chunk of stream) {
      const piece = chunk.choices[0]?.delta.content;
      if (piece) {
        seen.push(piece);
        // The model holds the rest until the client has the first piece.
        if (seen.length === 1) release();
      }
    }
    expect(seen.join('')).toBe('first half, second half');
    expect(seen.length).toBeGreaterThan(1);
  });

  test('past the rounds a reply that only recalls is answered once more with tool_choice none; one that recalls anyway, or whose final call is refused, loses the call and ends with stop', async () => {
    const tight = await startRecallProxy(bed.model, { recall: { rounds: 1 } });
    try {
      const c = new OpenAI({ apiKey: 'key-s', baseURL: `${tight.url}/v1`, maxRetries: 0 });
      const messages = recallHistory(24, FACT);
      await c.chat.completions.create({ model: 'm', messages, metadata: { chat_id: 'r1' } });
      await tight.drain();
      const before = bed.model.bodies.length;
      bed.model.enqueue({ calls: [recall] }, { calls: [recall] }, { text: 'Answered.' });
      const answered = await c.chat.completions.stream({ model: 'm', messages: [...messages, { role: 'user', content: 'Again?' }], metadata: { chat_id: 'r1' } }).finalChatCompletion();
      expect(bed.model.bodies.slice(before).map((b) => b.tool_choice)).toEqual([undefined, undefined, 'none']);
      expect(answered.choices[0].message.content).toBe('Answered.');
      expect(answered.choices[0].finish_reason).toBe('stop');

      bed.model.enqueue({ calls: [recall] }, { calls: [recall] }, { calls: [recall] });
      const final = await c.chat.completions.stream({ model: 'm', messages: [...messages, { role: 'user', content: 'Again?' }], metadata: { chat_id: 'r1' } }).finalChatCompletion();
      expect(bed.model.bodies.length - before).toBe(6);
      expect(final.choices[0].message.tool_calls ?? []).toEqual([]);
      expect(final.choices[0].finish_reason).toBe('stop');

      // A 400 to the final call (a server that refuses tool_choice none) is not relayed: the
      // client gets the answer before it, without its recall call.
      bed.model.enqueue({ calls: [recall] }, { calls: [recall] }, { fail: 400 });
      const refused = await c.chat.completions.stream({ model: 'm', messages: [...messages, { role: 'user', content: 'Again?' }], metadata: { chat_id: 'r1' } }).finalChatCompletion();
      expect(bed.model.bodies.slice(before + 6).map((b) => b.tool_choice)).toEqual([undefined, undefined, 'none']);
      expect(refused.choices[0].message.tool_calls ?? []).toEqual([]);
      expect(refused.choices[0].finish_reason).toBe('stop');
    } finally {
      await tight.close();
    }
  });
});

describe('streamed chat/completions, upstream errors', () => {
  test('an error status in the first round reaches the client as it came', async () => {
    const messages = await summarized('e1');
    bed.model.enqueue({ fail: 429 });
    const r = await fetch(`${bed.proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer key-s' }, body: JSON.stringify({ model: 'm', stream: true, messages: [...messages, { role: 'user', content: 'x' }], metadata: { chat_id: 'e1' } }) });
    expect(r.status).toBe(429);
    expect(await r.json()).toEqual({ error: { message: 'scripted failure 429', type: 'server_error', code: null } });
  });

  test('an error status in the round after a recall call (nothing sent yet) reaches the client as it came', async () => {
    const messages = await summarized('e2');
    const before = bed.model.bodies.length;
    bed.model.enqueue({ calls: [recall] }, { fail: 500 });
    const r = await fetch(`${bed.proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer key-s' }, body: JSON.stringify({ model: 'm', stream: true, messages: [...messages, { role: 'user', content: 'x' }], metadata: { chat_id: 'e2' } }) });
    expect(bed.model.bodies.length - before).toBe(2);
    expect(r.status).toBe(500);
    expect(await r.text()).toContain('scripted failure 500');
  });

  test('a stream that breaks off while it is held (a recall call first) is a 502 in the OpenAI error shape', async () => {
    const messages = await summarized('e4');
    bed.model.enqueue({ fail: 'cut' });
    const r = await fetch(`${bed.proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer key-s' }, body: JSON.stringify({ model: 'm', stream: true, messages: [...messages, { role: 'user', content: 'x' }], metadata: { chat_id: 'e4' } }) });
    expect(r.status).toBe(502);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe('ctxfold_upstream_unreachable');
  });

  test('an error status in a round that continues streamed text ends the connection abruptly, never as a complete answer', async () => {
    const messages = await summarized('e3');
    bed.model.enqueue({ say: 'Let me look. ', calls: [recall] }, { fail: 500 });
    const r = await fetch(`${bed.proxy.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer key-s' }, body: JSON.stringify({ model: 'm', stream: true, messages: [...messages, { role: 'user', content: 'x' }], metadata: { chat_id: 'e3' } }) });
    expect(r.status).toBe(200);
    await expect(r.text()).rejects.toThrow();
  });
});

describe('streamed responses', () => {
  test('a recall call first: answered by the proxy; the client\'s stream completes with the second answer only', async () => {
    const input = (await summarized('sr')) as ResponseInputItem[];
    const before = bed.model.bodies.length;
    bed.model.enqueue({ calls: [{ name: 'ctxfold_recall', arguments: { query: 'ZK-9031' } }] }, { text: 'Found the token.' });
    const stream = client().responses.stream({ model: 'm', input: [...input, { role: 'user', content: 'The token?' }], metadata: { chat_id: 'sr' } });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const final = await stream.finalResponse();
    const texts = final.output.flatMap((o) => (o.type === 'message' ? o.content.map((c) => (c.type === 'output_text' ? c.text : '')) : []));
    expect(texts).toEqual(['Found the token.']);
    expect(final.output.some((o) => o.type === 'function_call')).toBe(false);
    expect(types.filter((t) => t === 'response.created')).toHaveLength(1);
    expect(final.tools).toEqual([]);
    const [first, second] = bed.model.bodies.slice(before);
    expect(first.stream).toBe(true);
    expect((first.tools as { name: string }[]).map((t) => t.name)).toEqual(['ctxfold_recall']);
    expect(String((second.input as Body[]).at(-1)!.output)).toContain(FACT);
  });

  test('recall mixed with the application\'s call: the client gets its call alone, at output index 0, sequence numbers unbroken', async () => {
    const input = (await summarized('sm')) as ResponseInputItem[];
    const before = bed.model.bodies.length;
    bed.model.enqueue({ calls: [{ name: 'ctxfold_recall', arguments: { ids: ['#2'] } }, { name: 'lookup', arguments: { q: 'x' } }] });
    const r = await fetch(`${bed.proxy.url}/v1/responses`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer key-s' },
      body: JSON.stringify({ model: 'm', stream: true, input: [...input, { role: 'user', content: 'Go.' }], metadata: { chat_id: 'sm' }, tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } }] }),
    });
    const events = (await r.text()).split('\n\n').filter((e) => e.includes('data: ')).map((e) => JSON.parse(e.slice(e.indexOf('data: ') + 6)) as Body);
    expect(bed.model.bodies.length - before).toBe(1);
    // No output item, delta or call names it, nor the request's tools the responses echo.
    expect(JSON.stringify(events)).not.toContain('ctxfold_recall');
    for (const e of events.filter((x) => x.response !== undefined)) expect(((e.response as Body).tools as Body[]).map((t) => t.name)).toEqual(['lookup']);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const indexes = [...new Set(events.filter((e) => typeof e.output_index === 'number').map((e) => e.output_index))];
    expect(indexes).toEqual([0]);
    const completed = events.at(-1)!;
    expect(completed.type).toBe('response.completed');
    expect(((completed.response as Body).output as Body[]).map((o) => o.name)).toEqual(['lookup']);
  });
});
