import { describe, expect, test } from '@jest/globals';
import { runWithoutPackages } from './helpers/without-packages.js';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const sourcesUnder = (dir: string): string[] => readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
  .filter((e) => e.isFile() && e.name.endsWith('.ts'))
  .map((e) => relative(root, join(e.parentPath, e.name)));

/** Lines at the top level of a module (not indented), comments and strings aside. */
function topLevelLines(source: string): string[] {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').split('\n').filter((l) => /^\S/.test(l) && !l.startsWith('//'));
}

describe('src/core and src/formats are pure', () => {
  const files = [...sourcesUnder('src/core'), ...sourcesUnder('src/formats')];

  test('there are sources to check', () => {
    expect(files.length).toBeGreaterThan(10);
  });

  test.each(files)('%s imports nothing from node:*, the runtime, stores, summarizers or tokenizers', (file) => {
    const imports = [...readFileSync(join(root, file), 'utf8').matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)].map((m) => m[1]);
    for (const spec of imports) {
      expect(spec).not.toMatch(/^node:|^(fs|path|crypto|os|events|timers|worker_threads)$/);
      expect(spec).not.toMatch(/\/(runtime|store|summarize|tokens|cli|server|adapters)\//);
      expect(['tiktoken', 'p-queue', 'zod']).not.toContain(spec);
    }
  });

  test.each(files)('%s holds no module-level mutable state', (file) => {
    for (const line of topLevelLines(readFileSync(join(root, file), 'utf8'))) {
      expect(line).not.toMatch(/^(export\s+)?(let|var)\s/);
      // A module-level const may hold data only when frozen or a plain value: no Map, Set, array or object to fill.
      if (/^(export\s+)?const\s/.test(line)) {
        expect(line).not.toMatch(/=\s*new\s+(Map|Set|WeakMap|WeakSet|Array)\b/);
        expect(line).not.toMatch(/=\s*\[\s*\]\s*;|=\s*\{\s*\}\s*;/);
      }
    }
  });

  test('the scan catches what it is meant to catch', () => {
    const lines = topLevelLines('let cache = 1;\nexport const seen = new Map();\nconst list = [];\n  let inner = 2;\n/* let hidden = 3; */');
    expect(lines).toEqual(['let cache = 1;', 'export const seen = new Map();', 'const list = [];']);
  });
});

describe('public entries', () => {
  const dist = (entry: string) => join(root, 'dist', 'src', entry);

  test('the root entry exports at most 16 values (15, plus summarizerFromFunction), each with a doc comment right above it', async () => {
    const api = await import(dist('index.js')) as Record<string, unknown>;
    const names = Object.keys(api);
    expect(names.length).toBeLessThanOrEqual(16);
    const source = readFileSync(join(root, 'src', 'index.ts'), 'utf8').split('\n');
    for (const name of names) {
      const at = source.findIndex((l) => /^export \{/.test(l) && new RegExp(`\\b${name}\\b`).test(l));
      expect({ name, found: at >= 0 }).toEqual({ name, found: true });
      expect({ name, doc: source[at - 1] }).toEqual({ name, doc: expect.stringMatching(/^\/\*\*.*\*\/$|^ \*\/$/) });
    }
  });

  test('ctxfold/core exports the building blocks and loads nothing native', async () => {
    const core = await import(dist('core/index.js')) as Record<string, unknown>;
    for (const name of ['buildGroups', 'scanStructure', 'alignCut', 'planView', 'checkProfile', 'repairWithLens', 'selectLens']) expect([name, typeof core[name]]).toEqual([name, 'function']);
    for (const name of ['openaiProfile', 'openaiChatLens', 'PROFILES']) expect([name, typeof core[name]]).toEqual([name, 'object']);
  });

  /** Runs `code` in a fresh node that has no `node:sqlite` (as Node 20, or Node 22 before 22.13). */
  const withoutSqlite = (code: string) => runWithoutPackages([], code, { nodeArgs: ['--no-experimental-sqlite'] });

  test("import('ctxfold') works on a Node without node:sqlite; nothing it reaches loads it", () => {
    const r = withoutSqlite(`const m = await import('ctxfold');
const { messages } = m.compressContext([{ role: 'user', content: 'hi' }], { maxContextTokens: 100 });
const c = m.createCompressor();
await c.wrap(async (req) => req.messages.length)({ chatId: 'a', messages: [{ role: 'user', content: 'hi' }] });
await c.close();
console.log('ok', messages.length);\n`);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('ok 1');
    expect(r.status).toBe(0);
  });

  test("import('ctxfold/sqlite') on a Node without node:sqlite fails with one line naming the Node version needed", () => {
    const r = withoutSqlite(`try { await import('ctxfold/sqlite'); console.log('loaded'); } catch (e) { console.log(e.name + ': ' + e.message); }\n`);
    expect(r.stderr).toBe('');
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(`StoreError: ctxfold/sqlite: needs the built-in module node:sqlite, which this Node (${process.version}) does not provide: use Node 22.13 or newer (22 and 24 are supported)`);
  });

  test('the shipped files hold no test or benchmark data', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { files: string[] };
    expect(pkg.files).toEqual(expect.arrayContaining(['dist/src']));
    const shipped = sourcesUnder('src');
    expect(shipped.filter((f) => /demo|fixture|conversation\.ts$/.test(f))).toEqual([]);
    expect(execFileSync('git', ['ls-files', 'src'], { cwd: root, encoding: 'utf8' })).not.toMatch(/demo\//);
  });
});
