/**
 * The embedded store's two candidate drivers side by side, on the statements `SqliteStore` runs
 * (an upsert of a chat's state row in an immediate transaction, then a read of it by id), in WAL
 * mode on a real file: Node's built-in `node:sqlite` (what ctxfold uses) against `better-sqlite3`
 * (what it used before 0.2.0). `node dist/bench/sqlite-drivers.js [PATH-TO-better-sqlite3]`; without
 * the path, or where it does not load, only node:sqlite is measured. better-sqlite3 is not a
 * dependency: install it anywhere (`npm i --prefix /tmp/x better-sqlite3`, a native build) and
 * pass `/tmp/x/node_modules/better-sqlite3`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from '../src/store/node-sqlite.js';

interface Driver {
  readonly name: string;
  open(path: string): { exec(sql: string): void; prepare(sql: string): { run(...a: unknown[]): unknown; get(...a: unknown[]): unknown }; close(): void };
}

const ROUNDS = 2_000;
const SUMMARY = 'x'.repeat(4096);
const IDS = JSON.stringify(Array.from({ length: 200 }, (_, i) => `${i}:0123456789abcdef`));

function measure(driver: Driver, dir: string): { commitUs: number; getUs: number } {
  const db = driver.open(join(dir, `${driver.name.replace(/\W/g, '')}.db`));
  db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;');
  db.exec('CREATE TABLE IF NOT EXISTS chat_state (chat_id TEXT PRIMARY KEY, version INTEGER NOT NULL, summary TEXT NOT NULL, covered_ids TEXT NOT NULL)');
  const upsert = db.prepare('INSERT INTO chat_state (chat_id, version, summary, covered_ids) VALUES (?, ?, ?, ?) ON CONFLICT(chat_id) DO UPDATE SET version = excluded.version, summary = excluded.summary, covered_ids = excluded.covered_ids');
  const read = db.prepare('SELECT * FROM chat_state WHERE chat_id = ?');
  let t = performance.now();
  for (let i = 0; i < ROUNDS; i++) {
    db.exec('BEGIN IMMEDIATE');
    upsert.run(`chat-${i % 50}`, i, SUMMARY, IDS);
    db.exec('COMMIT');
  }
  const commitUs = ((performance.now() - t) * 1000) / ROUNDS;
  t = performance.now();
  for (let i = 0; i < ROUNDS; i++) read.get(`chat-${i % 50}`);
  const getUs = ((performance.now() - t) * 1000) / ROUNDS;
  db.close();
  return { commitUs, getUs };
}

const drivers: Driver[] = [{ name: 'node:sqlite', open: (path) => new DatabaseSync(path) as unknown as ReturnType<Driver['open']> }];
const betterPath = process.argv[2];
if (betterPath) {
  try {
    const Better = createRequire(import.meta.url)(betterPath) as new (path: string) => ReturnType<Driver['open']>;
    // The addon loads on first use: a build for another Node fails here, not at require.
    new Better(':memory:').close();
    drivers.push({ name: 'better-sqlite3', open: (path) => new Better(path) });
  } catch (error) {
    console.log(`better-sqlite3 not measured: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
}
const dir = mkdtempSync(join(tmpdir(), 'ctxfold-sqlite-drivers-'));
try {
  console.log(`SQLite drivers, ${ROUNDS} commits (4 KB summary, 200 ids, immediate transaction, WAL) and ${ROUNDS} reads; Node ${process.version}, load ${loadavg()[0].toFixed(1)}`);
  // Two passes, the first a warm-up; the second is reported.
  for (const d of drivers) measure(d, dir);
  for (const d of drivers) {
    const r = measure(d, dir);
    console.log(`  ${d.name.padEnd(15)} commit ${r.commitUs.toFixed(1)} µs, get ${r.getUs.toFixed(1)} µs`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
