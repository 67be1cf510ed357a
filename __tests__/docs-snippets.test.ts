/**
 * Every code block of docs/ runs as a reader pastes it, against the built package (`npm run build`
 * first), and prints what it says it prints; a block that cannot run offline is marked with what it
 * needs and still parses. README.md's blocks: readme.test.ts.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { markdownFiles, parseProblems, removeScratch, runSnippet, scratchDir, snippetsOf } from './helpers/doc-snippets.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const snippets = markdownFiles(root, 'docs').flatMap((file) => snippetsOf(root, file));
const toRun = snippets.filter((s) => s.notRun === undefined);
const marked = snippets.filter((s) => s.notRun !== undefined);
const scratch = scratchDir(root);
const ran = new Set<string>();
afterAll(() => removeScratch(scratch));

describe('the code blocks of docs/', () => {
  test('there are blocks to run, and each says what it prints', () => {
    expect(toRun.length).toBeGreaterThanOrEqual(10);
    expect(toRun.filter((s) => s.prints.length === 0).map((s) => s.where)).toEqual([]);
  });

  test.each(toRun.map((s, i) => [s.where, s.language, s, i] as const))('%s (%s) runs and prints what it says', (where, _, snippet, i) => {
    const { problems } = runSnippet(snippet, root, scratch, `docs-${i}`);
    expect({ where, problems }).toEqual({ where, problems: [] });
    ran.add(where);
  });

  test.each(marked.map((s, i) => [s.where, s.notRun!, s, i] as const))('%s is not run here (%s) and parses', (where, _, snippet, i) => {
    expect({ where, problems: parseProblems(snippet, scratch, `docs-marked-${i}`) }).toEqual({ where, problems: [] });
  });

  test('every block without a marker ran', () => {
    expect(toRun.map((s) => s.where).filter((w) => !ran.has(w))).toEqual([]);
  });
});
