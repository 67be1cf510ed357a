import { describe, expect, test } from '@jest/globals';
import OpenAI from 'openai';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { MemoryStore } from '../../src/store/memory-store.js';
import { validateMessages } from '../../src/formats/profiles.js';
import { startServer } from '../../src/server/index.js';
import { recallHistory, recallProxyHooks } from './recall-chat.js';

/**
 * `ctxfold serve --recall`: the real `openai` client talks to the proxy, which talks to a loopback
 * stand-in bed.model. When the model asks to recall a summarized message, the proxy answers the call
 * from the caller's own chat and asks again; the client sees the final answer only.
 */

const FACT_A = 'Noted: the nightly build keeps its cache in /srv/forge/cache-7, unlock token ZK-9031.';
const FACT_B = 'Noted: the staging bucket is s3://lantern-staging, rotated every 14 days.';

const bed = recallProxyHooks();


const client = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${bed.proxy.url}/v1`, maxRetries: 0 });
const recallCall = (args: unknown) => ({ calls: [{ name: 'ctxfold_recall', arguments: args }] });
type Body = Record<string, unknown>;
const chatTools = (body: Body) => ((body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
const all = (bodies: Body[]) => bodies.map((b) => JSON.stringify(b)).join('\n');

/** Tenant `apiKey`'s chat `chat` with a summary covering its early messages (one request, then the background summary). */
async function summarized(apiKey: string, chat: string, fact: string) {
  const messages = recallHistory(24, fact);
  await client(apiKey).chat.completions.create({ model: 'm', messages, metadata: { chat_id: chat } });
  await bed.proxy.drain();
  return messages;
}

describe('the proxy answers ctxfold_recall calls itself', () => {
  test('chat/completions: the second upstream request carries #2\'s original text; the client sees only the final answer', async () => {
    const messages = await summarized('key-a', 'c', FACT_A);
    const before = bed.model.bodies.length;
    bed.model.enqueue(recallCall({ ids: ['#2'] }), { text: 'The token is ZK-9031.' });
    const response = await client('key-a').chat.completions.create({ model: 'm', messages: [...messages, { role: 'user', content: 'Where is the build cache?' }], metadata: { chat_id: 'c' } });

    expect(response.choices[0].message).toEqual({ role: 'assistant', content: 'The token is ZK-9031.', refusal: null });
    expect(response.choices[0].finish_reason).toBe('stop');
    const [first, second, ...more] = bed.model.bodies.slice(before);
    expect(more).toEqual([]);
    // The first view lost the message to the summary, whose note names what can be recalled; the tool is offered.
    expect(JSON.stringify(first.messages)).not.toContain('nightly build keeps its cache');
    expect(chatTools(first)).toEqual(['ctxfold_recall']);
    // The second ends with the recall call and its answer: the original text.
    const tail = (second.messages as Body[]).slice(-2);
    expect(tail[0]).toMatchObject({ role: 'assistant', tool_calls: [{ function: { name: 'ctxfold_recall' } }] });
    expect(tail[1]).toMatchObject({ role: 'tool', tool_call_id: (tail[0].tool_calls as Body[])[0].id });
    expect(tail[1].content).toContain(FACT_A);
    for (const body of [first, second]) expect(validateMessages(body.messages as unknown[], 'openai')).toEqual([]);
  });

  test('responses: the same with an input list; output_text is the final answer', async () => {
    const input = (await summarized('key-a', 'r', FACT_A)) as ResponseInputItem[];
    const before = bed.model.bodies.length;
    bed.model.enqueue(recallCall({ query: 'ZK-9031' }), { text: 'Found the token.' });
    const response = await client('key-a').responses.create({ model: 'm', input: [...input, { role: 'user', content: 'The token?' }], metadata: { chat_id: 'r' } });

    expect(response.output_text).toBe('Found the token.');
    expect(response.output.some((o) => o.type === 'function_call')).toBe(false);
    const [first, second] = bed.model.bodies.slice(before);
    expect(bed.model.paths.slice(before)).toEqual(['/v1/responses', '/v1/responses']);
    expect((first.tools as { name: string }[]).map((t) => t.name)).toEqual(['ctxfold_recall']);
    const last = (second.input as Body[]).at(-1)!;
    expect(last).toMatchObject({ type: 'function_call_output', call_id: 'call_' + String(before + 1) + '_0' });
    expect(last.output).toContain(FACT_A);
    // The response echoes the request's tools (as the API does): the application sent none, and never sees ctxfold's.
    expect(response.tools).toEqual([]);
  });

  test('responses: an answer with no recall call does not show the recall tool in its echoed tools either', async () => {
    const input = (await summarized('key-a', 'r2', FACT_A)) as ResponseInputItem[];
    const before = bed.model.bodies.length;
    bed.model.enqueue({ text: 'Nothing to look up.' });
    const lookup = { type: 'function' as const, name: 'lookup', parameters: { type: 'object', properties: {} }, strict: false };
    const response = await client('key-a').responses.create({ model: 'm', input: [...input, { role: 'user', content: 'Hi.' }], metadata: { chat_id: 'r2' }, tools: [lookup] });
    expect(response.output_text).toBe('Nothing to look up.');
    expect(((bed.model.bodies[before].tools ?? []) as { name: string }[]).map((t) => t.name)).toEqual(['lookup', 'ctxfold_recall']);
    expect(response.tools).toEqual([lookup]);
  });

  test('tenant B, naming the same chat id, recalls only its own originals', async () => {
    await summarized('key-a', 'shared', FACT_A);
    const messagesB = await summarized('key-b', 'shared', FACT_B);
    const before = bed.model.bodies.length;
    bed.model.enqueue(recallCall({ ids: ['#2'], query: 'ZK-9031 cache-7' }), { text: 'done' });
    const response = await client('key-b').chat.completions.create({ model: 'm', messages: [...messagesB, { role: 'user', content: 'Recall it.' }], metadata: { chat_id: 'shared' } });

    expect(response.choices[0].message.content).toBe('done');
    const bodies = bed.model.bodies.slice(before);
    expect(bodies).toHaveLength(2);
    const answer = (bodies[1].messages as Body[]).at(-1)!;
    expect(answer.role).toBe('tool');
    expect(answer.content).toContain(FACT_B);
    // Neither A's message nor A's summary reaches B's requests (the query itself names A's words, not A's text).
    expect(all(bodies)).not.toContain('nightly build keeps its cache');
    expect(all(bodies)).not.toContain('/srv/forge/cache-7');
    expect(answer.content).toContain('no summarized message matched');
  });

  test('a response mixing recall with the application\'s call goes to the client without the recall call, after one upstream request', async () => {
    const messages = await summarized('key-a', 'mixed', FACT_A);
    const before = bed.model.bodies.length;
    bed.model.enqueue({ calls: [{ name: 'ctxfold_recall', arguments: { ids: ['#2'] } }, { name: 'lookup', arguments: { q: 'x' } }] });
    const tools = [{ type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }];
    const response = await client('key-a').chat.completions.create({ model: 'm', messages: [...messages, { role: 'user', content: 'Go.' }], metadata: { chat_id: 'mixed' }, tools });
    expect(bed.model.bodies.length - before).toBe(1);
    expect(chatTools(bed.model.bodies[before])).toEqual(['lookup', 'ctxfold_recall']);
    expect(response.choices[0].message.tool_calls!.map((c) => (c as { function: { name: string } }).function.name)).toEqual(['lookup']);
  });

  test('a stream and /v1/messages are offered the recall tool too, each in its own shape (proxy-stream-recall and proxy-messages-recall tests answer them)', async () => {
    const messages = await summarized('key-a', 's', FACT_A);
    const stream = await client('key-a').chat.completions.create({ model: 'm', messages: [...messages, { role: 'user', content: 'Go.' }], metadata: { chat_id: 's' }, stream: true });
    for await (const _ of stream) { /* drain */ }
    const streamed = bed.model.bodies.at(-1)!;
    expect(streamed.stream).toBe(true);
    expect(chatTools(streamed)).toEqual(['ctxfold_recall']);
    await fetch(`${bed.proxy.url}/v1/messages`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'key-a' },
      body: JSON.stringify({ model: 'claude-x', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }),
    }).then((r) => r.arrayBuffer());
    expect(bed.model.paths.at(-1)).toBe('/v1/messages');
    expect(((bed.model.bodies.at(-1)!.tools ?? []) as { name: string; input_schema?: unknown }[]).map((t) => [t.name, typeof t.input_schema])).toEqual([['ctxfold_recall', 'object']]);
  });
});

describe('--recall needs a store that keeps originals', () => {
  test('startServer with a StateStore object that keeps none and recall is an InputError naming options.recall, before any request', async () => {
    const bare = new MemoryStore();
    const stateOnly = { get: bare.get.bind(bare), commit: bare.commit.bind(bare), delete: bare.delete.bind(bare), close: bare.close.bind(bare) };
    await expect(startServer({ upstream: bed.model.baseURL, port: 0, store: stateOnly as never, recall: true, logLevel: 'silent' }))
      .rejects.toThrow(/^options\.recall: recall \(--recall\) needs a store that keeps the original messages/);
  });
});
