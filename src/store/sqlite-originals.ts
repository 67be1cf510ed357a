import { queryWords, type OriginalRecord } from './originals.js';
import type { Database, Statement } from './node-sqlite.js';
import { decodeTexts, textColumn } from './sqlite-text.js';
import { immediate } from './sqlite-transaction.js';

/**
 * Schema step 3 of `SqliteStore`: the originals summaries replaced, keyed by (chat, message id),
 * and an FTS5 index over their text kept in step by triggers (an external-content table, so the
 * text is stored once). Needs SQLite built with FTS5, as Node's `node:sqlite` is.
 */
export function createOriginalsTables(db: Database): void {
  db.exec(`
    CREATE TABLE originals (
      chat_id    TEXT NOT NULL,
      message_id TEXT NOT NULL,
      position   INTEGER NOT NULL,
      role       TEXT NOT NULL,
      text       TEXT NOT NULL,
      raw        TEXT NOT NULL,
      PRIMARY KEY (chat_id, message_id)
    ) STRICT;
    CREATE VIRTUAL TABLE originals_fts USING fts5(text, content='originals', content_rowid='rowid', tokenize='unicode61 remove_diacritics 2');
    CREATE TRIGGER originals_ai AFTER INSERT ON originals BEGIN
      INSERT INTO originals_fts(rowid, text) VALUES (new.rowid, new.text);
    END;
    CREATE TRIGGER originals_ad AFTER DELETE ON originals BEGIN
      INSERT INTO originals_fts(originals_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
    END;
    CREATE TRIGGER originals_au AFTER UPDATE ON originals BEGIN
      INSERT INTO originals_fts(originals_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
      INSERT INTO originals_fts(rowid, text) VALUES (new.rowid, new.text);
    END;`);
}

/** An `originals` row as SQLite returns it. */
interface OriginalRow {
  message_id: string;
  position: number;
  role: string;
  text: string;
  raw: string;
}

const toRecord = (row: OriginalRow): OriginalRecord => Object.freeze({
  id: row.message_id, index: row.position, role: row.role as OriginalRecord['role'], text: row.text, raw: row.raw,
});

/**
 * An FTS5 query for a free-text query: each word as a quoted phrase (so `A-12` matches the
 * tokens `a 12` next to each other and no word is read as FTS syntax), any of them matching.
 * Undefined when the query has no word.
 */
export function ftsQuery(query: string): string | undefined {
  const words = queryWords(query);
  return words.length === 0 ? undefined : words.map((w) => `"${w.replace(/"/g, '""')}"`).join(' OR ');
}

/**
 * The prepared statements of the originals tables. Invariants: `put` is one transaction (all
 * records or none); `search` ranks by FTS5's bm25 within one chat.
 */
export class SqliteOriginals {
  readonly #db: Database;
  readonly #upsert: Statement;
  readonly #select: Statement;
  readonly #search: Statement;
  readonly #remove: Statement;

  constructor(db: Database) {
    this.#db = db;
    this.#upsert = db.prepare(`
      INSERT INTO originals (chat_id, message_id, position, role, text, raw)
      VALUES (@chat_id, @message_id, @position, @role, @text, @raw)
      ON CONFLICT (chat_id, message_id) DO UPDATE
        SET position = excluded.position, role = excluded.role, text = excluded.text, raw = excluded.raw
      WHERE originals.text IS NOT excluded.text OR originals.raw IS NOT excluded.raw OR originals.position IS NOT excluded.position`);
    const texts = (table: string) => ['message_id', 'role', 'text', 'raw'].map((c) => textColumn(`${table}${c}`)).join(', ');
    this.#select = db.prepare(`SELECT ${texts('')}, position FROM originals WHERE chat_id = ? AND message_id = ?`);
    this.#search = db.prepare(`
      SELECT ${texts('o.')}, o.position
        FROM originals_fts f JOIN originals o ON o.rowid = f.rowid
       WHERE originals_fts MATCH ? AND o.chat_id = ?
       ORDER BY bm25(originals_fts), o.position
       LIMIT ?`);
    this.#remove = db.prepare('DELETE FROM originals WHERE chat_id = ?');
  }

  put(chatId: string, records: readonly OriginalRecord[]): void {
    if (records.length === 0) return;
    immediate(this.#db, () => {
      for (const r of records) this.#upsert.run({ chat_id: chatId, message_id: r.id, position: r.index, role: r.role, text: r.text, raw: r.raw });
    });
  }

  get(chatId: string, ids: readonly string[]): OriginalRecord[] {
    const out: OriginalRecord[] = [];
    for (const id of ids) {
      const row = decodeTexts<OriginalRow>(this.#select.get(chatId, id));
      if (row) out.push(toRecord(row));
    }
    return out;
  }

  search(chatId: string, query: string, limit: number): OriginalRecord[] {
    const match = ftsQuery(query);
    if (match === undefined || limit < 1) return [];
    return this.#search.all(match, chatId, limit).map((row) => toRecord(decodeTexts<OriginalRow>(row)!));
  }

  delete(chatId: string): void {
    this.#remove.run(chatId);
  }
}
