/**
 * The README section of `ctxfold/langchain` (docs/adapters/langchain.md) shows one example; it is
 * also saved as examples/adapters/langchain.mjs and run here exactly as written, by `node`,
 * against the built package (`ctxfold/langchain` resolves through the package's own exports map).
 * And where `langchain` is not installed, importing the entry still works and making the
 * middleware names the packages to install.
 */
import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { runWithoutPackages } from '../helpers/without-packages.js';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const example = join(root, 'examples', 'adapters', 'langchain.mjs');
const built = join(root, 'dist', 'src', 'adapters', 'langchain', 'index.js');
const builtFirst = { built: true, hint: 'run `npm run build` first' };

describe('the ctxfold/langchain example', () => {
  test('the README section shows exactly the example file', () => {
    const doc = readFileSync(join(root, 'docs', 'adapters', 'langchain.md'), 'utf8');
    const blocks = [...doc.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
    expect(blocks).toEqual([readFileSync(example, 'utf8')]);
  });

  test('runs offline against the built package: the state grows, what the model is sent stays small', () => {
    expect({ built: existsSync(built), hint: builtFirst.hint }).toEqual(builtFirst);
    const r = spawnSync(process.execPath, [example], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const turns = [...r.stdout.matchAll(/^turn (\d+): the agent's state holds (\d+) messages; the model was last sent (\d+)$/gm)]
      .map((m) => ({ turn: Number(m[1]), state: Number(m[2]), sent: Number(m[3]) }));
    expect(turns.map((t) => t.turn)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(turns.map((t) => t.state)).toEqual([4, 8, 12, 16, 20, 24]);
    // The last call was sent far less than the state holds (its system message included).
    expect(turns[5].sent).toBeLessThan(turns[5].state / 2);
    expect(r.stdout).toMatch(/^ {2}summary v1 now stands for \d+ messages$/m);
  });
});

describe('ctxfold/langchain without the langchain packages', () => {
  test('the entry imports; making the middleware names the packages to install', () => {
    expect({ built: existsSync(built), hint: builtFirst.hint }).toEqual(builtFirst);
    const r = runWithoutPackages(['langchain', '@langchain/'], `let blocked = false;
try { await import('langchain'); } catch { blocked = true; }
const { ctxfoldMiddleware } = await import('ctxfold/langchain');
console.log('blocked', blocked, 'imported', typeof ctxfoldMiddleware);
try {
  ctxfoldMiddleware({ maxContextTokens: 1000 });
  console.log('no error');
} catch (error) {
  console.log(error.name + ': ' + error.message);
}
`, { timeoutMs: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('blocked true imported function');
    expect(r.stdout).toMatch(/^InputError: ctxfold\/langchain: needs the packages langchain and @langchain\/core, which could not be loaded \(Cannot find package '(@langchain\/core\/messages|langchain|@langchain\/core\/utils\/function_calling)'.*\); install them: npm i langchain @langchain\/core$/m);
  });
});
