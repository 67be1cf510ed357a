import { afterEach, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveRecall } from '../../src/recall/resolve.js';
import { createCompressor, type ChatRequest, type Compressor } from '../../src/runtime/compressor.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { createTokenCounter } from '../../src/tokens/counter.js';

/**
 * A tool result kept for recall names the call it answers, arguments included: a search for what
 * the call was about (a path, an id) finds the result, which holds what the tool returned, and
 * not only the call, which holds what was asked. Judged on a real SQLite file (FTS5) and on the
 * memory store.
 */
const counter = createTokenCounter();
type Msg = Record<string, unknown>;
type Request = ChatRequest<Msg> & { chatId: string };

const open: Compressor[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close(200)));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A read of a settings file early on, then enough turns that a summary covers it. */
function history(): Msg[] {
  const out: Msg[] = [
    { role: 'system', content: 'You are a careful assistant.' },
    { role: 'user', content: 'Which port does the service listen on?' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_config', arguments: JSON.stringify({ path: '/srv/lantern/app.toml' }) } }] },
    { role: 'tool', tool_call_id: 'call_1', content: JSON.stringify({ listen_port: 8431, owner_team: 'platform-core' }) },
    { role: 'assistant', content: 'It listens on the port the settings name.' },
  ];
  for (let t = 0; t < 30; t++) {
    out.push({ role: 'user', content: `Question ${t}. ${'Some filler words for the question. '.repeat(8)}` });
    out.push({ role: 'assistant', content: `Answer ${t}. ${'Some filler words for the answer. '.repeat(8)}` });
  }
  return out;
}

const STORES: [string, () => SqliteStore | MemoryStore][] = [
  ['a SQLite file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxfold-result-records-'));
    dirs.push(dir);
    return SqliteStore.open(join(dir, 'state.db'));
  }],
  ['the memory store', () => new MemoryStore()],
];

describe.each(STORES)('on %s', (_, makeStore) => {
  test("a search for a call's argument finds its result", async () => {
    const store = makeStore();
    const compressor = createCompressor<Request>({ maxContextTokens: 2000, keepLast: 4, recall: true, counter, store });
    open.push(compressor);
    await compressor.wrap(async () => ({ choices: [{ message: { role: 'assistant', content: 'ok' } }] }))({ chatId: 'w', messages: history() });
    await compressor.drain();
    const state = await store.get('w');
    expect(state?.coveredIds.length).toBeGreaterThan(4);
    const answer = await resolveRecall(store, 'w', { query: 'app.toml' }, { maxTokens: 2000, countTokens: counter.text });
    expect(answer.isError).toBe(false);
    expect(answer.text).toContain('<- result of read_config(path=/srv/lantern/app.toml) [id call_1]: {"listen_port":8431,"owner_team":"platform-core"}');
  });
});
