import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { createExtractiveSummarizer } from '../src/index.js';
import { propertyRuns } from './helpers/property-runs.js';

/**
 * Error boilerplate is not a fact (the extractive summarizer's ledger): a failed tool call's result that carries a stack trace through
 * installed libraries or the runtime, and a link to the documentation of the error, gives a summary
 * whose facts name none of them, while the identifiers the same result states are kept. Judged
 * from outside, on the summary's text: no library path, no runtime frame and no documentation link
 * appears in it; every planted identifier does.
 */

const word = fc.stringMatching(/^[a-z]{3,9}$/);
const ident = fc.tuple(fc.stringMatching(/^[A-Z]{2,4}$/), fc.integer({ min: 10_000, max: 9_999_999 })).map(([p, n]) => `${p}-${n}`);
const lib = fc.constantFrom('node_modules', 'site-packages', 'dist-packages');

/** A stack frame through a library or the runtime, in one of three languages' shapes. */
const frame = fc.oneof(
  fc.tuple(word, lib, word, word, fc.nat(999), fc.nat(99)).map(([fn, l, pkg, file, line, col]) => `    at ${fn} (/srv/${l}/${pkg}/dist/${file}.js:${line + 1}:${col + 1})`),
  fc.tuple(word, fc.nat(999)).map(([fn, line]) => `    at ${fn} (node:internal/process/task_queues:${line + 1}:5)`),
  fc.tuple(lib, word, word, fc.nat(999), word).map(([l, pkg, file, line, fn]) => `  File "/usr/lib/python3.11/${l}/${pkg}/${file}.py", line ${line + 1}, in ${fn}`),
);
const docLink = fc.tuple(fc.constantFrom('docs', 'help', 'developers'), word, word).map(([h, d, slug]) => `https://${h}.${d}.example/errors/${slug}`);

describe('error boilerplate is not a fact', () => {
  test('a failed result with library frames and a documentation link: the summary names none of them, and keeps the ids', async () => {
    const summarizer = createExtractiveSummarizer();
    await fc.assert(
      fc.asyncProperty(word, fc.array(ident, { minLength: 1, maxLength: 3 }), fc.array(frame, { minLength: 1, maxLength: 6 }), docLink, async (name, ids, frames, link) => {
        const content = [`Error: ${name} failed for ${ids.join(', ')} (status 404). See ${link} for details.`, ...frames].join('\n');
        const summary = await summarizer.summarize({
          messages: [
            { role: 'user', text: `please ${name} ${ids[0]}`, calls: [], results: [] },
            { role: 'assistant', text: '', calls: [{ id: 'c1', name, arguments: JSON.stringify({ id: ids[0] }) }], results: [] },
            { role: 'tool', text: '', calls: [], results: [{ id: 'c1', name, content }] },
          ],
          countTokens: (t: string) => Math.ceil(t.length / 4),
          signal: new AbortController().signal,
        } as never);
        // The error's own first line is quoted where the summary lists errors; nothing else may
        // carry its boilerplate.
        const quoted = `${name}: ${content.split('\n')[0]}`;
        const rest = summary.split('\n').filter((line) => !line.includes(quoted)).join('\n');
        expect(rest).not.toMatch(/node_modules|site-packages|dist-packages|node:internal/);
        expect(rest).not.toContain(link);
        for (const id of ids) expect(summary).toContain(id);
      }),
      { numRuns: Math.min(propertyRuns(), 300), seed: 4606 },
    );
  });
});
