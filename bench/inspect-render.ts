/**
 * How long an `ctxfold inspect --html` page of a 10,000-message history takes to render in
 * headless Chromium (the system's, `/usr/bin/chromium` or CTXFOLD_CHROMIUM, through
 * playwright-core): from the start of navigation to the `data-ready` attribute the page's script
 * sets once it has drawn everything (the HTML read, its embedded JSON parsed, the sections built),
 * and to the end of the load event; the median of 5 fresh pages after one unmeasured, each figure
 * printed. Also prints the page's size against the history's JSON, and saves a screenshot of the
 * page of examples/cli/conversation.json (summarized, cut) to bench/results/inspect.png.
 *
 *     npm run build && node dist/bench/inspect-render.js
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { generateConversation } from './fixtures/conversation.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = join(root, 'dist', 'src', 'cli', 'main.js');
const CHROMIUM = process.env.CTXFOLD_CHROMIUM ?? '/usr/bin/chromium';
const MESSAGES = 10_000;
const RUNS = 5;

function inspect(args: readonly string[]): void {
  const r = spawnSync(process.execPath, [CLI, 'inspect', ...args], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`ctxfold inspect ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ctxfold-inspect-bench-'));
  const browser = await chromium.launch({ executablePath: CHROMIUM });
  try {
    const json = JSON.stringify(generateConversation({ messages: MESSAGES, seed: 5 }));
    const input = join(dir, 'long.json');
    const html = join(dir, 'long.html');
    writeFileSync(input, json);
    inspect(['--max-context-tokens', '20000', input, '--html', html]);
    const pageBytes = statSync(html).size;
    const jsonBytes = Buffer.byteLength(json);
    console.log(`history: ${MESSAGES} messages, ${jsonBytes} bytes of JSON; page: ${pageBytes} bytes (${(pageBytes / jsonBytes).toFixed(2)}x)`);

    const ready: number[] = [];
    const loaded: number[] = [];
    for (let run = 0; run <= RUNS; run++) {
      const page = await browser.newPage();
      await page.goto(pathToFileURL(html).href, { waitUntil: 'load' });
      await page.waitForSelector('html[data-ready]');
      const r = Number(await page.locator('html').getAttribute('data-ready'));
      const l = await page.evaluate(() => {
        const t = (globalThis as unknown as { performance: { getEntriesByType(type: string): { loadEventEnd: number }[] } }).performance.getEntriesByType('navigation')[0];
        return t.loadEventEnd;
      });
      await page.close();
      if (run === 0) continue; // the first page pays the browser's own warm-up
      ready.push(r);
      loaded.push(Math.round(l));
      console.log(`run ${run}: data-ready at ${r} ms, load event ended at ${Math.round(l)} ms after navigation start`);
    }
    console.log(`10,000-message page: data-ready median ${median(ready)} ms, load event end median ${median(loaded)} ms (goal: under 2000 ms)`);

    const shot = join(dir, 'conversation.html');
    inspect(['--max-context-tokens', '1000', '--compression-threshold-tokens', '600', '--summarizer', 'extractive', join(root, 'examples', 'cli', 'conversation.json'), '--html', shot]);
    const page = await browser.newPage({ viewport: { width: 1100, height: 1500 } });
    await page.goto(pathToFileURL(shot).href);
    await page.waitForSelector('html[data-ready]');
    const png = join(root, 'bench', 'results', 'inspect.png');
    await page.screenshot({ path: png });
    await page.close();
    console.log(`screenshot: ${png}`);
  } finally {
    await browser.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
