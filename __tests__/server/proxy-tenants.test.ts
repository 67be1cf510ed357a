import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { generateConversation } from '../../bench/fixtures/conversation.js';
import { startServer, type RunningServer } from '../../src/server/index.js';
import { DEFAULT_TENANT_HEADER, scopedChatId, tenantOf } from '../../src/server/tenant.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { ChatState, StateStore } from '../../src/store/state.js';
import { json, startUpstream, type StandInUpstream } from '../helpers/upstream-server.js';

/**
 * Tenants: chat state is keyed by a hash of the caller's API key (or, when the proxy holds the
 * upstream key, by the tenant header), so no chat id a tenant chooses reaches another tenant's
 * state; and the key goes upstream and nowhere else (not in a log line, not in the store).
 */

/** A memory store that records every key read or written, and can list what it holds. */
class RecordingStore implements StateStore {
  readonly inner = new MemoryStore();
  readonly read: string[] = [];
  readonly written: ChatState[] = [];
  readonly #keys = new Set<string>();
  async get(chatId: string) {
    this.read.push(chatId);
    return this.inner.get(chatId);
  }
  async commit(state: ChatState, expectedVersion: number) {
    const ok = await this.inner.commit(state, expectedVersion);
    if (ok) {
      this.written.push(state);
      this.#keys.add(state.chatId);
    }
    return ok;
  }
  async delete(chatId: string) {
    this.#keys.delete(chatId);
    return this.inner.delete(chatId);
  }
  async close() {
    return this.inner.close();
  }
  /** Every stored state, now. */
  async all(): Promise<ChatState[]> {
    const out: ChatState[] = [];
    for (const key of this.#keys) {
      const s = await this.inner.get(key);
      if (s) out.push(s);
    }
    return out;
  }
}

const KEY_A = 'sk-tenant-a-0123456789abcdef';
const KEY_B = 'sk-tenant-b-fedcba9876543210';
const rule = { proxyHoldsKey: false, tenantHeader: DEFAULT_TENANT_HEADER };
const tenantA = tenantOf({ authorization: `Bearer ${KEY_A}` }, rule);
const tenantB = tenantOf({ authorization: `Bearer ${KEY_B}` }, rule);

let upstream: StandInUpstream;
let proxy: RunningServer;
let store: RecordingStore;
const logs: string[] = [];

beforeAll(async () => {
  upstream = await startUpstream((q, res) => json(res, 200, {
    id: 'c', object: 'chat.completion', model: q.body?.model ?? 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 100, completion_tokens: 1, total_tokens: 101 },
  }));
  store = new RecordingStore();
  proxy = await startServer({
    upstream: upstream.baseURL, port: 0, store, maxContextTokens: 2_500, keepLast: 4,
    logLevel: 'trace', logDestination: { write: (line: string) => logs.push(line) },
  });
});
afterAll(async () => {
  await proxy.close();
  await upstream.close();
});

const send = (key: string, messages: unknown[], headers: Record<string, string> = {}, extra: Record<string, unknown> = {}) =>
  fetch(`${proxy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
    body: JSON.stringify({ model: 'tenant-model', messages, ...extra }),
  });

/** A long history that opens like every other here (same system prompt, then "hi"), then goes its own way. */
function opensWithHi(seed: number): unknown[] {
  const [system, ...rest] = generateConversation({ messages: 90, seed });
  return [system.role === 'system' ? { role: 'system', content: 'You are a helpful assistant.' } : system, { role: 'user', content: 'hi' }, ...rest.slice(1)];
}

describe('tenant isolation', () => {
  test('the same opening (same system prompt, then "hi", even the same whole history) under two keys is two chats, one per tenant', async () => {
    const history = opensWithHi(1);
    const firstReads = store.read.length;
    await send(KEY_A, history);
    await send(KEY_B, history);
    await proxy.drain();
    const states = await store.all();
    const a = states.filter((s) => s.chatId.startsWith(`${tenantA}:fp:`));
    const b = states.filter((s) => s.chatId.startsWith(`${tenantB}:fp:`));
    expect(a).toHaveLength(1);
    expect(b).toHaveLength(1);
    // The fingerprint of the opening is the same; only the tenant keeps the two apart.
    expect(a[0].chatId.slice(tenantA.length)).toBe(b[0].chatId.slice(tenantB.length));
    expect(a[0].version).toBe(1);
    expect(b[0].version).toBe(1);
    expect(new Set(store.read.slice(firstReads)).size).toBe(2);
  });

  test('tenant B naming A\'s chat id (or A\'s whole store key) never reads, overwrites or triggers A\'s state', async () => {
    const historyA = generateConversation({ messages: 100, seed: 21 });
    await send(KEY_A, historyA, { 'x-ctxfold-chat-id': 'shared' });
    await proxy.drain();
    const keyA = scopedChatId(tenantA, 'shared');
    const stateA = await store.inner.get(keyA);
    expect(stateA?.version).toBe(1);
    const readsBefore = store.read.length;
    const writtenBefore = store.written.length;

    // B sends its own long history under every id that could reach A's state.
    const historyB = generateConversation({ messages: 100, seed: 22 });
    for (const id of ['shared', keyA, `${tenantA}:shared`, `../${keyA}`]) {
      const at = upstream.requests.length;
      await send(KEY_B, historyB, { 'x-ctxfold-chat-id': id });
      await send(KEY_B, historyB, {}, { metadata: { chat_id: id } });
      await send(KEY_B, historyB, {}, { user: id });
      // A's summary text never reaches B's upstream requests.
      for (const r of upstream.requests.slice(at)) expect(r.rawBody).not.toContain(JSON.stringify(stateA!.summary).slice(1, -1));
    }
    await proxy.drain();
    expect(await store.inner.get(keyA)).toEqual(stateA);
    const readsByB = store.read.slice(readsBefore);
    expect(readsByB.length).toBeGreaterThan(0);
    expect(readsByB.every((k) => k.startsWith(`${tenantB}:`))).toBe(true);
    const writesByB = store.written.slice(writtenBefore);
    expect(writesByB.length).toBeGreaterThan(0);
    expect(writesByB.every((s) => s.chatId.startsWith(`${tenantB}:`))).toBe(true);
  });

  test('when the proxy holds the upstream key, the tenant header separates tenants and the callers\' own keys are not sent upstream', async () => {
    const env = await startServer({ upstream: upstream.baseURL, port: 0, store: 'memory', upstreamKey: 'sk-proxy-held', maxContextTokens: 2_500, logLevel: 'silent' });
    try {
      const body = JSON.stringify({ model: 'tenant-model', messages: [{ role: 'user', content: 'hi' }] });
      await fetch(`${env.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-ctxfold-tenant': 'team-1', authorization: 'Bearer sk-caller' }, body });
      const seen = upstream.requests.at(-1)!;
      expect(seen.headers.authorization).toBe('Bearer sk-proxy-held');
      expect(seen.headers['x-ctxfold-tenant']).toBeUndefined();
      await fetch(`${env.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'sk-caller' }, body: JSON.stringify({ model: 'claude-x', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }) });
      expect(upstream.requests.at(-1)!.headers['x-api-key']).toBe('sk-proxy-held');
      expect(upstream.requests.at(-1)!.headers.authorization).toBeUndefined();
    } finally {
      await env.close();
    }
    const held = { proxyHoldsKey: true, tenantHeader: DEFAULT_TENANT_HEADER };
    expect(tenantOf({ 'x-ctxfold-tenant': 'team-1' }, held)).not.toBe(tenantOf({ 'x-ctxfold-tenant': 'team-2' }, held));
    expect(tenantOf({ 'x-ctxfold-tenant': 'team-1', authorization: 'Bearer x' }, held)).toBe(tenantOf({ 'x-ctxfold-tenant': 'team-1', authorization: 'Bearer y' }, held));
    // Without the proxy holding the key, the header only splits a key's tenant: it never reaches another key's.
    expect(tenantOf({ 'x-ctxfold-tenant': 'team-1', authorization: `Bearer ${KEY_A}` }, rule)).not.toBe(tenantOf({ 'x-ctxfold-tenant': 'team-1', authorization: `Bearer ${KEY_B}` }, rule));
    expect(tenantOf({ 'x-ctxfold-tenant': 'team-1', authorization: `Bearer ${KEY_A}` }, rule)).not.toBe(tenantA);
  });
});

describe('the API key', () => {
  test('is forwarded upstream and appears in no log line and no stored state, whatever happened to the request', async () => {
    const xKey = 'sk-ant-never-logged-42';
    upstream.handle((q, res) => {
      if (q.body?.model === 'fail-401') return json(res, 401, { error: { message: `Incorrect API key provided: ${KEY_A}`, type: 'invalid_request_error', code: 'invalid_api_key' } });
      return json(res, 200, { id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }] });
    });
    await send(KEY_A, generateConversation({ messages: 100, seed: 31 }), { 'x-ctxfold-chat-id': 'logged' });
    await send(KEY_A, [{ role: 'user', content: 'hi' }], {}, { model: 'fail-401' });
    await send(KEY_A, [{ role: 'user', content: 'hi' }], {}, { max_tokens: 10_000 });
    await fetch(`${proxy.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${KEY_A}` }, body: '{not json' });
    await fetch(`${proxy.url}/v1/nowhere`, { method: 'POST', headers: { authorization: `Bearer ${KEY_A}` } });
    await fetch(`${proxy.url}/v1/models`, { headers: { authorization: `Bearer ${KEY_A}` } });
    await fetch(`${proxy.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': xKey }, body: JSON.stringify({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] }) });
    await proxy.drain();
    expect(upstream.requests.some((r) => r.headers.authorization === `Bearer ${KEY_A}`)).toBe(true);
    expect(upstream.requests.some((r) => r.headers['x-api-key'] === xKey)).toBe(true);
    expect(logs.length).toBeGreaterThan(8);
    const all = logs.join('\n');
    for (const secret of [KEY_A, KEY_B, xKey, KEY_A.slice(3, 20)]) expect(all).not.toContain(secret);
    const stored = JSON.stringify(await store.all());
    for (const secret of [KEY_A, KEY_B, xKey]) expect(stored).not.toContain(secret);
    // The log lines name the tenant by its hash.
    expect(all).toContain(tenantA);
  });
});
