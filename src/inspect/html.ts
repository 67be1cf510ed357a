import { CtxfoldError } from '../errors.js';
import type { InspectPage } from './model.js';
import { PAGE_SCRIPT } from './page-script.js';
import { PAGE_STYLE } from './page-style.js';

/** `text` with the five characters HTML gives meaning to written as entities. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/**
 * The model as the text of a JSON script element: JSON whose every `<` is written `\u003c`, so no
 * text in it can close the element (`</script>`) or open a comment, and JSON.parse reads it back
 * the same. U+2028 and U+2029 are escaped too.
 */
export function embeddedJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/**
 * One self-contained HTML page for the model: inline style and script, the data as a JSON script
 * element, and a content security policy that lets the page load nothing from anywhere (no
 * network, no font, no image but data: URLs). Every text of the model reaches the page through
 * `textContent` in the script, never as markup.
 */
export function renderPage(page: InspectPage): string {
  if (PAGE_SCRIPT.includes('</') || PAGE_STYLE.includes('</')) throw new CtxfoldError('the page script and style must not hold "</"', { code: 'CTXFOLD_INTERNAL' });
  const title = escapeHtml(page.title);
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">`,
    // An empty icon: a browser asks for /favicon.ico otherwise.
    '<link rel="icon" href="data:,">',
    `<title>${title}</title>`,
    `<style>${PAGE_STYLE}</style>`,
    '</head>',
    '<body>',
    `<main id="app"><h1>${title}</h1><noscript><p>This page is drawn by its own inline script: allow scripts to see it.</p></noscript></main>`,
    `<script type="application/json" id="ctxfold-data">${embeddedJson(page)}</script>`,
    `<script>${PAGE_SCRIPT}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
