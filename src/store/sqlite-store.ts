import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { InputError, StoreError } from '../errors.js';
import type { OriginalRecord, OriginalsStore } from './originals.js';
import { assertCommittable } from './commit-rules.js';
import { checkListing, prefixUpperBound, type ChatLister } from './chat-list.js';
import { DatabaseSync, type Database, type Statement } from './node-sqlite.js';
import { sqliteCode } from './sqlite-code.js';
import { decodeTexts, textColumn } from './sqlite-text.js';
import { createOriginalsTables, SqliteOriginals } from './sqlite-originals.js';
import { immediate } from './sqlite-transaction.js';
import type { ChatState, StateStore } from './state.js';

/** Options of `SqliteStore.open`. */
export interface SqliteStoreOptions {
  /** How long a write waits for another connection's lock before it fails, in ms (default 5000). */
  readonly busyTimeoutMs?: number;
}

/** A `chat_state` row as SQLite returns it (a type, not an interface, so it binds as named parameters). */
type ChatStateRow = {
  chat_id: string;
  version: number;
  summary: string;
  covered_ids: string;
  summarizer: string;
  model: string | null;
  tokens_before: number;
  tokens_after: number;
  compact_tokens: number | null;
  created_at: string;
  updated_at: string;
};

/**
 * Schema steps: `MIGRATIONS[i]` takes a file from `user_version` i to i + 1. Append new steps,
 * never edit a released one: files in the field are at every version already shipped.
 */
const MIGRATIONS: readonly ((db: Database) => void)[] = [
  (db) => db.exec(`
    CREATE TABLE chat_state (
      chat_id       TEXT PRIMARY KEY,
      version       INTEGER NOT NULL,
      summary       TEXT NOT NULL,
      covered_ids   TEXT NOT NULL, -- JSON array of message ids, in history order
      covered_hash  TEXT NOT NULL,
      head_length   INTEGER NOT NULL,
      summarizer    TEXT NOT NULL,
      model         TEXT,
      tokens_before INTEGER NOT NULL,
      tokens_after  INTEGER NOT NULL,
      created_at    TEXT NOT NULL,
      updated_at    TEXT NOT NULL
    ) STRICT`),
  // covered_hash and head_length were written and never read: the covered ids are the authority.
  (db) => db.exec('ALTER TABLE chat_state DROP COLUMN covered_hash; ALTER TABLE chat_state DROP COLUMN head_length;'),
  // The originals summaries replaced, for recall, with an FTS5 index over their text.
  createOriginalsTables,
  // The size a long summary is sent at once its whole text no longer fits (`ChatState.compactTokens`).
  (db) => db.exec('ALTER TABLE chat_state ADD COLUMN compact_tokens INTEGER'),
];

/** The `user_version` this code reads and writes. */
export const SQLITE_SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Chat states in one SQLite file (WAL), shared safely by any number of connections and processes
 * on one machine. `commit` is a compare-and-set inside one IMMEDIATE transaction, so a crash at
 * any moment leaves either the old or the new state, and two writers can never both win the same
 * version. The API is async to match `StateStore`; the work itself is synchronous.
 */
export class SqliteStore implements StateStore, OriginalsStore, ChatLister {
  readonly path: string;
  readonly #db: Database;
  readonly #select: Statement;
  readonly #remove: Statement;
  readonly #listBetween: Statement;
  readonly #listFrom: Statement;
  readonly #commit: (row: ChatStateRow, expectedVersion: number) => boolean;
  readonly #originals: SqliteOriginals;
  readonly #busyTimeoutMs: number;
  #closed = false;

  private constructor(db: Database, path: string, busyTimeoutMs: number) {
    this.#db = db;
    this.path = path;
    this.#busyTimeoutMs = busyTimeoutMs;
    const texts = ['chat_id', 'summary', 'covered_ids', 'summarizer', 'model', 'created_at', 'updated_at'].map((c) => textColumn(c)).join(', ');
    this.#select = db.prepare(`SELECT ${texts}, version, tokens_before, tokens_after, compact_tokens FROM chat_state WHERE chat_id = ?`);
    this.#remove = db.prepare('DELETE FROM chat_state WHERE chat_id = ?');
    // A range on the primary key: only the rows of the prefix are read (SQLite orders text by its UTF-8 bytes).
    this.#listBetween = db.prepare(`SELECT ${textColumn('chat_id')} FROM chat_state WHERE chat_id >= ? AND chat_id < ? ORDER BY chat_id LIMIT ?`);
    this.#listFrom = db.prepare(`SELECT ${textColumn('chat_id')} FROM chat_state WHERE chat_id >= ? ORDER BY chat_id LIMIT ?`);
    const insert = db.prepare(`
      INSERT INTO chat_state (chat_id, version, summary, covered_ids, summarizer, model,
                              tokens_before, tokens_after, compact_tokens, created_at, updated_at)
      VALUES (@chat_id, @version, @summary, @covered_ids, @summarizer, @model,
              @tokens_before, @tokens_after, @compact_tokens, @created_at, @updated_at)
      ON CONFLICT (chat_id) DO NOTHING`);
    const update = db.prepare(`
      UPDATE chat_state
         SET version = @version, summary = @summary, covered_ids = @covered_ids,
             summarizer = @summarizer, model = @model, tokens_before = @tokens_before,
             tokens_after = @tokens_after, compact_tokens = @compact_tokens, created_at = @created_at, updated_at = @updated_at
       WHERE chat_id = @chat_id AND version = @expected`);
    // Insert only when no row exists; otherwise update only the row still at the expected version.
    // Either way exactly one row changes when the compare-and-set wins, none when it loses.
    this.#commit = (row, expected) => immediate(db, () =>
      Number((expected === 0 ? insert.run(row) : update.run({ ...row, expected })).changes) === 1);
    this.#originals = new SqliteOriginals(db);
  }

  /**
   * Opens (creating the file and its directory when missing) and brings the schema up to
   * `SQLITE_SCHEMA_VERSION`. Throws when the file was written by a newer schema.
   */
  static open(path: string, options: SqliteStoreOptions = {}): SqliteStore {
    const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
      throw new InputError('options.busyTimeoutMs', `must be a whole number of ms >= 0, got ${String(busyTimeoutMs)}`);
    }
    if (typeof path !== 'string' || path === '') {
      throw new InputError('path', `must be the database file's path (or ":memory:"), got ${JSON.stringify(path)}`);
    }
    let db: Database;
    try {
      if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
      db = new DatabaseSync(path);
    } catch (error) {
      throw new StoreError(`SqliteStore(${path})`, `cannot open the database: ${(error as Error).message}`, { cause: error });
    }
    try {
      db.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
      db.exec('PRAGMA journal_mode = WAL');
      // NORMAL, not FULL: in WAL mode a commit is written to the log before it returns, so it
      // survives a crash of the process and the file never corrupts; only an OS crash or power cut
      // can roll back the last commits (the WAL is synced at checkpoints), leaving an older but
      // consistent state. For a summary cache that costs one recomputed summary, while FULL would
      // add an fsync to every commit.
      db.exec('PRAGMA synchronous = NORMAL');
      migrate(db, path);
      return new SqliteStore(db, path, busyTimeoutMs);
    } catch (error) {
      db.close();
      if (error instanceof StoreError) throw error;
      throw new StoreError(`SqliteStore(${path})`, `cannot open the database: ${(error as Error).message}`, { cause: error });
    }
  }

  async get(chatId: string): Promise<ChatState | undefined> {
    this.#assertOpen();
    const row = this.#sqlite(`get(chat ${JSON.stringify(chatId)})`, () => decodeTexts<ChatStateRow>(this.#select.get(chatId)));
    return row === undefined ? undefined : this.#toState(row);
  }

  async commit(state: ChatState, expectedVersion: number): Promise<boolean> {
    this.#assertOpen();
    assertCommittable(state, expectedVersion);
    const row = toRow(state);
    return this.#sqlite(`commit(chat ${JSON.stringify(state.chatId)}, version ${state.version})`, () => this.#commit(row, expectedVersion));
  }

  /** Ids of the stored chats starting with `prefix`, the `limit` smallest in code point order: a range query on the primary key. */
  async listChatIds(prefix: string, limit: number): Promise<string[]> {
    this.#assertOpen();
    checkListing(prefix, limit);
    const bound = prefixUpperBound(prefix);
    const rows = this.#sqlite(`listChatIds(prefix ${JSON.stringify(prefix)})`, () => (bound === undefined ? this.#listFrom.all(prefix, limit) : this.#listBetween.all(prefix, bound, limit)));
    return rows.map((row) => decodeTexts<{ chat_id: string }>(row as Record<string, unknown>)!.chat_id);
  }

  /** Deletes the chat's state and the originals kept for it. */
  async delete(chatId: string): Promise<void> {
    this.#assertOpen();
    this.#sqlite(`delete(chat ${JSON.stringify(chatId)})`, () => {
      this.#remove.run(chatId);
      this.#originals.delete(chatId);
    });
  }

  /** Keeps (upserts) originals a summary replaced, all in one transaction. */
  async putOriginals(chatId: string, records: readonly OriginalRecord[]): Promise<void> {
    this.#assertOpen();
    this.#sqlite(`putOriginals(chat ${JSON.stringify(chatId)}, ${records.length} record(s))`, () => this.#originals.put(chatId, records));
  }

  /** The kept originals with these ids, in the order asked (unknown ids skipped). */
  async getOriginals(chatId: string, ids: readonly string[]): Promise<OriginalRecord[]> {
    this.#assertOpen();
    return this.#sqlite(`getOriginals(chat ${JSON.stringify(chatId)})`, () => this.#originals.get(chatId, ids));
  }

  /** The chat's kept originals matching any word of the query (FTS5), best bm25 rank first. */
  async searchOriginals(chatId: string, query: string, limit: number): Promise<OriginalRecord[]> {
    this.#assertOpen();
    return this.#sqlite(`searchOriginals(chat ${JSON.stringify(chatId)})`, () => this.#originals.search(chatId, query, limit));
  }

  /** Idempotent; afterwards every other method rejects. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#db.close();
  }

  /** Runs one SQLite call; an SQLite failure is rethrown saying which call, on which file, and what to do (the original as `cause`). */
  #sqlite<T>(call: string, work: () => T): T {
    try {
      return work();
    } catch (error) {
      const code = sqliteCode(error);
      if (code === undefined) throw error;
      const hint = code.startsWith('SQLITE_BUSY')
        ? `: another connection held the write lock longer than busyTimeoutMs (${this.#busyTimeoutMs} ms); raise it, or shorten that connection's transactions`
        : '';
      throw new StoreError(`SqliteStore(${this.path})`, `${call}: ${(error as Error).message} (${code})${hint}`, { cause: error });
    }
  }

  #assertOpen(): void {
    if (this.#closed) throw new StoreError(`SqliteStore(${this.path})`, 'the store is closed; open it again with SqliteStore.open');
  }

  /** A stored row as a frozen `ChatState`; a row whose `covered_ids` is not a JSON string array is reported, not returned. */
  #toState(row: ChatStateRow): ChatState {
    const coveredIds = parseCoveredIds(row.covered_ids, () => `SqliteStore(${this.path}): chat ${JSON.stringify(row.chat_id)}, column covered_ids`);
    return Object.freeze({
      chatId: row.chat_id,
      version: row.version,
      summary: row.summary,
      coveredIds: Object.freeze(coveredIds),
      summarizer: row.summarizer,
      ...(row.model !== null ? { model: row.model } : {}),
      tokensBefore: row.tokens_before,
      tokensAfter: row.tokens_after,
      ...(row.compact_tokens !== null && row.compact_tokens !== undefined ? { compactTokens: Number(row.compact_tokens) } : {}),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    });
  }
}

/** Runs the missing schema steps in one IMMEDIATE transaction, so two processes opening a new file at once migrate it once. */
function migrate(db: Database, path: string): void {
  const readVersion = () => Number((db.prepare('PRAGMA user_version').get() as { user_version: number | bigint }).user_version);
  if (readVersion() === SQLITE_SCHEMA_VERSION) return;
  immediate(db, () => {
    const from = readVersion();
    if (from > SQLITE_SCHEMA_VERSION) {
      throw new StoreError(`SqliteStore(${path})`, `schema version ${from} is newer than this ctxfold supports (${SQLITE_SCHEMA_VERSION}); upgrade ctxfold or use another file`);
    }
    for (let version = from; version < SQLITE_SCHEMA_VERSION; version++) MIGRATIONS[version]!(db);
    db.exec(`PRAGMA user_version = ${SQLITE_SCHEMA_VERSION}`);
  });
}

function toRow(state: ChatState): ChatStateRow {
  return {
    chat_id: state.chatId,
    version: state.version,
    summary: state.summary,
    covered_ids: JSON.stringify(state.coveredIds),
    summarizer: state.summarizer,
    model: state.model ?? null,
    tokens_before: state.tokensBefore,
    tokens_after: state.tokensAfter,
    compact_tokens: state.compactTokens ?? null,
    created_at: state.createdAt,
    updated_at: state.updatedAt,
  };
}

/** `covered_ids` back to an array of strings; anything else throws an error naming `where`. */
function parseCoveredIds(text: string, where: () => string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new StoreError(where(), `not valid JSON (${(error as Error).message}); delete this chat's state to rebuild it`);
  }
  if (!Array.isArray(parsed) || parsed.some((id) => typeof id !== 'string')) {
    throw new StoreError(where(), `expected a JSON array of strings, found ${text.length > 80 ? `${text.slice(0, 80)}...` : text}; delete this chat's state to rebuild it`);
  }
  return parsed as string[];
}
