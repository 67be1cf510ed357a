/**
 * The README section of `ctxfold/ai-sdk` (docs/adapters/ai-sdk.md) shows one example; it is also
 * saved as examples/adapters/ai-sdk.mjs and run here exactly as written, by `node`, against the
 * built package (`ctxfold/ai-sdk` resolves through the package's own exports map). And the entry
 * loads where the `ai` package is not installed: it needs `ai` only for its types.
 */
import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { runWithoutPackages } from '../helpers/without-packages.js';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const example = join(root, 'examples', 'adapters', 'ai-sdk.mjs');
const built = join(root, 'dist', 'src', 'adapters', 'ai-sdk', 'index.js');

describe('the ctxfold/ai-sdk example', () => {
  test('the README section shows exactly the example file', () => {
    const doc = readFileSync(join(root, 'docs', 'adapters', 'ai-sdk.md'), 'utf8');
    const blocks = [...doc.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
    expect(blocks).toEqual([readFileSync(example, 'utf8')]);
  });

  test('runs offline against the built package and keeps the prompt small while the history grows', () => {
    expect({ built: existsSync(built), hint: 'run `npm run build` first' }).toEqual({ built: true, hint: 'run `npm run build` first' });
    const r = spawnSync(process.execPath, [example], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const turns = [...r.stdout.matchAll(/^(\w+): history has (\d+) messages; Sunny \(my prompt held (\d+) messages\)\.$/gm)]
      .map((m) => ({ city: m[1], history: Number(m[2]), prompt: Number(m[3]) }));
    expect(turns.map((t) => t.city)).toEqual(['Paris', 'Berlin', 'Madrid', 'Rome', 'Vienna', 'Lisbon', 'Oslo', 'Prague']);
    expect(turns.map((t) => t.history)).toEqual([4, 8, 12, 16, 20, 24, 28, 32]);
    // The last prompts hold far less than the history (system message and current loop included).
    expect(turns[7].prompt).toBeLessThan(turns[7].history / 2);
    expect(r.stdout).toMatch(/^ {2}summary v1 now stands for \d+ messages$/m);
  });
});

describe('ctxfold/ai-sdk without the ai package', () => {
  test('imports, makes a middleware and compresses a prompt: nothing loads `ai` at run time', () => {
    expect(existsSync(built)).toBe(true);
    const r = runWithoutPackages(['ai', '@ai-sdk/'], `let blocked = false;
try { await import('ai'); } catch { blocked = true; }
const { ctxfoldMiddleware, contextWindowOf } = await import('ctxfold/ai-sdk');
const mw = ctxfoldMiddleware({ summarizer: null });
const params = { prompt: [{ role: 'system', content: 's' }, { role: 'user', content: [{ type: 'text', text: 'hi' }] }], providerOptions: { ctxfold: { chatId: 'a' } } };
const out = await mw.transformParams({ type: 'generate', params, model: { modelId: 'gpt-4o' } });
await mw.compressor.close();
console.log(blocked, contextWindowOf('gpt-4o'), out.prompt.length);\n`, { timeoutMs: 30_000 });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('true 128000 2');
    expect(r.status).toBe(0);
  });
});
