import { readFileSync } from 'node:fs';
import { createTokenCounter } from './dist/src/index.js';
const c = createTokenCounter();
const s = readFileSync('/tmp/summ.txt', 'utf8');
const facts = s.slice(s.indexOf('Facts:'), s.indexOf('Conclusions:'));
const lines = facts.split('\n').filter((l) => l.startsWith('- ['));
let all = 0, prov = 0, bodyT = 0, keys = 0;
for (const l of lines) { all += c.text(l); const m = l.match(/^- (\[[^\]]*\]) (.*)$/); if (m) { prov += c.text('- ' + m[1] + ' '); bodyT += c.text(m[2]); keys += c.text((m[2].match(/[\w.]+=/g) ?? []).join(' ')); } }
console.log({ lines: lines.length, all, prov, bodyT, keysApprox: keys, whole: c.text(s) });
