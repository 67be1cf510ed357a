import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MemoryStore } from '../src/store/memory-store.js';
import { DatabaseSync, type Database } from '../src/store/node-sqlite.js';
import { SQLITE_SCHEMA_VERSION, SqliteStore } from '../src/store/sqlite-store.js';
import type { ChatState, StateStore } from '../src/store/state.js';
import { stateOf, stateStoreContract } from './helpers/store-contract.js';
import { chatListContract } from './helpers/chat-list-contract.js';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
let dir: string;
const opened: StateStore[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ctxfold-store-'));
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

function track<S extends StateStore>(store: S): S {
  opened.push(store);
  return store;
}

/** The value of a one-column PRAGMA (`user_version`, `journal_mode`) on a raw connection. */
const pragma = (db: Database, name: string): unknown => Object.values(db.prepare(`PRAGMA ${name}`).get() ?? {})[0];


const stores: [string, () => StateStore][] = [
  ['MemoryStore', () => new MemoryStore()],
  ['SqliteStore', () => SqliteStore.open(join(dir, 'state.db'))],
];

describe.each(stores)('%s: StateStore contract', (_name, make) => {
  stateStoreContract(() => track(make()));
});

const listers: [string, () => MemoryStore | SqliteStore][] = [
  ['MemoryStore', () => new MemoryStore()],
  ['SqliteStore', () => SqliteStore.open(join(dir, 'state.db'))],
];

describe.each(listers)('%s: listing chats by prefix', (_name, make) => {
  chatListContract(() => track(make()));
});

describe('MemoryStore and SqliteStore agree', () => {
  type Op = { kind: 'commit'; chat: string; expected: number; bump: number } | { kind: 'delete'; chat: string } | { kind: 'get'; chat: string };
  const op: fc.Arbitrary<Op> = fc.oneof(
    { arbitrary: fc.record({ kind: fc.constant('commit' as const), chat: fc.constantFrom('a', 'b'), expected: fc.nat(4), bump: fc.constantFrom(1, 1, 1, 0, 2) }), weight: 6 },
    { arbitrary: fc.record({ kind: fc.constant('delete' as const), chat: fc.constantFrom('a', 'b') }), weight: 1 },
    { arbitrary: fc.record({ kind: fc.constant('get' as const), chat: fc.constantFrom('a', 'b') }), weight: 2 },
  );

  /** Outcome of one operation as plain data: `true`/`false`, a state, or the error message. */
  async function run(store: StateStore, o: Op): Promise<unknown> {
    try {
      if (o.kind === 'delete') return await store.delete(o.chat);
      if (o.kind === 'get') return await store.get(o.chat);
      return await store.commit(stateOf(o.chat, o.expected + o.bump), o.expected);
    } catch (error) {
      return `error: ${(error as Error).message}`;
    }
  }

  test('any sequence of commits, deletes and gets gives the same results on both (and matches a version counter)', async () => {
    const sqlite = track(SqliteStore.open(join(dir, 'model.db')));
    let round = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 30, size: 'max' }), async (ops) => {
        const memory = new MemoryStore();
        const prefix = `r${round++}-`;
        const versions = new Map<string, number>();
        for (const o of ops) {
          const scoped = { ...o, chat: prefix + o.chat };
          const [m, s] = [await run(memory, scoped), await run(sqlite, scoped)];
          expect(s).toEqual(m);
          if (o.kind === 'commit') {
            const current = versions.get(o.chat) ?? 0;
            const wins = o.bump === 1 && o.expected === current;
            if (o.bump === 1) expect(m).toBe(wins);
            else expect(String(m)).toMatch(/state\.version: must be expectedVersion \+ 1/);
            if (wins) versions.set(o.chat, current + 1);
          }
          if (o.kind === 'delete') versions.delete(o.chat);
          if (o.kind === 'get') expect((m as ChatState | undefined)?.version ?? 0).toBe(versions.get(o.chat) ?? 0);
        }
        await memory.close();
      }),
      { seed: 20240611, numRuns: 150 },
    );
  });
});

describe('SqliteStore on a real file', () => {
  const file = () => join(dir, 'chats.db');

  test('data survives close and reopen of the same file', async () => {
    const first = SqliteStore.open(file());
    expect(await first.commit(stateOf('a', 1), 0)).toBe(true);
    expect(await first.commit(stateOf('a', 2), 1)).toBe(true);
    expect(await first.commit(stateOf('b', 1), 0)).toBe(true);
    await first.close();

    const second = track(SqliteStore.open(file()));
    expect(await second.get('a')).toEqual(stateOf('a', 2));
    expect(await second.get('b')).toEqual(stateOf('b', 1));
    expect(await second.commit(stateOf('a', 2, { summary: 'stale' }), 1)).toBe(false);
    expect(await second.commit(stateOf('a', 3), 2)).toBe(true);
  });

  test('open creates missing directories, sets WAL and the schema version, with the specified columns', async () => {
    const nested = join(dir, 'x', 'y', 'z', 'state.db');
    const store = SqliteStore.open(nested);
    expect(await store.commit(stateOf('a', 1), 0)).toBe(true);
    await store.close();
    expect(existsSync(nested)).toBe(true);

    const raw = new DatabaseSync(nested, { readOnly: true });
    try {
      expect(pragma(raw, 'journal_mode')).toBe('wal');
      expect(pragma(raw, 'user_version')).toBe(SQLITE_SCHEMA_VERSION);
      const columns = raw.prepare('PRAGMA table_info(chat_state)').all() as { name: string; type: string; notnull: number; pk: number }[];
      // STRICT table: the primary key is NOT NULL too (a plain SQLite table would allow a NULL key).
      expect(columns.map((c) => `${c.name} ${c.type}${c.notnull ? ' NOT NULL' : ''}${c.pk ? ' PK' : ''}`)).toEqual([
        'chat_id TEXT NOT NULL PK', 'version INTEGER NOT NULL', 'summary TEXT NOT NULL', 'covered_ids TEXT NOT NULL',
        'summarizer TEXT NOT NULL', 'model TEXT',
        'tokens_before INTEGER NOT NULL', 'tokens_after INTEGER NOT NULL', 'created_at TEXT NOT NULL', 'updated_at TEXT NOT NULL',
        'compact_tokens INTEGER',
      ]);
      const row = raw.prepare('SELECT covered_ids, model FROM chat_state WHERE chat_id = ?').get('a') as { covered_ids: string; model: string };
      expect(JSON.parse(row.covered_ids)).toEqual(stateOf('a', 1).coveredIds);
      expect(row.model).toBe('model-1');
    } finally {
      raw.close();
    }
  });

  test('a file from a newer schema is refused with a clear error and left untouched', async () => {
    const store = SqliteStore.open(file());
    expect(await store.commit(stateOf('a', 1), 0)).toBe(true);
    await store.close();
    const raw = new DatabaseSync(file());
    raw.exec(`PRAGMA user_version = ${SQLITE_SCHEMA_VERSION + 1}`);
    raw.close();
    const bytes = readFileSync(file());
    expect(() => SqliteStore.open(file())).toThrow(new RegExp(`schema version ${SQLITE_SCHEMA_VERSION + 1} is newer than this ctxfold supports`));
    expect(readFileSync(file()).equals(bytes)).toBe(true);
  });

  test('a file written by schema 1 (with covered_hash and head_length) is migrated and its states read back', async () => {
    const raw = new DatabaseSync(file());
    raw.exec(`CREATE TABLE chat_state (chat_id TEXT PRIMARY KEY, version INTEGER NOT NULL, summary TEXT NOT NULL,
      covered_ids TEXT NOT NULL, covered_hash TEXT NOT NULL, head_length INTEGER NOT NULL, summarizer TEXT NOT NULL,
      model TEXT, tokens_before INTEGER NOT NULL, tokens_after INTEGER NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL) STRICT`);
    const old = stateOf('old', 3);
    raw.prepare(`INSERT INTO chat_state VALUES (?, ?, ?, ?, 'deadbeef', 1, ?, ?, ?, ?, ?, ?)`).run(
      old.chatId, old.version, old.summary, JSON.stringify(old.coveredIds), old.summarizer, old.model ?? null, old.tokensBefore, old.tokensAfter, old.createdAt, old.updatedAt,
    );
    raw.exec('PRAGMA user_version = 1');
    raw.close();
    const store = track(SqliteStore.open(file()));
    expect(await store.get('old')).toEqual(old);
    expect(await store.commit(stateOf('old', 4), 3)).toBe(true);
    const check = new DatabaseSync(file(), { readOnly: true });
    const columns = (check.prepare('PRAGMA table_info(chat_state)').all() as { name: string }[]).map((c) => c.name);
    expect(pragma(check, 'user_version')).toBe(SQLITE_SCHEMA_VERSION);
    check.close();
    expect(columns).not.toContain('covered_hash');
    expect(columns).not.toContain('head_length');
  });

  test('a file written in schema 3 by the better-sqlite3 versions is migrated to 4 (one column added): states, originals and their FTS5 index read back', async () => {
    expect(SQLITE_SCHEMA_VERSION).toBe(4);
    const raw = new DatabaseSync(file());
    raw.exec('PRAGMA journal_mode = WAL');
    raw.exec(readFileSync(join(fixtures, 'sqlite-schema-3.sql'), 'utf8'));
    // The rows as that version's statements wrote them.
    const kept = stateOf('kept', 2);
    raw.prepare(`INSERT INTO chat_state (chat_id, version, summary, covered_ids, summarizer, model, tokens_before, tokens_after, created_at, updated_at)
      VALUES (@chat_id, @version, @summary, @covered_ids, @summarizer, @model, @tokens_before, @tokens_after, @created_at, @updated_at)`).run({
      chat_id: kept.chatId, version: kept.version, summary: kept.summary, covered_ids: JSON.stringify(kept.coveredIds), summarizer: kept.summarizer,
      model: kept.model ?? null, tokens_before: kept.tokensBefore, tokens_after: kept.tokensAfter, created_at: kept.createdAt, updated_at: kept.updatedAt,
    });
    const originals = [
      { id: 'm1', index: 1, role: 'user' as const, text: 'The invoice INV-2291 was sent to Zoë in Zürich', raw: '{"role":"user","content":"The invoice INV-2291 was sent to Zoë in Zürich"}' },
      { id: 'm2', index: 2, role: 'assistant' as const, text: 'Noted: the shipment leaves on Tuesday', raw: '{"role":"assistant","content":"Noted: the shipment leaves on Tuesday"}' },
    ];
    const insert = raw.prepare('INSERT INTO originals (chat_id, message_id, position, role, text, raw) VALUES (?, ?, ?, ?, ?, ?)');
    for (const r of originals) insert.run('kept', r.id, r.index, r.role, r.text, r.raw);
    // Compared with white space collapsed: the fixture is indented differently from the source it was copied from.
    const schemaOf = (db: Database) => db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name").all()
      .map((r) => ({ ...r, sql: typeof r.sql === 'string' ? r.sql.replace(/\s+/g, ' ') : r.sql }));
    const before = schemaOf(raw);
    raw.close();

    const store = track(SqliteStore.open(file()));
    expect(await store.get('kept')).toEqual(kept);
    expect(await store.getOriginals('kept', ['m2', 'm1'])).toEqual([originals[1], originals[0]]);
    expect((await store.searchOriginals('kept', 'zoe zurich', 5)).map((r) => r.id)).toEqual(['m1']);
    expect((await store.searchOriginals('kept', 'inv-2291', 5)).map((r) => r.id)).toEqual(['m1']);
    expect(await store.commit(stateOf('kept', 3), 2)).toBe(true);
    await store.putOriginals('kept', [{ id: 'm3', index: 3, role: 'user', text: 'Tuesday works for me', raw: '{}' }]);
    expect((await store.searchOriginals('kept', 'tuesday', 5)).map((r) => r.id).sort()).toEqual(['m2', 'm3']);

    // The same schema as a file this version creates: schema 3 plus the compact_tokens column.
    const fresh = join(dir, 'fresh.db');
    await track(SqliteStore.open(fresh)).close();
    const [a, b] = [new DatabaseSync(file(), { readOnly: true }), new DatabaseSync(fresh, { readOnly: true })];
    try {
      const nameOf = (r: object) => (r as { name?: unknown }).name;
      const withColumn = before.map((r) => (nameOf(r) === 'chat_state' && typeof r.sql === 'string' ? { ...r, sql: r.sql.replace(/\) STRICT$/, ', compact_tokens INTEGER) STRICT') } : r));
      expect(schemaOf(a)).toEqual(withColumn);
      expect(schemaOf(b).map(nameOf)).toEqual(withColumn.map(nameOf));
      expect((b.prepare('PRAGMA table_info(chat_state)').all() as { name: string }[]).map((c) => c.name)).toContain('compact_tokens');
      expect([pragma(a, 'user_version'), pragma(b, 'user_version')]).toEqual([4, 4]);
    } finally {
      a.close();
      b.close();
    }
  });

  test('text with a NUL character reads back whole, in states and in originals (Node 22 cuts text at NUL unless read as bytes)', async () => {
    const store = track(SqliteStore.open(file()));
    const text = 'before\u0000after é 🧵';
    expect(await store.commit(stateOf('n\u0000ul', 1, { summary: text, summarizer: `x${text}`, model: text }), 0)).toBe(true);
    expect(await store.get('n\u0000ul')).toEqual(stateOf('n\u0000ul', 1, { summary: text, summarizer: `x${text}`, model: text }));
    const original = { id: `id${text}`, index: 0, role: 'user' as const, text, raw: JSON.stringify({ content: text }) };
    await store.putOriginals('c', [original]);
    expect(await store.getOriginals('c', [original.id])).toEqual([original]);
    expect(await store.searchOriginals('c', 'after', 1)).toEqual([original]);
  });

  test('two stores on the same file see each other\'s commits, and compare-and-set holds between them', async () => {
    const a = track(SqliteStore.open(file()));
    const b = track(SqliteStore.open(file()));
    expect(await a.commit(stateOf('c', 1), 0)).toBe(true);
    expect(await b.get('c')).toEqual(stateOf('c', 1));
    // Both read version 1 and race: the second writer loses, whichever store it is.
    expect(await b.commit(stateOf('c', 2, { summary: 'from b' }), 1)).toBe(true);
    expect(await a.commit(stateOf('c', 2, { summary: 'from a' }), 1)).toBe(false);
    expect((await a.get('c'))?.summary).toBe('from b');
    expect(await a.commit(stateOf('c', 3), 2)).toBe(true);
    expect(await b.commit(stateOf('c', 1), 0)).toBe(false);
    expect((await b.get('c'))?.version).toBe(3);
    await b.delete('c');
    await expect(a.get('c')).resolves.toBeUndefined();
  });

  test('a write waits busyTimeoutMs for another connection\'s lock, then fails; it succeeds once the lock is gone', async () => {
    const store = track(SqliteStore.open(file(), { busyTimeoutMs: 100 }));
    const raw = new DatabaseSync(file());
    try {
      raw.exec('BEGIN IMMEDIATE');
      const started = performance.now();
      await expect(store.commit(stateOf('a', 1), 0)).rejects.toThrow(/commit\(chat "a", version 1\): database is locked \(SQLITE_BUSY\): another connection held the write lock longer than busyTimeoutMs \(100 ms\)/);
      expect(performance.now() - started).toBeGreaterThanOrEqual(90);
      raw.exec('ROLLBACK');
    } finally {
      raw.close();
    }
    expect(await store.commit(stateOf('a', 1), 0)).toBe(true);
    expect(() => SqliteStore.open(file(), { busyTimeoutMs: -5 })).toThrow(/options\.busyTimeoutMs/);
  });

  test('a corrupt covered_ids makes get throw naming the chat and column; other chats still read', async () => {
    const store = track(SqliteStore.open(file()));
    expect(await store.commit(stateOf('broken', 1), 0)).toBe(true);
    expect(await store.commit(stateOf('fine', 1), 0)).toBe(true);
    const raw = new DatabaseSync(file());
    const corrupt = raw.prepare('UPDATE chat_state SET covered_ids = ? WHERE chat_id = ?');
    try {
      corrupt.run('["id-1", "id-2"', 'broken');
      await expect(store.get('broken')).rejects.toThrow(/chat "broken", column covered_ids: not valid JSON/);
      corrupt.run('{"ids": ["id-1"]}', 'broken');
      await expect(store.get('broken')).rejects.toThrow(/chat "broken", column covered_ids: expected a JSON array of strings/);
      corrupt.run('["id-1", 2]', 'broken');
      await expect(store.get('broken')).rejects.toThrow(/chat "broken", column covered_ids/);
    } finally {
      raw.close();
    }
    expect(await store.get('fine')).toEqual(stateOf('fine', 1));
    await store.delete('broken');
    expect(await store.commit(stateOf('broken', 1), 0)).toBe(true);
    expect(await store.get('broken')).toEqual(stateOf('broken', 1));
  });
});
