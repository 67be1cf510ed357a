import { readFileSync } from 'node:fs';
import { createTokenCounter } from './dist/src/index.js';
const c = createTokenCounter();
const s = readFileSync('/tmp/summ.txt', 'utf8');
const fi = s.indexOf('Facts:'), ci = s.indexOf('Conclusions:');
const facts = s.slice(fi, ci);
const rest = s.slice(0, fi) + s.slice(ci);
let dup = 0, tokens = 0, n = 0;
for (const l of facts.split('\n').filter((l) => l.startsWith('- ['))) {
  const body = l.replace(/^- \[[^\]]*\] /, '');
  const parts = body.match(/(?:[\w.]+=)?(?:"[^"]*"|\S+)/g) ?? [];
  for (const p of parts) { n++; const v = p.replace(/^[\w.]+=/, '').replace(/^"|"$/g, ''); if (v.length >= 4 && rest.includes(v)) { dup++; tokens += c.text(' ' + p); } }
}
console.log({ n, dup, tokens });
