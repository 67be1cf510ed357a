/** SQLite's primary result codes by number (https://sqlite.org/rescode.html); an extended code's low byte is its primary code. */
const PRIMARY: readonly string[] = [
  'OK', 'ERROR', 'INTERNAL', 'PERM', 'ABORT', 'BUSY', 'LOCKED', 'NOMEM', 'READONLY', 'INTERRUPT',
  'IOERR', 'CORRUPT', 'NOTFOUND', 'FULL', 'CANTOPEN', 'PROTOCOL', 'EMPTY', 'SCHEMA', 'TOOBIG',
  'CONSTRAINT', 'MISMATCH', 'MISUSE', 'NOLFS', 'AUTH', 'FORMAT', 'RANGE', 'NOTADB', 'NOTICE', 'WARNING',
];

/**
 * The SQLite result code of an error thrown by `node:sqlite`, as SQLite names it (`SQLITE_BUSY`,
 * `SQLITE_CONSTRAINT`); undefined for any error that did not come from SQLite. `node:sqlite`
 * reports the code as the number `errcode` (possibly an extended code, e.g. 517 for
 * SQLITE_BUSY_SNAPSHOT, named here by its primary code) next to `code: 'ERR_SQLITE_ERROR'`; an
 * error already carrying a `SQLITE_*` string `code` keeps it.
 */
export function sqliteCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, errcode } = error as { code?: unknown; errcode?: unknown };
  if (typeof code === 'string' && code.startsWith('SQLITE_')) return code;
  if (code !== 'ERR_SQLITE_ERROR' || typeof errcode !== 'number' || !Number.isInteger(errcode)) return undefined;
  const name = PRIMARY[errcode & 0xff];
  return name === undefined ? `SQLITE_${errcode}` : `SQLITE_${name}`;
}
