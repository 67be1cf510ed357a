import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { CtxfoldError } from '../errors.js';
import { escapeHtml } from '../inspect/html.js';
import { PAGE_STYLE } from '../inspect/page-style.js';
import { UI_SCRIPT } from './ui-script.js';

/** What the chats page adds to the inspect page's style sheet. */
const UI_STYLE = `
form.login { display: flex; flex-wrap: wrap; gap: 0.5rem 1rem; align-items: end; margin: 1rem 0; }
form.login label { display: flex; flex-direction: column; font-weight: 600; }
form.login input[type=password], form.login input[type=text] { font: inherit; padding: 0.2rem 0.4rem; min-width: 16rem; }
form.login label.check { flex-direction: row; gap: 0.3rem; font-weight: 400; align-items: center; }
#chat-list { list-style: none; padding: 0; } #chat-list li { margin: 0.2rem 0; }
.chat-pick { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
pre.ids { max-height: 20rem; overflow: auto; }
`;

/** sha256 of the inline script, so the policy runs that script and no other. */
const SCRIPT_HASH = createHash('sha256').update(UI_SCRIPT).digest('base64');

/**
 * The headers of the page: a content security policy that runs only its own inline script, lets
 * it fetch only from the proxy's own origin, loads nothing else from anywhere, and lets no other
 * site frame it; no referrer; never cached.
 */
const PAGE_HEADERS = Object.freeze({
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': `default-src 'none'; script-src 'sha256-${SCRIPT_HASH}'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
});

/**
 * The chats page: one self-contained HTML document (inline style and script, no data in it: the
 * same bytes for every caller but for the tenant header's name, which is configuration). The
 * script asks for the key and reads the caller's chats from `/v1/ctxfold/chats`.
 */
export function uiPage(tenantHeader: string): string {
  if (UI_SCRIPT.includes('</') || PAGE_STYLE.includes('</') || UI_STYLE.includes('</')) throw new CtxfoldError('the page script and style must not hold "</"', { code: 'CTXFOLD_INTERNAL' });
  const header = escapeHtml(tenantHeader);
  return [
    '<!doctype html>',
    `<html lang="en" data-tenant-header="${header}">`,
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<link rel="icon" href="data:,">',
    '<title>ctxfold: your chats</title>',
    `<style>${PAGE_STYLE}${UI_STYLE}</style>`,
    '</head>',
    '<body>',
    '<main id="app">',
    '<h1>ctxfold: your chats</h1>',
    '<noscript><p>This page is drawn by its own inline script: allow scripts to see it.</p></noscript>',
    '<p class="hint">Enter the API key your chats were made with. It is kept in this tab only (in memory; in session storage too if you tick the box), sent as <code>Authorization: Bearer</code> to this proxy only, and never shown. The proxy answers with that key\'s chats and nothing else.</p>',
    '<form id="login" class="login" autocomplete="off">',
    '<label for="key"><span>API key</span> <input id="key" name="key" type="password" autocomplete="off" spellcheck="false"></label>',
    `<label for="tenant"><span>Tenant (<code>${header}</code>, optional)</span> <input id="tenant" name="tenant" type="text" autocomplete="off" spellcheck="false"></label>`,
    '<label class="check" for="remember"><input id="remember" type="checkbox"> keep for this tab</label>',
    '<button type="submit">Show my chats</button>',
    '<button type="button" id="refresh">Refresh</button>',
    '<button type="button" id="forget">Forget the key</button>',
    '</form>',
    '<p id="status" class="hint" role="status"></p>',
    '<section aria-labelledby="chats-h"><h2 id="chats-h">Chats</h2><ul id="chat-list"></ul></section>',
    '<section id="chat" aria-live="polite"></section>',
    '</main>',
    `<script>${UI_SCRIPT}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/** Answers `GET /ui` with the page; resolves with the status answered. */
export function serveUi(res: ServerResponse, page: string): number {
  res.writeHead(200, { ...PAGE_HEADERS, 'content-length': Buffer.byteLength(page) });
  res.end(page);
  return 200;
}
