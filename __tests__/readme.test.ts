/**
 * Every code block of README.md runs as a reader pastes it, against the built package (`npm run
 * build` first): its js blocks with node (`import ... from 'ctxfold'` resolves to this package),
 * its sh blocks in the project root (`npx ctxfold` is the package's bin), each printing what it
 * says it prints. A block that cannot run offline (a key, a server, the whole suite) is marked
 * `<!-- snippet: ... -->` with what it needs, and still parses. docs/'s blocks: docs-snippets.test.ts.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseProblems, removeScratch, runSnippet, scratchDir, snippetsOf } from './helpers/doc-snippets.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const snippets = snippetsOf(root, 'README.md');
const toRun = snippets.filter((s) => s.notRun === undefined);
const marked = snippets.filter((s) => s.notRun !== undefined);
const scratch = scratchDir(root);
const ran = new Set<string>();
afterAll(() => removeScratch(scratch));

describe('README examples', () => {
  test('there are examples to run, and each says what it prints', () => {
    expect(toRun.filter((s) => s.language === 'js').length).toBeGreaterThanOrEqual(2);
    expect(toRun.filter((s) => s.prints.length === 0).map((s) => s.where)).toEqual([]);
  });

  test('the first example is the library call, and its view is valid for OpenAI', () => {
    const first = snippets.find((s) => s.language === 'js')!;
    expect(first.notRun).toBeUndefined();
    expect(first.prints).toContain('valid for OpenAI: true');
  });

  test.each(toRun.map((s, i) => [s.where, s.language, s, i] as const))('%s (%s) runs and prints what it says', (where, _, snippet, i) => {
    const { problems } = runSnippet(snippet, root, scratch, `readme-${i}`);
    expect({ where, problems }).toEqual({ where, problems: [] });
    ran.add(where);
  });

  test.each(marked.map((s, i) => [s.where, s.notRun!, s, i] as const))('%s is not run here (%s) and parses', (where, _, snippet, i) => {
    expect({ where, problems: parseProblems(snippet, scratch, `readme-marked-${i}`) }).toEqual({ where, problems: [] });
  });

  test('every block without a marker ran', () => {
    expect(toRun.map((s) => s.where).filter((w) => !ran.has(w))).toEqual([]);
  });
});
