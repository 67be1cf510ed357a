import { describe, expect, test } from '@jest/globals';
import { json } from '../helpers/upstream-server.js';
import { chatCompletion, post, recallChunks, RECALL_CALL, sse, ssePayloads, recallBedForFile, textChunks } from './recall-bed.js';

/**
 * After a recall loop the client's `usage` is the sum over every upstream call the proxy made for
 * its request (numbers summed, nested details too), streamed or not, on each route: a client that
 * bills from `usage` pays for what the upstream billed.
 */

const bed = recallBedForFile();

const history = [{ role: 'user', content: 'Where is the cache?' }];
const chatUsage = (n: number) => ({ prompt_tokens: 1000 * n, completion_tokens: n, total_tokens: 1000 * n + n, prompt_tokens_details: { cached_tokens: 100 * n } });
const summed = { prompt_tokens: 3000, completion_tokens: 3, total_tokens: 3003, prompt_tokens_details: { cached_tokens: 300 } };

describe('chat/completions', () => {
  test('non-streamed: usage sums both rounds', async () => {
    bed().script((_q, res) => json(res, 200, chatCompletion(null, [RECALL_CALL], chatUsage(1))), (_q, res) => json(res, 200, chatCompletion('In /srv/cache.', [], chatUsage(2))));
    const r = await post(bed().proxy, '/v1/chat/completions', { model: 'm', messages: history });
    const body = await r.json() as { usage: unknown; choices: { message: { content: string } }[] };
    expect(body.choices[0].message.content).toBe('In /srv/cache.');
    expect(body.usage).toEqual(summed);
  });

  test('streamed: the usage chunk sums both rounds', async () => {
    bed().script((_q, res) => sse(res, recallChunks(chatUsage(1))), (_q, res) => sse(res, textChunks('In /srv/cache.', chatUsage(2))));
    const r = await post(bed().proxy, '/v1/chat/completions', { model: 'm', stream: true, stream_options: { include_usage: true }, messages: history });
    const usages = ssePayloads(await r.text()).filter((e) => e.usage).map((e) => e.usage);
    expect(usages).toEqual([summed]);
  });

  test('a request without a recall round keeps the upstream\'s bytes', async () => {
    const body = chatCompletion('plain', [], chatUsage(1));
    bed().script((_q, res) => json(res, 200, body));
    const r = await post(bed().proxy, '/v1/chat/completions', { model: 'm', messages: history });
    expect(await r.text()).toBe(JSON.stringify(body));
  });
});

const responseUsage = (n: number) => ({ input_tokens: 10 * n, input_tokens_details: { cached_tokens: n }, output_tokens: n, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 11 * n });
const responsesSummed = { input_tokens: 30, input_tokens_details: { cached_tokens: 3 }, output_tokens: 3, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 33 };
const recallItem = { type: 'function_call', id: 'fc_1', call_id: 'call_r', name: 'ctxfold_recall', arguments: '{"query":"cache"}', status: 'completed' };
const textItem = { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'In /srv/cache.', annotations: [] }] };
const response = (output: unknown[], usage: unknown, status = 'completed') => ({ id: 'resp_1', object: 'response', status, output, tools: [], usage });
const event = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

describe('responses', () => {
  test('non-streamed: usage sums both rounds', async () => {
    bed().script((_q, res) => json(res, 200, response([recallItem], responseUsage(1))), (_q, res) => json(res, 200, response([textItem], responseUsage(2))));
    const r = await post(bed().proxy, '/v1/responses', { model: 'm', input: history });
    expect((await r.json() as { usage: unknown }).usage).toEqual(responsesSummed);
  });

  test('streamed: response.completed carries the sum of both rounds', async () => {
    const stream = (item: Record<string, unknown>, usage: unknown) => [
      event('response.created', { sequence_number: 0, response: response([], null, 'in_progress') }),
      event('response.output_item.added', { sequence_number: 1, output_index: 0, item: { ...item, status: 'in_progress' } }),
      event('response.output_item.done', { sequence_number: 2, output_index: 0, item }),
      event('response.completed', { sequence_number: 3, response: response([item], usage) }),
    ];
    bed().script((_q, res) => sse(res, stream(recallItem, responseUsage(1))), (_q, res) => sse(res, stream(textItem, responseUsage(2))));
    const r = await post(bed().proxy, '/v1/responses', { model: 'm', stream: true, input: history });
    const events = ssePayloads(await r.text());
    expect(JSON.stringify(events)).not.toContain('ctxfold_recall');
    const completed = events.find((e) => e.type === 'response.completed') as { response: { usage: unknown } };
    expect(completed.response.usage).toEqual(responsesSummed);
  });
});

const anthropicUsage = (n: number) => ({ input_tokens: 10 * n, cache_creation_input_tokens: 0, cache_read_input_tokens: n, output_tokens: n });
const message = (content: unknown[], stop: string, usage: unknown) => ({ id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content, stop_reason: stop, stop_sequence: null, usage });
const toolUse = { type: 'tool_use', id: 'toolu_1', name: 'ctxfold_recall', input: { query: 'cache' } };

describe('messages', () => {
  test('non-streamed: usage sums both rounds', async () => {
    bed().script((_q, res) => json(res, 200, message([toolUse], 'tool_use', anthropicUsage(1))), (_q, res) => json(res, 200, message([{ type: 'text', text: 'In /srv/cache.' }], 'end_turn', anthropicUsage(2))));
    const r = await post(bed().proxy, '/v1/messages', { model: 'm', max_tokens: 100, messages: history });
    expect((await r.json() as { usage: unknown }).usage).toEqual({ input_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 3, output_tokens: 3 });
  });

  test('streamed: message_start and message_delta carry the sums of both rounds', async () => {
    const start = (n: number) => event('message_start', { message: { ...message([], '', { ...anthropicUsage(n), output_tokens: 1 }), stop_reason: null } });
    const end = (n: number, stop: string) => [event('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: n } }), event('message_stop', {})];
    bed().script(
      (_q, res) => sse(res, [start(1), event('content_block_start', { index: 0, content_block: { ...toolUse, input: {} } }), event('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '{"query":"cache"}' } }), event('content_block_stop', { index: 0 }), ...end(1, 'tool_use')]),
      (_q, res) => sse(res, [start(2), event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }), event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'In /srv/cache.' } }), event('content_block_stop', { index: 0 }), ...end(2, 'end_turn')]),
    );
    const r = await post(bed().proxy, '/v1/messages', { model: 'm', max_tokens: 100, stream: true, messages: history });
    const events = ssePayloads(await r.text());
    expect(JSON.stringify(events)).not.toContain('ctxfold_recall');
    const first = events.find((e) => e.type === 'message_start') as { message: { usage: unknown } };
    const delta = events.find((e) => e.type === 'message_delta') as { usage: unknown };
    expect(first.message.usage).toEqual({ input_tokens: 30, cache_creation_input_tokens: 0, cache_read_input_tokens: 3, output_tokens: 2 });
    expect(delta.usage).toEqual({ output_tokens: 3 });
  });
});
