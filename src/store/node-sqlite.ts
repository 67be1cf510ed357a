import type * as NodeSqlite from 'node:sqlite';
import { StoreError } from '../errors.js';

/** A connection of Node's built-in SQLite (`node:sqlite`). */
export type Database = NodeSqlite.DatabaseSync;
/** A prepared statement of a `Database`. */
export type Statement = NodeSqlite.StatementSync;

/** The oldest Node whose `node:sqlite` loads without a command-line flag. */
const NEEDS = 'Node 22.13 or newer (22 and 24 are supported)';

/**
 * True for the one warning Node 22 prints when `node:sqlite` is first loaded ("SQLite is an
 * experimental feature..."). `warning` and `typeOrOptions` are `process.emitWarning`'s first two arguments.
 */
export function isSqliteExperimentalWarning(warning: unknown, typeOrOptions: unknown): boolean {
  const type = typeof typeOrOptions === 'string' ? typeOrOptions
    : typeof typeOrOptions === 'object' && typeOrOptions !== null ? (typeOrOptions as { type?: unknown }).type
      : undefined;
  const name = warning instanceof Error ? warning.name : type;
  const message = warning instanceof Error ? warning.message : String(warning);
  return name === 'ExperimentalWarning' && /\bSQLite\b/.test(message);
}

/**
 * Loads `node:sqlite` without printing its ExperimentalWarning: while the module loads (Node 22
 * emits the warning then, synchronously, through `process.emitWarning`), that one warning is
 * dropped and every other passes through unchanged; `process.emitWarning` is restored before
 * this returns. Throws a `StoreError` naming the Node version needed when this Node has no `node:sqlite`.
 */
function loadQuietly(): typeof NodeSqlite {
  const getBuiltin = typeof process.getBuiltinModule === 'function' ? process.getBuiltinModule : undefined;
  // Node's own `process`, whose emitWarning Node calls: under a test runner that gives each module
  // a copy of `process` (Jest), wrapping the copy's would not catch the warning.
  const real = getBuiltin?.('node:process') ?? process;
  const emitWarning = real.emitWarning;
  real.emitWarning = function (this: unknown, warning: unknown, ...rest: unknown[]) {
    if (isSqliteExperimentalWarning(warning, rest[0])) return;
    Reflect.apply(emitWarning, this, [warning, ...rest]);
  } as typeof process.emitWarning;
  let loaded: typeof NodeSqlite | undefined;
  let failure: unknown;
  try {
    // getBuiltinModule, not `import 'node:sqlite'`: a static import would load the module (and
    // print the warning) before any code here runs. It returns undefined where the module is absent
    // (Node 20) or behind a flag (Node 22 before 22.13, or --no-experimental-sqlite).
    loaded = getBuiltin?.('node:sqlite');
  } catch (error) {
    failure = error;
  } finally {
    real.emitWarning = emitWarning;
  }
  if (loaded === undefined || typeof loaded.DatabaseSync !== 'function') {
    const why = failure instanceof Error ? ` (${failure.message})` : '';
    throw new StoreError('ctxfold/sqlite', `needs the built-in module node:sqlite, which this Node (${process.version}) does not provide${why}: use ${NEEDS}`, failure === undefined ? undefined : { cause: failure });
  }
  return loaded;
}

/** `node:sqlite`, loaded once, quietly; only the SQLite store imports this module. */
export const DatabaseSync: typeof NodeSqlite.DatabaseSync = loadQuietly().DatabaseSync;
