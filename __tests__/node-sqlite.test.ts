import { afterEach, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync, isSqliteExperimentalWarning, type Database } from '../src/store/node-sqlite.js';
import { sqliteCode } from '../src/store/sqlite-code.js';
import { immediate } from '../src/store/sqlite-transaction.js';
import { runWithoutPackages } from './helpers/without-packages.js';

const dirs: string[] = [];
const open: Database[] = [];
afterEach(() => {
  for (const db of open.splice(0)) db.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const dbFile = () => {
  const dir = mkdtempSync(join(tmpdir(), 'ctxfold-node-sqlite-'));
  dirs.push(dir);
  return join(dir, 'state.db');
};
const connect = (path: string) => {
  const db = new DatabaseSync(path);
  open.push(db);
  return db;
};

describe('loading node:sqlite', () => {
  test('opening a store, committing and searching prints nothing on stderr; any other warning still does', () => {
    const r = runWithoutPackages([], `const { SqliteStore } = await import('ctxfold/sqlite');
const { mkdtempSync, rmSync } = await import('node:fs');
const dir = mkdtempSync((await import('node:os')).tmpdir() + '/ctxfold-quiet-');
const store = SqliteStore.open(dir + '/state.db');
const state = { chatId: 'a', version: 1, summary: 's', coveredIds: ['1'], summarizer: 'extractive', tokensBefore: 2, tokensAfter: 1, createdAt: 't', updatedAt: 't' };
console.log(await store.commit(state, 0));
await store.putOriginals('a', [{ id: '1', index: 0, role: 'user', text: 'hello', raw: '{}' }]);
console.log((await store.searchOriginals('a', 'hello', 1)).length);
await store.close();
rmSync(dir, { recursive: true, force: true });
`);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim().split('\n')).toEqual(['true', '1']);
    expect(r.status).toBe(0);

    const other = runWithoutPackages([], `await import('ctxfold/sqlite');
process.emitWarning('SQLite is an experimental feature and might change at any time', 'ExperimentalWarning');
process.emitWarning('something else is experimental', 'ExperimentalWarning');
`);
    // After loading, nothing is filtered any more: both warnings the script itself raised are printed.
    expect(other.stderr).toMatch(/ExperimentalWarning: SQLite is an experimental feature/);
    expect(other.stderr).toMatch(/ExperimentalWarning: something else is experimental/);
  });

  test('isSqliteExperimentalWarning is true only for the SQLite ExperimentalWarning, in each form emitWarning takes', () => {
    const message = 'SQLite is an experimental feature and might change at any time';
    const named = (name: string) => Object.assign(new Error(message), { name });
    expect(isSqliteExperimentalWarning(message, 'ExperimentalWarning')).toBe(true);
    expect(isSqliteExperimentalWarning(message, { type: 'ExperimentalWarning' })).toBe(true);
    expect(isSqliteExperimentalWarning(named('ExperimentalWarning'), undefined)).toBe(true);
    expect(isSqliteExperimentalWarning(message, 'DeprecationWarning')).toBe(false);
    expect(isSqliteExperimentalWarning(message, undefined)).toBe(false);
    expect(isSqliteExperimentalWarning(named('Warning'), undefined)).toBe(false);
    expect(isSqliteExperimentalWarning('Fetch is an experimental feature', 'ExperimentalWarning')).toBe(false);
    expect(isSqliteExperimentalWarning('sqliteish thing', 'ExperimentalWarning')).toBe(false);
  });

  test('node:sqlite has FTS5 with the unicode61 tokenizer the originals index uses', () => {
    const db = connect(':memory:');
    db.exec("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='unicode61 remove_diacritics 2'); INSERT INTO t VALUES ('Zoë in Zürich')");
    expect(db.prepare('SELECT text FROM t WHERE t MATCH ?').all('zoe')).toEqual([{ text: 'Zoë in Zürich' }]);
  });
});

describe('sqliteCode', () => {
  test('names primary and extended node:sqlite codes by their primary name; other errors have none', () => {
    const db = connect(':memory:');
    db.exec('CREATE TABLE t (id TEXT PRIMARY KEY) STRICT');
    db.prepare('INSERT INTO t VALUES (?)').run('a');
    const thrown = (work: () => unknown) => {
      try {
        work();
      } catch (error) {
        return error;
      }
      throw new Error('expected a throw');
    };
    // 1555 is SQLITE_CONSTRAINT_PRIMARYKEY.
    const duplicate = thrown(() => db.prepare('INSERT INTO t VALUES (?)').run('a'));
    expect([(duplicate as { errcode?: unknown }).errcode, sqliteCode(duplicate)]).toEqual([1555, 'SQLITE_CONSTRAINT']);
    expect(sqliteCode(thrown(() => db.exec('SELECT * FROM missing')))).toBe('SQLITE_ERROR');
    expect(sqliteCode(thrown(() => db.prepare('INSERT INTO t VALUES (?)').run(null)))).toBe('SQLITE_CONSTRAINT');
    expect(sqliteCode(Object.assign(new Error('x'), { code: 'ERR_SQLITE_ERROR', errcode: 517 }))).toBe('SQLITE_BUSY');
    expect(sqliteCode(Object.assign(new Error('x'), { code: 'SQLITE_BUSY' }))).toBe('SQLITE_BUSY');
    for (const other of [new Error('plain'), Object.assign(new Error('x'), { code: 'ENOENT', errno: -2 }), { errcode: 5 }, null, 'SQLITE_BUSY', undefined]) {
      expect(sqliteCode(other)).toBeUndefined();
    }
  });
});

describe('immediate', () => {
  test('commits all of the work and returns its result; a throw rolls all of it back and is rethrown', () => {
    const db = connect(dbFile());
    db.exec('CREATE TABLE t (n INTEGER NOT NULL) STRICT');
    const count = () => (db.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n;
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    expect(immediate(db, () => {
      insert.run(1);
      insert.run(2);
      return 'done';
    })).toBe('done');
    expect(count()).toBe(2);
    const failure = new Error('midway');
    expect(() => immediate(db, () => {
      insert.run(3);
      throw failure;
    })).toThrow(failure);
    expect(count()).toBe(2);
    expect(db.isTransaction).toBe(false);
    // An SQLite error inside the work rolls back the earlier writes of the same call.
    expect(() => immediate(db, () => {
      insert.run(4);
      insert.run(null);
    })).toThrow(/NOT NULL constraint failed/);
    expect(count()).toBe(2);
  });

  test('takes the write lock up front: a second connection waits its busy_timeout, then fails SQLITE_BUSY, and can write once the first commits', () => {
    const path = dbFile();
    const a = connect(path);
    a.exec('PRAGMA journal_mode = WAL; CREATE TABLE t (n INTEGER NOT NULL) STRICT');
    const b = connect(path);
    b.exec('PRAGMA busy_timeout = 50');
    let blocked: unknown;
    immediate(a, () => {
      a.prepare('INSERT INTO t VALUES (1)').run();
      try {
        immediate(b, () => b.prepare('INSERT INTO t VALUES (2)').run());
      } catch (error) {
        blocked = error;
      }
    });
    expect(sqliteCode(blocked)).toBe('SQLITE_BUSY');
    expect(b.isTransaction).toBe(false);
    immediate(b, () => b.prepare('INSERT INTO t VALUES (2)').run());
    expect(a.prepare('SELECT n FROM t ORDER BY n').all()).toEqual([{ n: 1 }, { n: 2 }]);
  });
});
