import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer } from 'node:net';
import { CtxfoldError, InputError } from '../../src/errors.js';
import { startServer, type RunningServer } from '../../src/server/index.js';
import { json, startUpstream, type StandInUpstream } from '../helpers/upstream-server.js';

/**
 * What the proxy says about what it did and what failed: every repair it makes to a request's
 * history is a debug line naming it; a 502 for an upstream it cannot reach names that upstream's
 * origin, and never a key.
 */

/** A loopback port nothing listens on: taken, then given back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const CLIENT_KEY = 'sk-client-secret-1234567890';
const HELD_KEY = 'sk-proxy-held-0987654321';

/** A tool result no call made (call_ghost) and a call (call_2) whose result never came. */
const broken = [
  { role: 'user', content: 'What is the weather in Oslo and in Bergen?' },
  { role: 'tool', tool_call_id: 'call_ghost', content: 'a result for no call' },
  { role: 'assistant', content: null, tool_calls: [
    { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
    { id: 'call_2', type: 'function', function: { name: 'weather', arguments: '{"city":"Bergen"}' } },
  ] },
  { role: 'tool', tool_call_id: 'call_1', content: 'Oslo: 4 C, rain' },
  { role: 'user', content: 'And tomorrow?' },
];

describe('the proxy logs each repair at debug level', () => {
  let upstream: StandInUpstream;
  let proxy: RunningServer;
  const lines: string[] = [];
  beforeAll(async () => {
    upstream = await startUpstream();
    upstream.handle((_q, res) => json(res, 200, { id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] }));
    proxy = await startServer({ upstream: upstream.baseURL, port: 0, store: 'memory', logLevel: 'debug', logDestination: { write: (line: string) => lines.push(line) } });
  });
  afterAll(async () => {
    await proxy.close();
    await upstream.close();
  });

  const post = (path: string, body: unknown) => fetch(`${proxy.url}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${CLIENT_KEY}`, 'x-ctxfold-chat-id': 'weather-chat' }, body: JSON.stringify(body),
  });
  const repairLines = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => typeof l.msg === 'string' && (l.msg as string).startsWith('repaired'));

  test('an orphan tool result removed and a missing result added: one debug line naming both', async () => {
    const r = await post('/v1/chat/completions', { model: 'gpt-4o', messages: broken });
    expect(r.status).toBe(200);
    await r.text();
    const sent = upstream.requests.at(-1)!.body!.messages as Array<{ role: string; tool_call_id?: string }>;
    expect(sent.some((m) => m.tool_call_id === 'call_ghost')).toBe(false);
    expect(sent.some((m) => m.tool_call_id === 'call_2')).toBe(true);

    const logged = repairLines();
    expect(logged).toHaveLength(1);
    const [line] = logged;
    expect(line.level).toBe(20); // pino's debug
    expect(line.route).toBe('chat.completions');
    expect(line.repairs).toEqual(expect.arrayContaining([
      { kind: 'removed-orphan', at: 'messages[1]', id: 'call_ghost' },
      expect.objectContaining({ kind: 'added-result', id: 'call_2' }),
    ]));
    expect(line.msg).toMatch(/removed-orphan at messages\[1\]: tool result call_ghost/);
    expect(line.msg).toMatch(/added-result .*call_2/);
    // The chat is named by its fingerprint, and no key or content reaches the log.
    expect(line.chat).not.toBe('weather-chat');
    for (const l of lines) {
      expect(l).not.toContain(CLIENT_KEY);
      expect(l).not.toContain('a result for no call');
    }
  });

  test('on Responses, the repair is named by the body\'s field (input)', async () => {
    const before = repairLines().length;
    const r = await post('/v1/responses', {
      model: 'gpt-4o',
      input: [
        { role: 'user', content: 'look it up' },
        { type: 'function_call_output', call_id: 'call_nobody', output: 'orphan output' },
        { role: 'user', content: 'well?' },
      ],
    });
    await r.text();
    const logged = repairLines().slice(before);
    expect(logged).toHaveLength(1);
    expect(logged[0].repairs).toEqual([{ kind: 'removed-orphan', at: 'input[1]', id: 'call_nobody' }]);
  });

  test('a history with nothing to repair logs no repair line', async () => {
    const before = repairLines().length;
    const r = await post('/v1/chat/completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    await r.text();
    expect(repairLines().length).toBe(before);
  });
});

describe('a 502 names the upstream it could not reach, and no key', () => {
  test('a closed loopback port: the body names its origin, not the client\'s or the proxy\'s key', async () => {
    const port = await closedPort();
    const origin = `http://127.0.0.1:${port}`;
    const lines: string[] = [];
    for (const upstreamKey of [undefined, HELD_KEY]) {
      const proxy = await startServer({ upstream: `${origin}/v1`, port: 0, store: 'memory', upstreamKey, logLevel: 'debug', logDestination: { write: (line: string) => lines.push(line) } });
      try {
        const asks: Array<{ path: string; headers: Record<string, string>; body: unknown }> = [
          { path: '/v1/chat/completions', headers: { authorization: `Bearer ${CLIENT_KEY}` }, body: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] } },
          { path: '/v1/messages', headers: { 'x-api-key': CLIENT_KEY, 'anthropic-version': '2023-06-01' }, body: { model: 'claude-x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] } },
        ];
        for (const ask of asks) {
          const r = await fetch(`${proxy.url}${ask.path}?api-key=${CLIENT_KEY}`, { method: 'POST', headers: { 'content-type': 'application/json', ...ask.headers }, body: JSON.stringify(ask.body) });
          const text = await r.text();
          expect({ path: ask.path, status: r.status }).toEqual({ path: ask.path, status: 502 });
          expect(text).toContain(`upstream ${origin}: could not be reached (ECONNREFUSED)`);
          expect(text).not.toContain(CLIENT_KEY);
          expect(text).not.toContain(HELD_KEY);
          expect(text).not.toContain('api-key');
        }
        const models = await fetch(`${proxy.url}/v1/models`, { headers: { authorization: `Bearer ${CLIENT_KEY}` } });
        expect(models.status).toBe(502);
        expect(await models.text()).toContain(`upstream ${origin}:`);
      } finally {
        await proxy.close();
      }
    }
    for (const l of lines) {
      expect(l).not.toContain(CLIENT_KEY);
      expect(l).not.toContain(HELD_KEY);
    }
  });

  test('a held key with a line break (a trailing newline from its file) is refused at start, naming the option and not the key', async () => {
    const refused = await startServer({ upstream: 'http://127.0.0.1:9/v1', port: 0, store: 'memory', upstreamKey: `${HELD_KEY}\n`, logLevel: 'silent' }).then(
      async (proxy) => { await proxy.close(); return undefined; },
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(InputError);
    expect((refused as CtxfoldError).code).toBe('CTXFOLD_INPUT');
    expect((refused as InputError).path).toBe('options.upstreamKey');
    expect((refused as Error).message).not.toContain(HELD_KEY);
  });
});
