import type { Database } from './node-sqlite.js';

/**
 * Runs `work` inside `BEGIN IMMEDIATE` ... `COMMIT` on `db` and returns its result. Invariant:
 * either all of `work`'s writes are committed or none are; when `work` (or the COMMIT) throws,
 * the transaction is rolled back and that error is rethrown. IMMEDIATE takes the write lock up
 * front, so the connection's busy_timeout governs the wait and a read never has to be upgraded
 * into a write midway (which could fail with SQLITE_BUSY without waiting). Not reentrant: `work`
 * must not start a transaction itself.
 */
export function immediate<T>(db: Database, work: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = work();
    db.exec('COMMIT');
    return result;
  } catch (error) {
    rollback(db);
    throw error;
  }
}

/** Rolls back the open transaction, if SQLite has not already done so (it does after some errors, e.g. SQLITE_FULL). */
function rollback(db: Database): void {
  if (db.isTransaction === false) return;
  try {
    db.exec('ROLLBACK');
  } catch {
    // Only reached on a Node without `isTransaction` (before 22.16) when SQLite had already rolled
    // back: "cannot rollback - no transaction is active". The error being rethrown is the one that matters.
  }
}
