import { afterEach, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from '../../src/store/node-sqlite.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { hasOriginals, type OriginalRecord } from '../../src/store/originals.js';
import { InputError } from '../../src/errors.js';
import { substringSearchContract } from '../helpers/originals-contract.js';

/** A record whose text holds `words`; its JSON is the message it stands for. */
const record = (id: string, index: number, text: string, role: OriginalRecord['role'] = 'user'): OriginalRecord => ({
  id, index, role, text, raw: JSON.stringify({ role, content: text }),
});

const ids = (records: readonly OriginalRecord[]) => records.map((r) => r.id);

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const dbFile = () => {
  const dir = mkdtempSync(join(tmpdir(), 'ctxfold-recall-'));
  dirs.push(dir);
  return join(dir, 'state.db');
};

describe('hasOriginals', () => {
  test('true for both stores, false for a store without the three methods or for anything else', async () => {
    const memory = new MemoryStore();
    const sqlite = SqliteStore.open(':memory:');
    expect(hasOriginals(memory)).toBe(true);
    expect(hasOriginals(sqlite)).toBe(true);
    expect(hasOriginals({ get: async () => undefined, commit: async () => true, delete: async () => {}, close: async () => {} })).toBe(false);
    expect(hasOriginals({ putOriginals() {}, getOriginals() {} })).toBe(false);
    for (const v of [null, undefined, 3, 'store', []]) expect(hasOriginals(v)).toBe(false);
    await memory.close();
    await sqlite.close();
  });
});

describe('MemoryStore originals', () => {
  test('get returns records in the order asked, skips unknown ids, and keeps copies', async () => {
    const store = new MemoryStore();
    const given = [record('a', 1, 'first'), record('b', 2, 'second'), record('c', 3, 'third')];
    await store.putOriginals('chat', given);
    (given[0] as { text: string }).text = 'changed after put';
    const got = await store.getOriginals('chat', ['c', 'zz', 'a']);
    expect(ids(got)).toEqual(['c', 'a']);
    expect(got[1].text).toBe('first');
    expect(await store.getOriginals('other chat', ['a'])).toEqual([]);
  });

  test('the record bound evicts the chat written longest ago first; rewriting a chat makes it the newest', async () => {
    const store = new MemoryStore({ originals: { maxRecords: 10 } });
    const batch = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => record(`${prefix}${i}`, i, `${prefix} text ${i}`));
    await store.putOriginals('one', batch('a', 4));
    await store.putOriginals('two', batch('b', 4));
    await store.putOriginals('one', batch('a', 1)); // one is now the newest
    await store.putOriginals('three', batch('c', 4)); // 12 records: the oldest chat (two) goes
    expect(store.originalsSize()).toEqual({ records: 8, bytes: expect.any(Number), chats: 2 });
    expect(await store.getOriginals('two', ['b0'])).toEqual([]);
    expect(ids(await store.getOriginals('one', ['a0', 'a3']))).toEqual(['a0', 'a3']);
    expect(ids(await store.getOriginals('three', ['c0']))).toEqual(['c0']);
  });

  test('a chat alone over the bound loses its oldest records; the byte bound holds too', async () => {
    const store = new MemoryStore({ originals: { maxRecords: 3 } });
    await store.putOriginals('solo', Array.from({ length: 5 }, (_, i) => record(`m${i}`, i, `text ${i}`)));
    expect(ids(await store.getOriginals('solo', ['m0', 'm1', 'm2', 'm3', 'm4']))).toEqual(['m2', 'm3', 'm4']);

    const small = new MemoryStore({ originals: { maxBytes: 20_000 } });
    for (let c = 0; c < 10; c++) await small.putOriginals(`chat${c}`, [record(`x${c}`, 0, 'y'.repeat(3_000))]);
    const size = small.originalsSize();
    expect(size.bytes).toBeLessThanOrEqual(20_000);
    expect(size.chats).toBeGreaterThan(0);
    expect(ids(await small.getOriginals('chat9', ['x9']))).toEqual(['x9']);
    expect(await small.getOriginals('chat0', ['x0'])).toEqual([]);
  });

  test('bad bounds are an InputError naming the option', () => {
    expect(() => new MemoryStore({ originals: { maxRecords: 0 } })).toThrow(InputError);
    expect(() => new MemoryStore({ originals: { maxBytes: 1.5 } })).toThrow(/options\.originals\.maxBytes/);
  });

  substringSearchContract(async () => new MemoryStore());

  test('delete removes a chat\'s originals; a closed store rejects', async () => {
    const store = new MemoryStore();
    await store.putOriginals('chat', [record('a', 1, 'x')]);
    await store.delete('chat');
    expect(await store.getOriginals('chat', ['a'])).toEqual([]);
    await store.close();
    await expect(store.getOriginals('chat', ['a'])).rejects.toThrow(/closed/);
  });
});

describe('SqliteStore originals (a real file)', () => {
  const records = [
    record('1:aaaa', 1, 'Please check the lighthouse schedule for case INV-20931.'),
    record('2:bbbb', 2, '-> call lookup({"case":"INV-20931"}) [id call_1]', 'assistant'),
    record('3:cccc', 3, 'The harbour crane is out of service until Friday.'),
    record('4:dddd', 4, '检查 灯塔 的 时间表', 'user'),
  ];

  test('the schema gains the originals table and its FTS5 index', () => {
    const path = dbFile();
    const store = SqliteStore.open(path);
    void store.close();
    const raw = new DatabaseSync(path, { readOnly: true });
    const names = (raw.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger') ORDER BY name").all() as { name: string }[]).map((r) => r.name);
    raw.close();
    expect(names).toEqual(expect.arrayContaining(['chat_state', 'originals', 'originals_fts', 'originals_ai', 'originals_ad', 'originals_au']));
  });

  test('search ranks by bm25 and finds by a word and by an identifier; ids come back in the order asked', async () => {
    const store = SqliteStore.open(dbFile());
    await store.putOriginals('chat', records);
    await store.putOriginals('other', [record('9:zzzz', 1, 'lighthouse elsewhere')]);
    expect(ids(await store.searchOriginals('chat', 'INV-20931', 10)).sort()).toEqual(['1:aaaa', '2:bbbb']);
    expect(ids(await store.searchOriginals('chat', 'crane', 10))).toEqual(['3:cccc']);
    expect(ids(await store.searchOriginals('chat', 'lighthouse crane', 1))).toHaveLength(1);
    expect(ids(await store.searchOriginals('chat', '灯塔', 10))).toEqual(['4:dddd']);
    expect(ids(await store.getOriginals('chat', ['3:cccc', 'nope', '1:aaaa']))).toEqual(['3:cccc', '1:aaaa']);
    await store.close();
  });

  test('FTS syntax in a query is read as words, never as an error', async () => {
    const store = SqliteStore.open(dbFile());
    await store.putOriginals('chat', records);
    for (const q of ['"unbalanced', 'crane AND OR NOT', 'crane*', '(crane', 'NEAR(crane harbour)', 'text:crane', '^crane', '', '"""', '-crane']) {
      const found = await store.searchOriginals('chat', q, 5);
      expect([q, Array.isArray(found)]).toEqual([q, true]);
    }
    expect(ids(await store.searchOriginals('chat', '(crane*', 5))).toEqual(['3:cccc']);
    await store.close();
  });

  test('originals survive a reopen; an upsert keeps one row and its index follows the new text', async () => {
    const path = dbFile();
    const first = SqliteStore.open(path);
    await first.putOriginals('chat', records);
    await first.close();
    const second = SqliteStore.open(path);
    expect((await second.getOriginals('chat', ['1:aaaa']))[0]).toEqual(records[0]);
    expect(ids(await second.searchOriginals('chat', 'crane', 5))).toEqual(['3:cccc']);
    await second.putOriginals('chat', [record('3:cccc', 3, 'The harbour tugboat is ready.')]);
    expect(await second.searchOriginals('chat', 'crane', 5)).toEqual([]);
    expect(ids(await second.searchOriginals('chat', 'tugboat', 5))).toEqual(['3:cccc']);
    await second.delete('chat');
    expect(await second.getOriginals('chat', ['1:aaaa'])).toEqual([]);
    expect(await second.searchOriginals('chat', 'lighthouse', 5)).toEqual([]);
    await second.close();
  });

  test('a file at the previous schema version is migrated and keeps its chat states', async () => {
    const path = dbFile();
    const raw = new DatabaseSync(path);
    raw.exec(`CREATE TABLE chat_state (chat_id TEXT PRIMARY KEY, version INTEGER NOT NULL, summary TEXT NOT NULL, covered_ids TEXT NOT NULL,
      summarizer TEXT NOT NULL, model TEXT, tokens_before INTEGER NOT NULL, tokens_after INTEGER NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL) STRICT`);
    raw.prepare("INSERT INTO chat_state VALUES ('old', 1, 'kept', '[\"1:x\"]', 'extractive', NULL, 10, 2, 't', 't')").run();
    raw.exec('PRAGMA user_version = 2');
    raw.close();
    const store = SqliteStore.open(path);
    expect((await store.get('old'))?.summary).toBe('kept');
    await store.putOriginals('old', [record('1:x', 1, 'an original kept after migration')]);
    expect(ids(await store.searchOriginals('old', 'migration', 3))).toEqual(['1:x']);
    await store.close();
  });
});
