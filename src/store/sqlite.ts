/**
 * `ctxfold/sqlite`: chat states in one SQLite file, shared by processes on one machine. The only
 * entry that loads Node's built-in `node:sqlite` (no native addon to build): importing it on a Node
 * without that module fails with one line naming the Node version needed.
 */
export { SqliteStore, SQLITE_SCHEMA_VERSION, type SqliteStoreOptions } from './sqlite-store.js';
