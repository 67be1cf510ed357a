/**
 * The proxy's `/ui` page in a real headless Chromium (the system's, through playwright-core), on a
 * real proxy on 127.0.0.1 with a stand-in upstream: a key is typed in, the page lists that key's
 * chats (and no other key's), one chat's summary, versions and token split appear, the key is
 * nowhere in the page, no console error, and no request leaves the proxy's own origin (every
 * other one is blocked and counted: there must be none).
 * Without a Chromium at /usr/bin/chromium (or CTXFOLD_CHROMIUM), and not under CI, the test skips.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { generateConversation } from '../../bench/fixtures/conversation.js';
import { startServer, type RunningServer } from '../../src/server/index.js';
import { json, startUpstream, type StandInUpstream } from '../helpers/upstream-server.js';

const CHROMIUM = process.env.CTXFOLD_CHROMIUM ?? '/usr/bin/chromium';
const HAS_CHROMIUM = existsSync(CHROMIUM);
const UNDER_CI = Boolean(process.env.CI);
if (!HAS_CHROMIUM && !UNDER_CI) {
  // eslint-disable-next-line no-console
  console.warn(`ui browser test skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CTXFOLD_CHROMIUM; under CI it never skips)`);
}
const browserDescribe = HAS_CHROMIUM || UNDER_CI ? describe : describe.skip;

const KEY_A = 'sk-ui-a-0123456789abcdef';
const KEY_B = 'sk-ui-b-fedcba9876543210';

let upstream: StandInUpstream;
let proxy: RunningServer;
let browser: Browser;

async function send(key: string, chat: string, messages: unknown[]): Promise<void> {
  const res = await fetch(`${proxy.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'x-ctxfold-chat-id': chat },
    body: JSON.stringify({ model: 'ui-model', messages }),
  });
  expect(res.status).toBe(200);
  await res.text();
}

beforeAll(async () => {
  if (!HAS_CHROMIUM && !UNDER_CI) return;
  upstream = await startUpstream((q, res) => json(res, 200, {
    id: 'c', object: 'chat.completion', model: q.body?.model ?? 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  }));
  proxy = await startServer({ upstream: upstream.baseURL, port: 0, store: 'memory', ui: true, maxContextTokens: 2_500, keepLast: 4, logLevel: 'silent' });
  await send(KEY_A, 'alpha', generateConversation({ messages: 100, seed: 41 }));
  await send(KEY_A, 'alpha short', [{ role: 'user', content: 'hello' }]);
  await send(KEY_B, 'beta', generateConversation({ messages: 100, seed: 42 }));
  await proxy.drain();
  browser = await chromium.launch({ executablePath: CHROMIUM });
});

afterAll(async () => {
  await browser?.close();
  await proxy?.close();
  await upstream?.close();
});

browserDescribe('the /ui page in Chromium', () => {
  test('a key typed in lists its chats; one chat shows its summary, versions and token split; the key is never in the page', async () => {
    const page = await browser.newPage();
    const origin = new URL(proxy.url).origin;
    const outside: string[] = [];
    const asked: string[] = [];
    const errors: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (new URL(url).origin === origin) {
        asked.push(new URL(url).pathname);
        return route.continue();
      }
      outside.push(url);
      return route.abort();
    });
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${proxy.url}/ui`);
    await page.waitForSelector('html[data-ready]');

    await page.fill('#key', KEY_A);
    await page.click('button[type=submit]');
    await page.waitForSelector('#chat-list[data-count]');
    expect(await page.locator('#chat-list').getAttribute('data-count')).toBe('2');
    const ids = await page.locator('#chat-list button.chat-pick').allTextContents();
    expect([...ids].sort()).toEqual(['alpha', 'alpha short']);
    // The key field is emptied once read.
    expect(await page.inputValue('#key')).toBe('');

    await page.click('#chat-list button[data-id="alpha"]');
    await page.waitForSelector('#chat[data-chat="alpha"]');
    const details = (await page.locator('#chat').textContent())!;
    expect(details).toMatch(/Summary job: idle/);
    expect(details).toMatch(/Version 1, by the extractive summarizer/);
    expect(details).toMatch(/Versions this proxy committed/);
    // The split's legend: one row per part, the reply reserve last.
    const parts = await page.locator('#chat table.split tr[data-part]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-part')));
    expect(parts).toEqual(['head', 'summary', 'middle', 'tail', 'notes', 'tools', 'overhead', 'reserved']);
    expect(await page.locator('#chat .bar .seg').count()).toBeGreaterThan(0);

    const html = await page.content();
    for (const secret of [KEY_A, KEY_B, 'beta']) expect(html).not.toContain(secret);
    expect(errors).toEqual([]);
    expect(outside).toEqual([]);
    expect(asked).toEqual(['/ui', '/v1/ctxfold/chats', '/v1/ctxfold/chats/alpha']);
    await page.close();
  });
});
