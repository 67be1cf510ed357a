import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemoryStore } from '../src/store/memory-store.js';
import { SQLITE_SCHEMA_VERSION, SqliteStore } from '../src/store/sqlite-store.js';
import type { ChatState, StateStore } from '../src/store/state.js';

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

/** A state whose every field is set, derived from the chat id and version. */
function stateOf(chatId: string, version: number, extra: Partial<ChatState> = {}): ChatState {
  const coveredIds = Array.from({ length: version * 3 }, (_, i) => `${i}:${chatId}-${version}`);
  return {
    chatId,
    version,
    summary: `summary ${version} of ${chatId}`,
    coveredIds,
    summarizer: 'extractive',
    model: `model-${version}`,
    tokensBefore: 1000 * version,
    tokensAfter: 100 * version,
    createdAt: '2024-01-01T00:00:00.000Z',
    updatedAt: new Date(Date.UTC(2024, 0, 1, 0, version)).toISOString(),
    ...extra,
  };
}

const stores: [string, () => StateStore][] = [
  ['MemoryStore', () => new MemoryStore()],
  ['SqliteStore', () => SqliteStore.open(join(dir, 'state.db'))],
];

describe.each(stores)('%s: StateStore contract', (_name, make) => {
  let store: StateStore;
  beforeEach(() => {
    store = track(make());
  });

  test('get of an unknown chat is undefined', async () => {
    await expect(store.get('nobody')).resolves.toBeUndefined();
  });

  test('the first commit needs expectedVersion 0', async () => {
    // Version 2 expected over 1, but nothing is stored yet: the compare-and-set loses.
    await expect(store.commit(stateOf('a', 2), 1)).resolves.toBe(false);
    await expect(store.get('a')).resolves.toBeUndefined();
    await expect(store.commit(stateOf('a', 1), 0)).resolves.toBe(true);
    expect((await store.get('a'))?.version).toBe(1);
  });

  test('a stale expectedVersion returns false and leaves the stored state unchanged', async () => {
    expect(await store.commit(stateOf('a', 1), 0)).toBe(true);
    expect(await store.commit(stateOf('a', 2), 1)).toBe(true);
    const before = await store.get('a');
    // A job that started from version 1 finishes after version 2 landed.
    expect(await store.commit(stateOf('a', 2, { summary: 'stale job' }), 1)).toBe(false);
    // A job that thought there was no state yet.
    expect(await store.commit(stateOf('a', 1, { summary: 'stale first' }), 0)).toBe(false);
    // A job from the future (expects a version never written).
    expect(await store.commit(stateOf('a', 4, { summary: 'ahead' }), 3)).toBe(false);
    const after = await store.get('a');
    expect(after).toEqual(before);
    expect(after?.summary).toBe('summary 2 of a');
  });

  test('state.version must be expectedVersion + 1, and expectedVersion a whole number >= 0', async () => {
    await expect(store.commit(stateOf('a', 3), 0)).rejects.toThrow(/state\.version: must be expectedVersion \+ 1 = 1, got 3/);
    await expect(store.commit(stateOf('a', 1), 1)).rejects.toThrow(/state\.version/);
    await expect(store.commit(stateOf('a', 0), -1)).rejects.toThrow(/expectedVersion: must be a whole number/);
    await expect(store.commit(stateOf('a', 2), 0.5)).rejects.toThrow(/expectedVersion/);
    await expect(store.get('a')).resolves.toBeUndefined();
    expect(await store.commit(stateOf('a', 1), 0)).toBe(true);
    await expect(store.commit(stateOf('a', 1), 1)).rejects.toThrow(/state\.version: must be expectedVersion \+ 1 = 2, got 1/);
    expect((await store.get('a'))?.version).toBe(1);
  });

  test('malformed fields are rejected naming the field, and nothing is written', async () => {
    const bad = (extra: Record<string, unknown>) => ({ ...stateOf('a', 1), ...extra }) as unknown as ChatState;
    await expect(store.commit(bad({ summary: 42 }), 0)).rejects.toThrow(/state\.summary: must be a string/);
    await expect(store.commit(bad({ coveredIds: ['x', 7] }), 0)).rejects.toThrow(/state\.coveredIds\[1\]: must be a string/);
    await expect(store.commit(bad({ tokensAfter: -1 }), 0)).rejects.toThrow(/state\.tokensAfter/);
    await expect(store.commit(bad({ chatId: '' }), 0)).rejects.toThrow(/state\.chatId/);
    await expect(store.get('a')).resolves.toBeUndefined();
  });

  test('every field round-trips: unicode text and ids, 10k covered ids, model present or absent', async () => {
    const coveredIds = Array.from({ length: 10_000 }, (_, i) => (i % 3 === 0 ? `call_${i}_ünï—😀` : `${i}:${(i * 2654435761 >>> 0).toString(16)}`));
    const full: ChatState = {
      chatId: 'чат/用户-🧵 "quoted" \\ back',
      version: 1,
      summary: 'Résumé: the user 👩‍💻 asked about 東京 → items; e\u0301 vs é; tab\tnewline\nquote"\u0000end',
      coveredIds,
      summarizer: 'llm',
      model: 'gpt-4o-mini',
      tokensBefore: 123_456,
      tokensAfter: 789,
      createdAt: '2024-05-06T07:08:09.010Z',
      updatedAt: '2024-05-06T07:08:10.011Z',
    };
    expect(await store.commit(full, 0)).toBe(true);
    const got = await store.get(full.chatId);
    expect(got).toEqual(full);
    expect(got?.coveredIds).toHaveLength(10_000);
    expect(got?.summary).toBe(full.summary);

    const { model: _model, ...withoutModel } = stateOf('b', 1);
    expect(await store.commit(withoutModel, 0)).toBe(true);
    const noModel = await store.get('b');
    expect(noModel).toEqual(withoutModel);
    expect(noModel && 'model' in noModel).toBe(false);

    const empty = stateOf('c', 1, { summary: '', coveredIds: [] });
    expect(await store.commit(empty, 0)).toBe(true);
    expect(await store.get('c')).toEqual(empty);
  });

  test('stored state cannot be changed through the committed or the returned object', async () => {
    const input = stateOf('a', 1);
    const ids = input.coveredIds as string[];
    expect(await store.commit(input, 0)).toBe(true);
    ids.push('added later');
    ids[0] = 'changed';
    const got = (await store.get('a'))!;
    expect(got.coveredIds).toEqual(stateOf('a', 1).coveredIds);
    expect(Object.isFrozen(got)).toBe(true);
    expect(Object.isFrozen(got.coveredIds)).toBe(true);
    expect(() => (got.coveredIds as string[]).push('x')).toThrow(TypeError);
    expect((await store.get('a'))?.coveredIds).toEqual(stateOf('a', 1).coveredIds);
  });

  test('concurrent commits from the same version: exactly one wins', async () => {
    expect(await store.commit(stateOf('a', 1), 0)).toBe(true);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => store.commit(stateOf('a', 2, { summary: `racer ${i}` }), 1)));
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = results.indexOf(true);
    expect((await store.get('a'))?.summary).toBe(`racer ${winner}`);
  });

  test('chats are independent', async () => {
    expect(await store.commit(stateOf('a', 1), 0)).toBe(true);
    expect(await store.commit(stateOf('b', 1), 0)).toBe(true);
    expect(await store.commit(stateOf('a', 2), 1)).toBe(true);
    expect((await store.get('a'))?.version).toBe(2);
    expect(await store.get('b')).toEqual(stateOf('b', 1));
  });

  test('delete removes one chat; the chat then starts again from expectedVersion 0', async () => {
    expect(await store.commit(stateOf('a', 1), 0)).toBe(true);
    expect(await store.commit(stateOf('a', 2), 1)).toBe(true);
    expect(await store.commit(stateOf('b', 1), 0)).toBe(true);
    await store.delete('a');
    await expect(store.get('a')).resolves.toBeUndefined();
    expect(await store.get('b')).toEqual(stateOf('b', 1));
    expect(await store.commit(stateOf('a', 3), 2)).toBe(false);
    expect(await store.commit(stateOf('a', 1), 0)).toBe(true);
    await expect(store.delete('never-there')).resolves.toBeUndefined();
  });

  test('close is idempotent and every call after it rejects with a clear error', async () => {
    expect(await store.commit(stateOf('a', 1), 0)).toBe(true);
    await store.close();
    await expect(store.close()).resolves.toBeUndefined();
    await expect(store.get('a')).rejects.toThrow(/store is closed/);
    await expect(store.commit(stateOf('a', 2), 1)).rejects.toThrow(/store is closed/);
    await expect(store.delete('a')).rejects.toThrow(/store is closed/);
  });
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
      fc.asyncProperty(fc.array(op, { maxLength: 30 }), async (ops) => {
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

    const raw = new Database(nested, { readonly: true });
    try {
      expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(raw.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
      const columns = raw.pragma('table_info(chat_state)') as { name: string; type: string; notnull: number; pk: number }[];
      // STRICT table: the primary key is NOT NULL too (a plain SQLite table would allow a NULL key).
      expect(columns.map((c) => `${c.name} ${c.type}${c.notnull ? ' NOT NULL' : ''}${c.pk ? ' PK' : ''}`)).toEqual([
        'chat_id TEXT NOT NULL PK', 'version INTEGER NOT NULL', 'summary TEXT NOT NULL', 'covered_ids TEXT NOT NULL',
        'summarizer TEXT NOT NULL', 'model TEXT',
        'tokens_before INTEGER NOT NULL', 'tokens_after INTEGER NOT NULL', 'created_at TEXT NOT NULL', 'updated_at TEXT NOT NULL',
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
    const raw = new Database(file());
    raw.pragma(`user_version = ${SQLITE_SCHEMA_VERSION + 1}`);
    raw.close();
    const bytes = readFileSync(file());
    expect(() => SqliteStore.open(file())).toThrow(new RegExp(`schema version ${SQLITE_SCHEMA_VERSION + 1} is newer than this ctxfold supports`));
    expect(readFileSync(file()).equals(bytes)).toBe(true);
  });

  test('a file written by schema 1 (with covered_hash and head_length) is migrated and its states read back', async () => {
    const raw = new Database(file());
    raw.exec(`CREATE TABLE chat_state (chat_id TEXT PRIMARY KEY, version INTEGER NOT NULL, summary TEXT NOT NULL,
      covered_ids TEXT NOT NULL, covered_hash TEXT NOT NULL, head_length INTEGER NOT NULL, summarizer TEXT NOT NULL,
      model TEXT, tokens_before INTEGER NOT NULL, tokens_after INTEGER NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL) STRICT`);
    const old = stateOf('old', 3);
    raw.prepare(`INSERT INTO chat_state VALUES (?, ?, ?, ?, 'deadbeef', 1, ?, ?, ?, ?, ?, ?)`).run(
      old.chatId, old.version, old.summary, JSON.stringify(old.coveredIds), old.summarizer, old.model ?? null, old.tokensBefore, old.tokensAfter, old.createdAt, old.updatedAt,
    );
    raw.pragma('user_version = 1');
    raw.close();
    const store = track(SqliteStore.open(file()));
    expect(await store.get('old')).toEqual(old);
    expect(await store.commit(stateOf('old', 4), 3)).toBe(true);
    const check = new Database(file(), { readonly: true });
    const columns = (check.pragma('table_info(chat_state)') as { name: string }[]).map((c) => c.name);
    expect(check.pragma('user_version', { simple: true })).toBe(SQLITE_SCHEMA_VERSION);
    check.close();
    expect(columns).not.toContain('covered_hash');
    expect(columns).not.toContain('head_length');
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
    const raw = new Database(file());
    try {
      raw.prepare('BEGIN IMMEDIATE').run();
      const started = performance.now();
      await expect(store.commit(stateOf('a', 1), 0)).rejects.toThrow(/commit\(chat "a", version 1\): database is locked \(SQLITE_BUSY\): another connection held the write lock longer than busyTimeoutMs \(100 ms\)/);
      expect(performance.now() - started).toBeGreaterThanOrEqual(90);
      raw.prepare('ROLLBACK').run();
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
    const raw = new Database(file());
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
