import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { LENSES } from '../../src/formats/registry.js';
import { startServer, type RunningServer } from '../../src/server/index.js';
import { ROUTES, type FoldRoute } from '../../src/server/routes.js';
import { propertyParams } from '../helpers/property-runs.js';
import { json, startUpstream, type StandInUpstream } from '../helpers/upstream-server.js';

/**
 * A body whose history is not what its route expects (`messages` an object, a string, null,
 * missing; Responses `input` neither a string nor a list) is a 400 naming the field and the rule,
 * and nothing goes upstream; the field is where the route's format lens keeps its list. The
 * stand-in upstream counts what reaches it.
 */

let upstream: StandInUpstream;
let proxy: RunningServer;
beforeAll(async () => {
  upstream = await startUpstream((_q, res) => json(res, 200, { id: 'r', object: 'response', status: 'completed', output: [] }));
  proxy = await startServer({ upstream: upstream.baseURL, port: 0, store: 'memory', logLevel: 'silent' });
});
afterAll(async () => {
  await proxy.close();
  await upstream.close();
});

const post = (path: string, body: Record<string, unknown>) =>
  fetch(`${proxy.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-shape' }, body: JSON.stringify(body) });

/** The error's message and param, in either shape. */
async function errorOf(r: Response): Promise<{ message: string; param?: unknown; code?: unknown }> {
  const body = (await r.json()) as { error: { message: string; param?: unknown; code?: unknown } };
  return body.error;
}

const CHAT = '/v1/chat/completions';
const RESPONSES = '/v1/responses';
const MESSAGES = '/v1/messages';

describe('a history of the wrong type', () => {
  test('each fold route reads its history where its format lens keeps the list', () => {
    for (const route of ROUTES.filter((r): r is FoldRoute => r.kind === 'fold')) {
      expect([route.path, LENSES[route.endpoint.format]!.request.messagesField]).toEqual([route.path, route.endpoint.listField]);
    }
  });

  test.each<[string, Record<string, unknown>, string]>([
    [CHAT, { messages: {} }, 'messages: must be an array of messages, got an object'],
    [CHAT, { messages: 'hi' }, 'messages: must be an array of messages, got the string "hi"'],
    [CHAT, { messages: null }, 'messages: must be an array of messages, got null'],
    [CHAT, { messages: 3 }, 'messages: must be an array of messages, got number 3'],
    [CHAT, {}, 'messages: is required: an array of messages'],
    [RESPONSES, { input: {} }, 'input: must be a string or an array of input items, got an object'],
    [RESPONSES, { input: 7 }, 'input: must be a string or an array of input items, got number 7'],
    [RESPONSES, { input: null }, 'input: must be a string or an array of input items, got null'],
    [RESPONSES, { input: true, previous_response_id: 'resp_0' }, 'input: must be a string or an array of input items, got boolean true'],
    [MESSAGES, { max_tokens: 10, messages: { role: 'user', content: 'hi' } }, 'messages: must be an array of messages, got an object'],
    [MESSAGES, { max_tokens: 10, messages: 'hi' }, 'messages: must be an array of messages, got the string "hi"'],
    [MESSAGES, { max_tokens: 10 }, 'messages: is required: an array of messages'],
  ])('%s with %j is a 400: %s, and nothing goes upstream', async (path, fields, rule) => {
    const before = upstream.requests.length;
    const r = await post(path, { model: 'test-model', ...fields });
    expect(r.status).toBe(400);
    const error = await errorOf(r);
    expect(error.message).toBe(`ctxfold could not read this request: ${rule}`);
    if (path !== MESSAGES) expect([error.code, error.param]).toEqual(['ctxfold_invalid_input', rule.split(':')[0]]);
    expect(upstream.requests.length).toBe(before);
  });

  test('any value of messages that is not a list is refused before the upstream (property)', async () => {
    const before = upstream.requests.length;
    await fc.assert(fc.asyncProperty(fc.jsonValue().filter((v) => !Array.isArray(v)), async (value) => {
      const r = await post(CHAT, { model: 'test-model', messages: value });
      expect(r.status).toBe(400);
      expect((await errorOf(r)).message).toMatch(/^ctxfold could not read this request: messages: must be an array of messages, got /);
    }), { ...propertyParams(), numRuns: Math.min(200, propertyParams().numRuns) });
    expect(upstream.requests.length).toBe(before);
  });

  test('a Responses item the lens cannot read is named under input, not messages', async () => {
    const before = upstream.requests.length;
    const r = await post(RESPONSES, { model: 'test-model', input: [{ role: 'user', content: 'hi' }, 5] });
    expect(r.status).toBe(400);
    const error = await errorOf(r);
    expect(error.message).toBe('ctxfold could not read this request: input[1]: must be an input item object, got number 5');
    expect(error.param).toBe('input[1]');
    expect(upstream.requests.length).toBe(before);
  });

  test('what a route accepts still goes out: a Responses string input, or none (a stored prompt), as it came', async () => {
    const before = upstream.requests.length;
    for (const body of [{ model: 'test-model', input: 'hi' }, { model: 'test-model', prompt: { id: 'pmpt_1' } }]) {
      const r = await post(RESPONSES, body);
      expect(r.status).toBe(200);
      await r.text();
      expect(upstream.requests.at(-1)!.body).toEqual(body);
    }
    expect(upstream.requests.length).toBe(before + 2);
  });
});
