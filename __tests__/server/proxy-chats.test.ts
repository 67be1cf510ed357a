import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateConversation } from '../../bench/fixtures/conversation.js';
import { startServer, type RunningServer } from '../../src/server/index.js';
import { DEFAULT_TENANT_HEADER, tenantOf } from '../../src/server/tenant.js';
import { json, startUpstream, type StandInUpstream } from '../helpers/upstream-server.js';
import { scriptedSummarizer } from '../helpers/test-summarizers.js';

/**
 * The caller's chats (`GET /v1/ctxfold/chats`, `GET /v1/ctxfold/chats/:id`) and the `/ui` page,
 * on a real proxy on 127.0.0.1 with a stand-in upstream and a SQLite store: two API keys each see
 * their own chats only, another key's chat id is the same 404 as one that does not exist, no key
 * is a 401, and no answer carries a key or the other tenant's ids or text.
 */

const KEY_A = 'sk-chats-a-0123456789abcdef';
const KEY_B = 'sk-chats-b-fedcba9876543210';
const rule = { proxyHoldsKey: false, tenantHeader: DEFAULT_TENANT_HEADER };
const tenantA = tenantOf({ authorization: `Bearer ${KEY_A}` }, rule);
const tenantB = tenantOf({ authorization: `Bearer ${KEY_B}` }, rule);

const dir = mkdtempSync(join(tmpdir(), 'ctxfold-chats-'));
let upstream: StandInUpstream;
let proxy: RunningServer;
let withUi: RunningServer;

beforeAll(async () => {
  upstream = await startUpstream((q, res) => json(res, 200, {
    id: 'c', object: 'chat.completion', model: q.body?.model ?? 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 100, completion_tokens: 1, total_tokens: 101 },
  }));
  proxy = await startServer({ upstream: upstream.baseURL, port: 0, store: `sqlite:${join(dir, 'state.db')}`, maxContextTokens: 2_500, keepLast: 4, logLevel: 'silent' });
  withUi = await startServer({ upstream: upstream.baseURL, port: 0, store: 'memory', ui: true, logLevel: 'silent' });
  await send(proxy, KEY_A, 'alpha', generateConversation({ messages: 100, seed: 31 }));
  await send(proxy, KEY_A, 'alpha short', [{ role: 'user', content: 'hello there' }]);
  await send(proxy, KEY_B, 'beta', generateConversation({ messages: 100, seed: 32 }));
  await proxy.drain();
});
afterAll(async () => {
  await proxy?.close();
  await withUi?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function send(server: RunningServer, key: string, chat: string, messages: unknown[]): Promise<void> {
  const res = await fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'x-ctxfold-chat-id': chat },
    body: JSON.stringify({ model: 'chats-model', messages }),
  });
  expect(res.status).toBe(200);
  await res.text();
}

/** GET `path` with `headers`: status, content type and body text. */
async function get(server: RunningServer, path: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string | null; text: string; headers: Headers }> {
  const res = await fetch(`${server.url}${path}`, { headers });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text(), headers: res.headers };
}
const as = (key: string) => ({ authorization: `Bearer ${key}` });
const chatPath = (id: string) => `/v1/ctxfold/chats/${encodeURIComponent(id)}`;

interface ChatAnswer {
  object: string;
  id: string;
  lastActivity: string | null;
  summary: { version: number; coveredMessages: number; coveredIds: string[]; tokensBefore: number; tokensAfter: number; text: string; summarizer: string } | null;
  versions: { version: number; coveredMessages: number; added: { messages: number; firstId: string | null; lastId: string | null } }[];
  job: { state: string; lastError: { code: string } | null };
  lastView: { tokensAfter: number; reservedOutputTokens: number; maxContextTokens: number | null; split: Record<string, number> } | null;
}

describe('GET /v1/ctxfold/chats: each key sees its own chats only', () => {
  test('the list of each key holds its chats, most recently active first, and nothing of the other key', async () => {
    const a = await get(proxy, '/v1/ctxfold/chats', as(KEY_A));
    expect(a.status).toBe(200);
    expect(a.type).toBe('application/json');
    expect(a.headers.get('cache-control')).toBe('no-store');
    const listA = JSON.parse(a.text) as { object: string; data: { id: string; summaryVersion: number; job: string; lastActivity: string }[]; truncated: boolean; fromStore: boolean };
    expect(listA.object).toBe('list');
    expect(listA.fromStore).toBe(true);
    expect(listA.truncated).toBe(false);
    expect(listA.data.map((c) => c.id).sort()).toEqual(['alpha', 'alpha short']);
    expect(listA.data.find((c) => c.id === 'alpha')!.summaryVersion).toBeGreaterThanOrEqual(1);
    expect(listA.data.find((c) => c.id === 'alpha short')!.summaryVersion).toBe(0);
    expect(listA.data.every((c) => c.job === 'idle')).toBe(true);
    const times = listA.data.map((c) => c.lastActivity);
    expect([...times].sort().reverse()).toEqual(times);

    const b = JSON.parse((await get(proxy, '/v1/ctxfold/chats', as(KEY_B))).text) as { data: { id: string }[] };
    expect(b.data.map((c) => c.id)).toEqual(['beta']);
    for (const secret of [KEY_A, KEY_B, tenantA, tenantB, 'beta']) expect(a.text).not.toContain(secret);
  });

  test('one chat: its summary, the versions this process committed, its job, and the last view\'s split', async () => {
    const r = await get(proxy, chatPath('alpha'), as(KEY_A));
    expect(r.status).toBe(200);
    const chat = JSON.parse(r.text) as ChatAnswer;
    expect(chat.object).toBe('ctxfold.chat');
    expect(chat.id).toBe('alpha');
    expect(chat.summary).not.toBeNull();
    const s = chat.summary!;
    expect(s.version).toBeGreaterThanOrEqual(1);
    expect(s.coveredMessages).toBe(s.coveredIds.length);
    expect(s.coveredMessages).toBeGreaterThan(0);
    expect(s.tokensAfter).toBeLessThan(s.tokensBefore);
    expect(s.summarizer).toBe('extractive');
    // Every version this process committed is listed, newest first, the newest being the one in force.
    expect(chat.versions.map((v) => v.version)).toEqual(Array.from({ length: s.version }, (_, k) => s.version - k));
    expect(chat.versions[0].coveredMessages).toBe(s.coveredMessages);
    expect(chat.versions[0].added.lastId).toBe(s.coveredIds.at(-1));
    expect(chat.job).toEqual({ state: 'idle', lastError: null });
    const view = chat.lastView!;
    const parts = ['head', 'summary', 'middle', 'tail', 'notes', 'tools', 'overhead'];
    expect(Object.keys(view.split).sort()).toEqual([...parts].sort());
    expect(parts.reduce((n, p) => n + view.split[p], 0)).toBe(view.tokensAfter);
    expect(view.maxContextTokens).toBe(2_500);
    expect(view.tokensAfter + view.reservedOutputTokens).toBeLessThanOrEqual(2_500);
    // Nothing of the other tenant, nor any key, nor a tenant id.
    const beta = JSON.parse((await get(proxy, chatPath('beta'), as(KEY_B))).text) as ChatAnswer;
    for (const secret of [KEY_A, KEY_B, tenantA, tenantB, beta.summary!.text, ...beta.summary!.coveredIds.slice(0, 5)]) expect(r.text).not.toContain(secret);
  });

  test('a chat without a summary yet is found by its last view; an id holding / ? and spaces round-trips', async () => {
    const r = await get(proxy, chatPath('alpha short'), as(KEY_A));
    expect(r.status).toBe(200);
    const chat = JSON.parse(r.text) as ChatAnswer;
    expect(chat.summary).toBeNull();
    expect(chat.versions).toEqual([]);
    expect(chat.lastView!.tokensAfter).toBeGreaterThan(0);
    await send(proxy, KEY_A, 'a/b?c d', [{ role: 'user', content: 'hi' }]);
    expect(JSON.parse((await get(proxy, chatPath('a/b?c d'), as(KEY_A))).text).id).toBe('a/b?c d');
  });

  test('another key\'s chat is the same 404 as a chat that does not exist, in the proxy\'s error shape', async () => {
    const other = await get(proxy, chatPath('beta'), as(KEY_A));
    const none = await get(proxy, chatPath('no-such-chat'), as(KEY_A));
    const scoped = await get(proxy, chatPath(`${tenantB}:beta`), as(KEY_A));
    expect(other.status).toBe(404);
    expect(none.status).toBe(404);
    expect(scoped.status).toBe(404);
    expect(other.text).toBe(none.text);
    expect(scoped.text).toBe(none.text);
    expect(JSON.parse(none.text)).toEqual({ error: { message: 'no such chat for this caller', type: 'invalid_request_error', param: null, code: 'ctxfold_not_found' } });
    expect((await get(proxy, chatPath('alpha'), as(KEY_B))).text).toBe(none.text);
    expect((await get(proxy, '/v1/ctxfold/chats/%E0%A4%A', as(KEY_A))).text).toBe(none.text);
  });

  test('no key is a 401 on both endpoints, a tenant header alone too (the proxy does not hold the upstream key)', async () => {
    for (const path of ['/v1/ctxfold/chats', chatPath('alpha')]) {
      for (const headers of [{}, { 'x-ctxfold-tenant': 'team-1' }, { authorization: 'Basic abc' }] as Record<string, string>[]) {
        const r = await get(proxy, path, headers);
        expect(r.status).toBe(401);
        const body = JSON.parse(r.text) as { error: { code: string; type: string } };
        expect(body.error.code).toBe('ctxfold_unauthorized');
        expect(body.error.type).toBe('invalid_request_error');
        expect(r.text).not.toContain('alpha');
      }
    }
  });

  test('x-api-key is a key too, as on the request path', async () => {
    const r = await get(proxy, '/v1/ctxfold/chats', { 'x-api-key': KEY_B });
    expect((JSON.parse(r.text) as { data: { id: string }[] }).data.map((c) => c.id)).toEqual(['beta']);
  });
});

describe('GET /ui', () => {
  test('without the ui option it is a 404 like any unknown path', async () => {
    const ui = await get(proxy, '/ui', as(KEY_A));
    const unknown = await get(proxy, '/nope', as(KEY_A));
    expect(ui.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(ui.text).toBe(unknown.text.replace('/nope', '/ui'));
  });

  test('with it, one static page: no key needed, no data in it, a policy that runs its own script only and fetches only from the proxy', async () => {
    await send(withUi, KEY_A, 'gamma', [{ role: 'user', content: 'the gamma chat text' }]);
    const page = await get(withUi, '/ui', as(KEY_A));
    const anonymous = await get(withUi, '/ui');
    expect(page.status).toBe(200);
    expect(page.type).toBe('text/html; charset=utf-8');
    expect(anonymous.text).toBe(page.text);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).toMatch(/connect-src 'self'/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    expect(page.headers.get('cache-control')).toBe('no-store');
    for (const secret of [KEY_A, KEY_B, tenantA, tenantB, 'gamma', 'alpha', 'beta']) expect(page.text).not.toContain(secret);
    // Self-contained: nothing is loaded from anywhere.
    expect(page.text).not.toMatch(/\bsrc=|https?:\/\//);
    // The chat endpoints are the same with the page on.
    expect((await get(withUi, '/v1/ctxfold/chats')).status).toBe(401);
    expect(JSON.parse((await get(withUi, '/v1/ctxfold/chats', as(KEY_A))).text).data.map((c: { id: string }) => c.id)).toEqual(['gamma']);
  });
});

describe('when the proxy holds the upstream key', () => {
  test('the tenant header names the tenant without a key, as on the request path; nothing at all is a 401', async () => {
    const held = await startServer({ upstream: upstream.baseURL, port: 0, store: 'memory', upstreamKey: 'sk-proxy-held', logLevel: 'silent' });
    try {
      for (const [team, chat] of [['team-1', 'one'], ['team-2', 'two']]) {
        const res = await fetch(`${held.url}/v1/chat/completions`, {
          method: 'POST', headers: { 'content-type': 'application/json', 'x-ctxfold-tenant': team, 'x-ctxfold-chat-id': chat },
          body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: `hi from ${team}` }] }),
        });
        await res.text();
      }
      const one = await get(held, '/v1/ctxfold/chats', { 'x-ctxfold-tenant': 'team-1' });
      expect(JSON.parse(one.text).data.map((c: { id: string }) => c.id)).toEqual(['one']);
      expect((await get(held, chatPath('two'), { 'x-ctxfold-tenant': 'team-1' })).status).toBe(404);
      expect((await get(held, chatPath('two'), { 'x-ctxfold-tenant': 'team-2' })).status).toBe(200);
      expect((await get(held, '/v1/ctxfold/chats')).status).toBe(401);
      expect(one.text).not.toContain('sk-proxy-held');
    } finally {
      await held.close();
    }
  });
});

describe('job state', () => {
  test('a job whose work runs is running; one waiting for the only slot is queued', async () => {
    const summarizer = scriptedSummarizer();
    summarizer.script.push('hang', 'hang');
    const busy = await startServer({ upstream: upstream.baseURL, port: 0, store: 'memory', maxContextTokens: 2_500, keepLast: 4, summarizer, concurrency: 1, shutdownGraceMs: 0, logLevel: 'silent' });
    try {
      await send(busy, KEY_A, 'first', generateConversation({ messages: 100, seed: 34 }));
      await send(busy, KEY_A, 'second', generateConversation({ messages: 100, seed: 35 }));
      const stateOf = async (id: string) => (JSON.parse((await get(busy, chatPath(id), as(KEY_A))).text) as ChatAnswer).job.state;
      // The first job's work has started once its summarizer is called (it then hangs until aborted).
      while (summarizer.calls === 0) await new Promise((r) => setTimeout(r, 10));
      expect(await stateOf('first')).toBe('running');
      expect(await stateOf('second')).toBe('queued');
      const list = JSON.parse((await get(busy, '/v1/ctxfold/chats', as(KEY_A))).text) as { data: { id: string; job: string }[] };
      expect(Object.fromEntries(list.data.map((c) => [c.id, c.job]))).toEqual({ first: 'running', second: 'queued' });
    } finally {
      await busy.close();
    }
  });

  test('a failed summary job shows its error code until a later one commits', async () => {
    const summarizer = scriptedSummarizer();
    summarizer.script.push('empty');
    const failing = await startServer({ upstream: upstream.baseURL, port: 0, store: 'memory', maxContextTokens: 2_500, keepLast: 4, summarizer, logLevel: 'silent' });
    try {
      const history = generateConversation({ messages: 100, seed: 33 });
      await send(failing, KEY_A, 'failing', history);
      await failing.drain();
      const chat = JSON.parse((await get(failing, chatPath('failing'), as(KEY_A))).text) as ChatAnswer;
      expect(chat.summary).toBeNull();
      expect(chat.job.state).toBe('idle');
      expect(chat.job.lastError?.code).toMatch(/^CTXFOLD_/);
      await send(failing, KEY_A, 'failing', history);
      await failing.drain();
      const after = JSON.parse((await get(failing, chatPath('failing'), as(KEY_A))).text) as ChatAnswer;
      expect(after.summary?.version).toBe(1);
      expect(after.job.lastError).toBeNull();
    } finally {
      await failing.close();
    }
  });
});
