import { describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const examples = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);

/** The README's JavaScript examples run exactly as written, against the built package. */
describe('README examples', () => {
  test('there are examples to run', () => {
    expect(examples.length).toBeGreaterThanOrEqual(2);
  });
  test.each(examples.map((code, i) => [i, code] as const))('example %i runs and prints', (i, code) => {
    // Written inside the project so `import ... from 'ctxfold'` resolves to this package (self-reference).
    const file = join(root, `.readme-example-${i}.mjs`);
    writeFileSync(file, code);
    try {
      const out = execFileSync(process.execPath, [file], { cwd: root, encoding: 'utf8', timeout: 30_000 });
      expect(out.trim().length).toBeGreaterThan(0);
      if (code.includes('valid for OpenAI')) expect(out).toContain('valid for OpenAI: true');
    } finally {
      rmSync(file, { force: true });
    }
  });
});
