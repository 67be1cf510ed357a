/**
 * `ctxfold inspect --html` pages, opened in a real headless Chromium (the system's, through
 * playwright-core). Each page is made by the built CLI (`npm run build` first) and served from
 * 127.0.0.1; every request that is not the page itself is blocked and counted (there must be
 * none), console errors are collected (there must be none), and the DOM is checked against what
 * the test works out on its own: the groups of an OpenAI history counted from the raw messages,
 * the cut and the summary's coverage from `ctxfold compress`'s report of the same flags.
 * Without a Chromium at /usr/bin/chromium (or CTXFOLD_CHROMIUM), and not under CI, the tests skip.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { generateConversation } from '../bench/fixtures/conversation.js';
import { convertMessages } from '../src/formats/convert.js';
import { LENSES, SUPPORTED_FORMATS } from '../src/formats/registry.js';
import type { FormatName } from '../src/formats/lens.js';
import { HAS_CORPUS, loadCorpus } from './helpers/corpus.js';
import { listenOnLoopback, type Loopback } from './helpers/loopback.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(root, 'dist', 'src', 'cli', 'main.js');
const CHROMIUM = process.env.CTXFOLD_CHROMIUM ?? '/usr/bin/chromium';
const HAS_CHROMIUM = existsSync(CHROMIUM);
const UNDER_CI = Boolean(process.env.CI);
if (!HAS_CHROMIUM && !UNDER_CI) {
  // eslint-disable-next-line no-console
  console.warn(`inspect browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CTXFOLD_CHROMIUM; under CI they never skip)`);
}
const browserDescribe = HAS_CHROMIUM || UNDER_CI ? describe : describe.skip;

/** The browser globals the page callbacks read (the tests compile without the DOM library): `(globalThis as unknown as InPage).document`. */
interface InPage {
  document: {
    activeElement: { id: string; getAttribute(name: string): string | null; getBoundingClientRect(): { top: number } } | null;
    documentElement: { scrollWidth: number; clientWidth: number };
  };
  innerHeight: number;
  scrollTo(x: number, y: number): void;
  __ran?: number;
}

interface RawMessage {
  role: string;
  tool_calls?: { id: string; function: { name: string } }[];
  tool_call_id?: string;
}

/**
 * The oracle: atomic groups of an OpenAI Chat history, counted from the raw messages by their own
 * rule. An assistant message with tool_calls, the tool messages right after it that answer its
 * calls, and (when every call is answered) the assistant reply right after them that opens no
 * calls, are one group; every other message is a group of its own.
 */
function oracleGroupCount(messages: readonly RawMessage[]): number {
  let groups = 0;
  let i = 0;
  while (i < messages.length) {
    const m = messages[i];
    groups++;
    i++;
    if (m.role !== 'assistant' || !m.tool_calls?.length) continue;
    const open = new Set(m.tool_calls.map((c) => c.id));
    while (i < messages.length && messages[i].role === 'tool' && open.has(messages[i].tool_call_id!)) open.delete(messages[i++].tool_call_id!);
    if (open.size === 0 && i < messages.length && messages[i].role === 'assistant' && !messages[i].tool_calls?.length) i++;
  }
  return groups;
}

interface Report {
  headEnd: number;
  messagesBefore: number;
  groups: { count: number };
  dropped: { index: number; reason: 'summarized' | 'budget' }[];
  summary: { applied: boolean; coveredMessages: number };
}

/** Where the page must put its cut: right after the last message the report says was left out, if any is kept after it. */
function expectedCut(report: Report): number | undefined {
  if (report.dropped.length === 0) return undefined;
  const last = Math.max(...report.dropped.map((d) => d.index)) + 1;
  return last < report.messagesBefore ? last : undefined;
}

function ctxfold(args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: root, encoding: 'utf8', maxBuffer: 512 * 1024 * 1024, env: { ...process.env, CTXFOLD_DEBUG: '' } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The reports `ctxfold compress` gives for `file` with `flags`, one per record. */
function reportsOf(file: string, flags: readonly string[]): Report[] {
  const r = ctxfold(['compress', '--quiet', ...flags, file]);
  expect(r.stderr).toBe('');
  return r.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { ctxfold: Report }).ctxfold);
}

const dir = mkdtempSync(join(tmpdir(), 'ctxfold-inspect-'));
let browser: Browser;
let server: Loopback;

/** Writes `name` (a history) in the scratch folder and makes its page with `flags`; returns the page's name. */
function makePage(name: string, text: string, flags: readonly string[]): { input: string; html: string } {
  const input = join(dir, name);
  writeFileSync(input, text);
  const html = `${basename(name).replace(/\.\w+$/, '')}.html`;
  const r = ctxfold(['inspect', ...flags, input, '--html', join(dir, html)]);
  expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
  expect(r.stdout).toMatch(/^ctxfold inspect: wrote .*\.html: \d+ histor(y|ies), \d+ groups, \d+ bytes\n$/);
  return { input, html };
}

interface Opened {
  readonly page: Page;
  readonly requests: string[];
  readonly errors: string[];
}

/** Opens a page of the scratch folder, every other request blocked and counted, console errors kept; resolves once it set data-ready. */
async function open(html: string): Promise<Opened> {
  const page = await browser.newPage();
  const url = `http://127.0.0.1:${server.port}/${html}`;
  const requests: string[] = [];
  const errors: string[] = [];
  await page.route('**/*', (route) => {
    const asked = route.request().url();
    if (asked === url) return route.continue();
    requests.push(asked);
    return route.abort();
  });
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  await page.waitForSelector('html[data-ready]');
  return { page, requests, errors };
}

/** Opens every collapsed block, so each group is in the DOM. */
async function openEveryBlock(page: Page): Promise<void> {
  for (const b of await page.locator('button.expand-all').all()) await b.click();
}

const groupsInDom = (page: Page, section = 0) => page.locator(`#h${section} [data-group]`).count();

beforeAll(async () => {
  if (!HAS_CHROMIUM && !UNDER_CI) return;
  browser = await chromium.launch({ executablePath: CHROMIUM });
  server = await listenOnLoopback(createServer((req, res) => {
    const name = basename(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
    const path = join(dir, name);
    if (!name.endsWith('.html') || !existsSync(path)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(readFileSync(path));
  }));
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

browserDescribe('ctxfold inspect --html in Chromium', () => {
  (HAS_CORPUS ? test : test.skip)('a real conversation, summarized and cut: groups, cut, coverage, ledger links, j/k', async () => {
    const conversation = loadCorpus().reduce((a, b) => (b.messages.length > a.messages.length ? b : a));
    const flags = ['--max-context-tokens', '3000', '--compression-threshold-tokens', '1500', '--summarizer', 'extractive'];
    const { input, html } = makePage('corpus.json', JSON.stringify(conversation.messages), flags);
    const [report] = reportsOf(input, flags);
    expect(report.summary.applied).toBe(true);
    const { page, requests, errors } = await open(html);
    await openEveryBlock(page);
    expect(await groupsInDom(page)).toBe(oracleGroupCount(conversation.messages as RawMessage[]));

    const cut = expectedCut(report);
    expect(cut).toBeDefined();
    expect(await page.locator('[data-cut]').getAttribute('data-cut')).toBe(String(cut));
    // The group right after the cut starts where the report resumes.
    expect(await page.locator('[data-cut] + [data-group]').getAttribute('data-start')).toBe(String(cut));

    const summarized = report.dropped.filter((d) => d.reason === 'summarized').map((d) => d.index);
    expect(summarized.length).toBe(report.summary.coveredMessages);
    const marked = await page.locator('#h0 .msg[data-fate="summarized"]').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-index'))));
    expect(marked).toEqual(summarized);
    expect(await page.locator('#h0 .msg[data-fate="summarized"] .badge-covered').count()).toBe(summarized.length);

    // A ledger line names its source's message as @n, counted from 1 at the first summarized message.
    const ledger = page.locator('a.ledger').first();
    const line = (await ledger.textContent())!;
    const [, source, n] = /^- \[(\S+?)(?:#\d+)? @(\d+)/.exec(line)!;
    const target = report.headEnd + Number(n) - 1;
    expect(await ledger.getAttribute('data-target')).toBe(String(target));
    // A line names a turn by its role, or a tool: its call (the assistant message) or its result.
    const raw = conversation.messages as RawMessage[];
    const m = raw[target];
    let named = m.role;
    if (m.role === 'tool') named = raw.slice(0, target).flatMap((x) => x.tool_calls ?? []).reverse().find((c) => c.id === m.tool_call_id)?.function.name ?? '?';
    else if (m.tool_calls?.some((c) => c.function.name === source)) named = source;
    expect(named).toBe(source);
    await page.evaluate(() => (globalThis as unknown as InPage).scrollTo(0, 0));
    await ledger.click();
    const focused = await page.evaluate(() => {
      const w = globalThis as unknown as InPage;
      return { id: w.document.activeElement?.id, top: w.document.activeElement?.getBoundingClientRect().top ?? -1, height: w.innerHeight };
    });
    expect(focused.id).toBe(`h0-m${target}`);
    expect(focused.top).toBeGreaterThanOrEqual(0);
    expect(focused.top).toBeLessThan(focused.height);

    // j and k move the focus from group to group.
    const nav = page.locator('[data-nav]');
    await nav.nth(0).focus();
    await page.keyboard.press('j');
    expect(await page.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.getAttribute('data-group'))).toBe('1');
    await page.keyboard.press('j');
    await page.keyboard.press('k');
    expect(await page.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.getAttribute('data-group'))).toBe('1');
    await page.keyboard.press('k');
    expect(await page.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.getAttribute('data-group'))).toBe('0');
    // Each group is focusable and says what it is and what happened to it.
    const label = await page.locator('[data-group="0"]').getAttribute('aria-label');
    expect(label).toMatch(/^Group 1 of \d+: (system|user|assistant|tool round|tool result|other), (head|summarized|dropped for room|sent verbatim|kept tail|held user turn); /);
    expect(await page.locator('[data-group]:not([tabindex="0"])').count()).toBe(0);
    expect(await page.locator('.check .ok').textContent()).toBe('0 issues: the openai rules accept the view.');

    expect(requests).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  test.each(readdirSync(join(root, 'examples', 'formats')).filter((f) => f.endsWith('.json')))('examples/formats/%s: format detected, every group shown, the cut where the report says', async (file) => {
    const text = readFileSync(join(root, 'examples', 'formats', file), 'utf8');
    const flags = ['--max-context-tokens', '400', '--keep-last', '2'];
    const { input, html } = makePage(`example-${file}`, text, flags);
    const [report] = reportsOf(input, flags);
    const { page, requests, errors } = await open(html);
    await openEveryBlock(page);
    const format = file.replace(/\.json$/, '');
    expect(await page.locator('#h0-title').textContent()).toContain(`: ${format}, `);
    const expected = format === 'openai' ? oracleGroupCount((JSON.parse(text) as { messages: RawMessage[] }).messages) : report.groups.count;
    expect(await groupsInDom(page)).toBe(expected);
    const cut = expectedCut(report);
    expect(await page.locator('[data-cut]').evaluateAll((els) => els.map((e) => e.getAttribute('data-cut')))).toEqual(cut === undefined ? [] : [String(cut)]);
    expect(requests).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  test('a generated conversation in every format, as JSONL: one section per history, an index at the top', async () => {
    const chat = generateConversation({ messages: 160, seed: 11 });
    const bodies = SUPPORTED_FORMATS.map((format: FormatName) => {
      const c = convertMessages(chat, { from: 'openai', to: format });
      const lens = LENSES[format]!;
      return { [lens.request.messagesField]: c.messages, ...(c.instructions !== undefined && lens.request.systemField ? { [lens.request.systemField]: c.instructions } : {}) };
    });
    const flags = ['--max-context-tokens', '6000', '--compression-threshold-tokens', '4000', '--summarizer', 'extractive'];
    const { input, html } = makePage('every-format.jsonl', `${bodies.map((b) => JSON.stringify(b)).join('\n')}\n`, flags);
    const reports = reportsOf(input, flags);
    expect(reports.map((r) => r.summary.applied)).toEqual(SUPPORTED_FORMATS.map(() => true));
    const { page, requests, errors } = await open(html);
    await openEveryBlock(page);
    expect(await page.locator('nav.index li').count()).toBe(SUPPORTED_FORMATS.length);
    expect(await page.locator('section.history').count()).toBe(SUPPORTED_FORMATS.length);
    for (let k = 0; k < SUPPORTED_FORMATS.length; k++) {
      const format = SUPPORTED_FORMATS[k];
      expect(await page.locator(`#h${k}-title`).textContent()).toContain(`: ${format}, `);
      expect(await groupsInDom(page, k)).toBe(format === 'openai' ? oracleGroupCount(chat as RawMessage[]) : reports[k].groups.count);
      const cut = expectedCut(reports[k]);
      expect(await page.locator(`#h${k} [data-cut]`).evaluateAll((els) => els.map((e) => e.getAttribute('data-cut')))).toEqual(cut === undefined ? [] : [String(cut)]);
      expect(await page.locator(`#h${k} .msg[data-fate="summarized"]`).count()).toBe(reports[k].dropped.filter((d) => d.reason === 'summarized').length);
      // The summary is found in every format's view, and its ledger lines link into the section.
      expect(await page.locator(`#h${k} a.ledger`).count()).toBeGreaterThan(0);
      expect(await page.locator(`#h${k} a.ledger`).evaluateAll((els, section) => els.every((e) => e.getAttribute('data-h') === String(section)), k)).toBe(true);
    }
    expect(requests).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  test('a 10,000-message history renders completely, in a page under 5x its JSON', async () => {
    const chat = generateConversation({ messages: 10_000, seed: 5 });
    const json = JSON.stringify(chat);
    const { html } = makePage('long.json', json, ['--max-context-tokens', '20000']);
    expect(statSync(join(dir, html)).size).toBeLessThan(5 * Buffer.byteLength(json));
    const { page, requests, errors } = await open(html);
    expect(Number(await page.locator('html').getAttribute('data-ready'))).toBeGreaterThan(0);
    // Long runs start folded into blocks; opened, every group is there.
    expect(await page.locator('button.block-toggle').count()).toBeGreaterThan(0);
    await openEveryBlock(page);
    expect(await groupsInDom(page)).toBe(oracleGroupCount(chat as RawMessage[]));
    expect(requests).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  test('a repaired history and cleared tool results are marked, each with a text label', async () => {
    const broken = readFileSync(join(root, 'examples', 'cli', 'broken.json'), 'utf8');
    const repaired = makePage('broken.json', broken, []);
    const [report] = reportsOf(repaired.input, []).map((r) => r as Report & { repaired: { action: string; index: number }[] });
    expect(report.repaired.map((a) => a.action)).toEqual(['removed-orphan']);
    let { page, requests, errors } = await open(repaired.html);
    // The removed result is named where it stood: before the message that now follows its place.
    expect(await page.locator('.repair-note').allTextContents()).toEqual([expect.stringContaining(`removed-orphan of input message ${report.repaired[0].index}`)]);
    expect(await page.locator('#h0-m2 .repair-note').count()).toBe(1);
    expect(await page.locator('[data-group] .badge-repaired').count()).toBeGreaterThan(0);
    expect(requests).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();

    // Without repair, the provider's objection stands on the message it is about.
    const unrepaired = makePage('unrepaired.json', broken, ['--no-repair']);
    ({ page, requests, errors } = await open(unrepaired.html));
    expect(await page.locator('.check li').count()).toBe(1);
    expect(await page.locator('#h0-m2 .issue').textContent()).toMatch(/^Provider issue \(openai\): result-orphan: /);
    expect(await page.locator('.issue').count()).toBe(1);
    expect(requests).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();

    const chat = generateConversation({ messages: 200, seed: 3 });
    const flags = ['--max-context-tokens', '8000', '--tool-output-trim', '300'];
    const trimmed = makePage('trimmed.json', JSON.stringify(chat), flags);
    const [cut] = reportsOf(trimmed.input, flags).map((r) => r as Report & { collapsed: { index: number }[] });
    expect(cut.collapsed.length).toBeGreaterThan(0);
    ({ page, requests, errors } = await open(trimmed.html));
    await openEveryBlock(page);
    const cleared = await page.locator('.msg:has(> .msg-head .badge-cleared)').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-index'))));
    expect(cleared).toEqual(cut.collapsed.map((c) => c.index));
    expect(await groupsInDom(page)).toBe(oracleGroupCount(chat as RawMessage[]));
    expect(requests).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  test('text that looks like markup is shown as text: no script runs, nothing is fetched', async () => {
    const evil = '</script><script>window.__ran = 1</script><img src="http://example.invalid/x.png"> <!-- & "quotes"';
    const chat = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: evil }, { role: 'assistant', content: `You said: ${evil}` }];
    const { html } = makePage('markup.json', JSON.stringify(chat), []);
    const { page, requests, errors } = await open(html);
    expect(await page.evaluate(() => (globalThis as unknown as InPage).__ran)).toBeUndefined();
    expect(await page.locator('#h0-m1 pre.body').textContent()).toBe(evil);
    expect(await page.locator('img').count()).toBe(0);
    expect(requests).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  test('a long body shows its start, and "show all" the rest from the embedded data; at 200% zoom nothing overflows', async () => {
    const long = `start ${'x'.repeat(2000)} end`;
    const { html } = makePage('long-body.json', JSON.stringify([{ role: 'user', content: long }, { role: 'assistant', content: 'ok' }]), []);
    const { page, errors } = await open(html);
    const body = page.locator('#h0-m0 pre.body');
    expect((await body.textContent())!.length).toBeLessThan(long.length);
    await page.locator('#h0-m0 button.more').click();
    expect(await body.textContent()).toBe(long);
    // At 200% zoom a 1280-pixel screen is 640 CSS pixels wide: nothing overflows it sideways.
    await page.setViewportSize({ width: 640, height: 800 });
    const widths = await page.evaluate(() => {
      const w = globalThis as unknown as InPage;
      return { scroll: w.document.documentElement.scrollWidth, client: w.document.documentElement.clientWidth };
    });
    expect(widths.scroll).toBeLessThanOrEqual(widths.client);
    expect(errors).toEqual([]);
    await page.close();
  });
});
