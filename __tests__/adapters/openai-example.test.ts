import { describe, expect, test } from '@jest/globals';
import { runWithoutPackages } from '../helpers/without-packages.js';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const example = join(root, 'examples', 'adapters', 'openai.mjs');
const built = join(root, 'dist', 'src', 'adapters', 'openai', 'index.js');

/** Runs a module file with node in the project (so `ctxfold/openai` resolves through the package's exports). */
const run = (args: string[]) => execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8', timeout: 60_000 });

describe('ctxfold/openai as a user installs it (needs `npm run build`)', () => {
  test('the built adapter is there', () => {
    expect(existsSync(built)).toBe(true);
  });

  test('the README section\'s example is examples/adapters/openai.mjs, and it runs as written, offline', () => {
    const doc = readFileSync(join(root, 'docs', 'adapters', 'openai.md'), 'utf8');
    const code = readFileSync(example, 'utf8');
    const blocks = [...doc.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
    expect(blocks).toContain(code);
    const out = run([example]);
    expect(out).toMatch(/^turn 1: history has 3 messages; I was sent 2 messages\.$/m);
    // By the last turns the model is sent fewer messages than the history holds, and a summary stands for the rest.
    const last = /^turn 8: history has 17 messages; I was sent (\d+) messages\.$/m.exec(out);
    expect(last).not.toBeNull();
    expect(Number(last![1])).toBeLessThan(16);
    expect(out).toMatch(/summary v\d+ now stands for \d+ messages/);
    expect(out).toMatch(/^8 responses billed; ctxfold's count \/ billed input tokens = \d\.\d\d$/m);
  });

  test('without the openai package, importing ctxfold/openai works and a call names the package to install', () => {
    const script = `
      const missing = await import('openai').then(() => 'openai resolved', (e) => e.code);
      const { withCtxfold, compressorOf } = await import('ctxfold/openai');
      let message = '';
      try { withCtxfold(undefined, { maxContextTokens: 1000 }); } catch (e) { message = e.message; }
      console.log(JSON.stringify({ missing, exports: [typeof withCtxfold, typeof compressorOf], message }));`;
    const r = runWithoutPackages(['openai'], script);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { missing: string; exports: string[]; message: string };
    expect(out.missing).toBe('ERR_MODULE_NOT_FOUND');
    expect(out.exports).toEqual(['function', 'function']);
    expect(out.message).toMatch(/^client: must be a client of the openai package .*npm i openai/);
  });
});
