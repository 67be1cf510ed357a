#!/usr/bin/env node
/**
 * The first call of a process against later ones: `node dist/bench/first-call.js <case>` times,
 * in a fresh process, ctxfold's first call on a corpus request of about 20 messages, then 20
 * later calls on other requests (each with fresh state: counter, history cache, compressor), and
 * prints one JSON line `{ call, firstMs, laterMs, later }` (laterMs: their median). Cases:
 *
 * - `under`: `compressContext` with a 128,000-token window and the default counter;
 * - `over`: `compressContext` with a window of 25% of the request's tokens and the default counter;
 * - `server`: `createCompressor({ maxContextTokens: 128000 })` made first (a server's start, untimed),
 *   then the timed `compress` of each request.
 *
 * Each case needs a process of its own, so `firstCalls()` runs them one after another (with
 * `--expose-gc`: a forced collection before every timed call, the first and the later ones alike).
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { median } from './stats.js';
import { loadCorpus } from './workloads.js';
import { smallRequests, UNDER_WINDOW_TOKENS } from './small-requests.js';
import type { FirstCallFigure } from './goals.js';

const CASES = ['under', 'over', 'server'] as const;
type Case = (typeof CASES)[number];
const LATER = 20;

async function measure(which: Case): Promise<FirstCallFigure> {
  const { compressContext, createCompressor } = await import('../src/index.js');
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const corpus = loadCorpus(root);
  if (!corpus) throw new Error('the shared corpus is absent');
  const requests = smallRequests(corpus, 20, LATER + 1);
  // "over" windows come from a rule that counts no text (a count here would load the tokenizer
  // before the first call): a sixteenth of the body's UTF-8 bytes, about 25% of its tokens.
  const overWindow = (r: (typeof requests)[number]) => Math.max(200, Math.floor(Buffer.byteLength(JSON.stringify(r)) / 16));
  let run: (r: (typeof requests)[number], k: number) => Promise<unknown> | unknown;
  if (which === 'server') {
    const compressor = createCompressor({ maxContextTokens: UNDER_WINDOW_TOKENS, summarizer: null });
    run = (r, k) => compressor.compress(`chat-${k}`, r);
  } else if (which === 'under') {
    run = (r) => compressContext(r, { maxContextTokens: UNDER_WINDOW_TOKENS });
  } else {
    run = (r) => compressContext(r, { maxContextTokens: overWindow(r) });
  }
  const times: number[] = [];
  for (let k = 0; k < requests.length; k++) {
    const copy = JSON.parse(JSON.stringify(requests[k])) as typeof requests[number];
    // The garbage of loading the corpus is collected before every call alike, not during the first.
    (globalThis as { gc?: () => void }).gc?.();
    const t0 = performance.now();
    await run(copy, k);
    times.push(performance.now() - t0);
  }
  const call = which === 'server' ? 'createCompressor().compress of a ~20-message corpus request under a 128k window (compressor made at start)'
    : which === 'under' ? 'compressContext of a ~20-message corpus request under a 128k window'
      : 'compressContext of a ~20-message corpus request over its window (about 25% of its tokens)';
  return { call, firstMs: times[0], laterMs: median(times.slice(1)), later: times.length - 1 };
}

/** Runs each case in a process of its own (this file, with the case as argument); their figures. */
export async function firstCalls(): Promise<FirstCallFigure[]> {
  const script = fileURLToPath(import.meta.url);
  const out: FirstCallFigure[] = [];
  for (const which of CASES) {
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['--expose-gc', script, which], { timeout: 120_000 }, (error, so, se) => (error ? reject(new Error(`first-call.js ${which} failed: ${error.message}\n${se}`)) : resolve(so)));
    });
    out.push(JSON.parse(stdout.trim().split('\n').pop()!) as FirstCallFigure);
  }
  return out;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const which = process.argv[2] as Case;
  if (!CASES.includes(which)) {
    process.stderr.write(`usage: first-call.js ${CASES.join('|')}\n`);
    process.exitCode = 2;
  } else {
    measure(which).then((f) => process.stdout.write(`${JSON.stringify(f)}\n`), (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exitCode = 1;
    });
  }
}
