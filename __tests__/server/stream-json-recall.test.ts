import { describe, expect, test } from '@jest/globals';
import { json } from '../helpers/upstream-server.js';
import { chatCompletion, post, RECALL_CALL, recallBedForFile } from './recall-bed.js';

/**
 * A client that asks `stream: true` of an upstream that answers plain JSON anyway: the proxy
 * answers the recall calls in that JSON as it does for a non-streamed request (asks the upstream
 * again), and the client gets the last JSON answer, never a recall call.
 */

const bed = recallBedForFile();

const history = [{ role: 'user', content: 'Where is the cache?' }];

describe('a streamed request answered with JSON', () => {
  test('chat/completions: the recall call is answered, the client gets the second JSON answer', async () => {
    const before = bed().upstream.requests.length;
    bed().script((_q, res) => json(res, 200, chatCompletion(null, [RECALL_CALL])), (_q, res) => json(res, 200, chatCompletion('In /srv/cache.')));
    const r = await post(bed().proxy, '/v1/chat/completions', { model: 'm', stream: true, messages: history });
    const text = await r.text();
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('application/json');
    expect(text).not.toContain('ctxfold_recall');
    expect((JSON.parse(text) as { choices: { message: { content: string } }[] }).choices[0].message.content).toBe('In /srv/cache.');
    const sent = bed().upstream.requests.slice(before);
    expect(sent).toHaveLength(2);
    expect(sent[1].body?.stream).toBe(true);
    expect((sent[1].body?.messages as { role: string }[]).at(-1)).toMatchObject({ role: 'tool', tool_call_id: RECALL_CALL.id });
  });

  const response = (output: unknown[]) => ({ id: 'resp_1', object: 'response', status: 'completed', output, tools: [], usage: { input_tokens: 10, output_tokens: 1, total_tokens: 11 } });
  const message = (content: unknown[], stop: string) => ({ id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content, stop_reason: stop, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } });
  const routes = [
    {
      name: 'responses', path: '/v1/responses', request: { model: 'm', stream: true, input: history },
      recall: response([{ type: 'function_call', id: 'fc_1', call_id: 'call_r', name: 'ctxfold_recall', arguments: '{"query":"cache"}', status: 'completed' }]),
      answer: response([{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'In /srv/cache.', annotations: [] }] }]),
    },
    {
      name: 'messages', path: '/v1/messages', request: { model: 'm', max_tokens: 100, stream: true, messages: history },
      recall: message([{ type: 'tool_use', id: 'toolu_1', name: 'ctxfold_recall', input: { query: 'cache' } }], 'tool_use'),
      answer: message([{ type: 'text', text: 'In /srv/cache.' }], 'end_turn'),
    },
  ];
  test.each(routes)('$name: the recall call is answered, the client gets the second JSON answer', async ({ path, request, recall, answer }) => {
    const before = bed().upstream.requests.length;
    bed().script((_q, res) => json(res, 200, recall), (_q, res) => json(res, 200, answer));
    const r = await post(bed().proxy, path, request);
    const text = await r.text();
    expect(r.status).toBe(200);
    expect(text).not.toContain('ctxfold_recall');
    expect(text).toContain('In /srv/cache.');
    expect(bed().upstream.requests.length - before).toBe(2);
  });

  test('a JSON answer without recall calls reaches the client as it came', async () => {
    const body = chatCompletion('plain');
    bed().script((_q, res) => json(res, 200, body, { 'x-upstream': 'yes' }));
    const r = await post(bed().proxy, '/v1/chat/completions', { model: 'm', stream: true, messages: history });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-upstream')).toBe('yes');
    expect(await r.text()).toBe(JSON.stringify(body));
  });
});
