import { afterEach, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SqliteStore } from '../src/store/sqlite-store.js';
import { crashStateFields } from './fixtures/crash-state.mjs';
import { mulberry32 } from '../bench/fixtures/conversation.js';

// The writers run the built store in separate processes, as a deployment would.
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const fixtures = join(root, '__tests__', 'fixtures');
const built = join(root, 'dist', 'src', 'store', 'sqlite-store.js');

beforeAll(() => {
  if (!existsSync(built)) throw new Error(`${built} is missing: run \`npm run build\` before this test`);
  if (statSync(built).mtimeMs < statSync(join(root, 'src', 'store', 'sqlite-store.ts')).mtimeMs) {
    throw new Error(`${built} is older than src/store/sqlite-store.ts: run \`npm run build\` before this test`);
  }
});

let dir: string;
const children: ChildProcess[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ctxfold-crash-'));
});
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** A child process with its stdout as lines, and a promise of how it ended. */
function start(script: string, args: string[]) {
  const child = spawn(process.execPath, [join(fixtures, script), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const lines: string[] = [];
  let partial = '';
  let stderr = '';
  const listeners: (() => void)[] = [];
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
    for (const l of listeners) l();
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk; });
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal }));
  });
  const waitFor = (prefix: string) => new Promise<string>((resolve, reject) => {
    const check = () => {
      const line = lines.find((l) => l.startsWith(prefix));
      if (line !== undefined) resolve(line);
    };
    listeners.push(check);
    check();
    void ended.then(({ code, signal }) => reject(new Error(`${script} ended (code ${code}, signal ${signal}) before printing "${prefix}": ${stderr}`)));
  });
  return { child, lines, ended, waitFor, stderr: () => stderr };
}


const lastNumber = (lines: string[], word: string) =>
  lines.reduce((max, l) => (l.startsWith(`${word} `) ? Math.max(max, Number(l.slice(word.length + 1))) : max), 0);

describe('SqliteStore survives SIGKILL in the middle of commits', () => {
  test('after each kill the file holds a complete state the writer had committed, or the one it was writing', async () => {
    const file = join(dir, 'crash.db');
    const random = mulberry32(0xc0ffee);
    const rounds = 15;
    let version = 0;
    let killedMidCommit = 0;
    let landedUnacknowledged = 0;
    for (let round = 0; round < rounds; round++) {
      const writer = start('store-crash-writer.mjs', [file, 'crash']);
      expect(await writer.waitFor('ready')).toBe(`ready ${version}`);
      const delay = 5 + Math.floor(random() * 76);
      await new Promise((resolve) => setTimeout(resolve, delay));
      writer.child.kill('SIGKILL');
      const { signal } = await writer.ended;
      expect({ round, signal, stderr: writer.stderr() }).toEqual({ round, signal: 'SIGKILL', stderr: '' });

      const begun = Math.max(version, lastNumber(writer.lines, 'begin'));
      const done = Math.max(version, lastNumber(writer.lines, 'done'));
      if (begun > done) killedMidCommit++;

      const store = SqliteStore.open(file);
      try {
        const state = await store.get('crash');
        const read = state?.version ?? 0;
        // Every acknowledged commit survived, and nothing past the commit in item appeared.
        expect({ round, delay, read, ok: read >= done && read <= begun }).toEqual({ round, delay, read, ok: true });
        if (read > done) landedUnacknowledged++;
        if (state) {
          const { summary, ...rest } = crashStateFields('crash', read);
          expect(state.summary.length).toBe(summary.length);
          expect(state.summary === summary).toBe(true);
          expect({ ...state, summary: '' }).toEqual({ ...rest, summary: '' });
        }
        // The store stays writable from where the crash left it, and compare-and-set still holds.
        if (read > 0) {
          const stale = crashStateFields('crash', read);
          expect(await store.commit(stale, read - 1)).toBe(false);
        }
        const next = crashStateFields('crash', read + 1);
        expect(await store.commit(next, read)).toBe(true);
        expect((await store.get('crash'))?.version).toBe(read + 1);
        version = read + 1;
      } finally {
        await store.close();
      }
    }
    // The kills must actually have landed inside commits, or this test proved nothing.
    expect(killedMidCommit).toBeGreaterThan(0);
    expect(version).toBeGreaterThanOrEqual(rounds);
    expect(landedUnacknowledged).toBeLessThanOrEqual(killedMidCommit);
  });
});

describe('SqliteStore compare-and-set across processes', () => {
  test('writers racing on one chat never both win a version, and no win is lost', async () => {
    const file = join(dir, 'race.db');
    await SqliteStore.open(file).close(); // create the schema once, so the writers start together
    const attempts = 150;
    const names = ['A', 'B', 'C'];
    // The writers meet at a barrier in the store before racing, so their attempts overlap.
    const writers = names.map((name) => ({ name, run: start('store-race-writer.mjs', [file, 'race', name, String(attempts), names.join(',')]) }));
    const ends = await Promise.all(writers.map((w) => w.run.ended));
    for (const [i, end] of ends.entries()) expect({ writer: writers[i]!.name, ...end, stderr: writers[i]!.run.stderr() }).toEqual({ writer: writers[i]!.name, code: 0, signal: null, stderr: '' });

    const wins = writers.flatMap((w) => w.run.lines.filter((l) => l.startsWith('won ')).map((l) => `${l.slice(4)}:${w.name}`));
    const attemptsSeen = writers.reduce((n, w) => n + w.run.lines.length, 0);
    expect(attemptsSeen).toBe(attempts * writers.length);
    // The writers really did collide (some attempts lost), and more than one of them won.
    expect(wins.length).toBeLessThan(attemptsSeen);
    expect(new Set(wins.map((w) => w.split(':')[1])).size).toBeGreaterThan(1);
    const store = SqliteStore.open(file);
    try {
      const state = (await store.get('race'))!;
      // Each winner appended its `version:name` to the state it read: the chain lists every win once, in order.
      const byVersion = [...wins].sort((a, b) => parseInt(a, 10) - parseInt(b, 10));
      expect(state.coveredIds).toEqual(byVersion);
      expect(state.version).toBe(wins.length);
      expect(new Set(wins.map((w) => parseInt(w, 10))).size).toBe(wins.length);
    } finally {
      await store.close();
    }
  });
});
