/**
 * `ctxfold/sqlite`: chat states in one SQLite file, shared by processes on one machine. The only
 * entry that loads the native `better-sqlite3` addon (an optional peer dependency): importing it
 * without that package fails with one line naming the package to install.
 */
export { SqliteStore, SQLITE_SCHEMA_VERSION, type SqliteStoreOptions } from './sqlite-store.js';
