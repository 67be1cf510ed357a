/**
 * The results chart as hand-written SVG: time per request against the number of messages in the
 * request, both axes logarithmic, one line per system. Each line joins the medians of
 * log-spaced bins (5 per decade) of the replay requests of the generated workloads.
 */
import type { RequestRecord } from './call.js';
import { median } from './stats.js';

const COLORS = ['#d62728', '#1f77b4', '#2ca02c', '#9467bd', '#7f7f7f', '#ff7f0e', '#8c564b'];
const W = 820;
const H = 520;
const M = { left: 80, right: 200, top: 50, bottom: 60 };
const BINS_PER_DECADE = 5;

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function superscript(exp: number): string {
  const sup: Record<string, string> = { '-': '⁻', 0: '⁰', 1: '¹', 2: '²', 3: '³', 4: '⁴', 5: '⁵', 6: '⁶', 7: '⁷', 8: '⁸', 9: '⁹' };
  return `10${String(exp).split('').map((c) => sup[c] ?? c).join('')}`;
}

/** Medians per log bin for one system: [messages, ms] pairs sorted by messages. */
function binned(records: readonly RequestRecord[]): [number, number][] {
  const bins = new Map<number, { x: number[]; y: number[] }>();
  for (const r of records) {
    if (r.ms === undefined || r.ms <= 0 || r.messages < 1) continue;
    const b = Math.floor(Math.log10(r.messages) * BINS_PER_DECADE);
    const bin = bins.get(b) ?? { x: [], y: [] };
    bin.x.push(r.messages);
    bin.y.push(r.ms);
    bins.set(b, bin);
  }
  return [...bins.entries()].sort((a, b) => a[0] - b[0]).map(([, v]) => [median(v.x), median(v.y)]);
}

/** Builds the SVG text; `subtitle` names the machine and date. */
export function renderChart(records: readonly RequestRecord[], systems: readonly string[], subtitle: string): string {
  const series = systems
    .map((name, k) => ({ name, color: COLORS[k % COLORS.length], points: binned(records.filter((r) => r.system === name)) }))
    .filter((s) => s.points.length > 0);
  const all = series.flatMap((s) => s.points);
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="Helvetica, Arial, sans-serif" font-size="12">`);
  out.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  out.push(`<text x="${M.left}" y="24" font-size="16" font-weight="bold">Time per request vs conversation length (replay, generated histories)</text>`);
  out.push(`<text x="${M.left}" y="40" fill="#555">${esc(subtitle)}</text>`);
  if (all.length === 0) {
    out.push(`<text x="${W / 2}" y="${H / 2}" text-anchor="middle">no replay data</text></svg>`);
    return out.join('\n');
  }
  const x0 = Math.floor(Math.log10(Math.min(...all.map((p) => p[0]))));
  const x1 = Math.ceil(Math.log10(Math.max(...all.map((p) => p[0]))));
  const y0 = Math.floor(Math.log10(Math.min(...all.map((p) => p[1]))));
  const y1 = Math.ceil(Math.log10(Math.max(...all.map((p) => p[1]))));
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const sx = (v: number) => M.left + ((Math.log10(v) - x0) / Math.max(1, x1 - x0)) * pw;
  const sy = (v: number) => M.top + ph - ((Math.log10(v) - y0) / Math.max(1, y1 - y0)) * ph;
  for (let e = x0; e <= x1; e++) {
    const x = sx(10 ** e).toFixed(1);
    out.push(`<line x1="${x}" y1="${M.top}" x2="${x}" y2="${M.top + ph}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${x}" y="${M.top + ph + 18}" text-anchor="middle">${superscript(e)}</text>`);
  }
  for (let e = y0; e <= y1; e++) {
    const y = sy(10 ** e).toFixed(1);
    out.push(`<line x1="${M.left}" y1="${y}" x2="${M.left + pw}" y2="${y}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${M.left - 8}" y="${y}" text-anchor="end" dominant-baseline="middle">${superscript(e)}</text>`);
  }
  out.push(`<rect x="${M.left}" y="${M.top}" width="${pw}" height="${ph}" fill="none" stroke="#333"/>`);
  out.push(`<text x="${M.left + pw / 2}" y="${H - 16}" text-anchor="middle">messages in the request (log scale)</text>`);
  out.push(`<text transform="translate(22 ${M.top + ph / 2}) rotate(-90)" text-anchor="middle">time per request, ms (log scale)</text>`);
  series.forEach((s, k) => {
    const path = s.points.map(([x, y], i) => `${i === 0 ? 'M' : 'L'}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ');
    out.push(`<path d="${path}" fill="none" stroke="${s.color}" stroke-width="2"/>`);
    for (const [x, y] of s.points) out.push(`<circle cx="${sx(x).toFixed(1)}" cy="${sy(y).toFixed(1)}" r="2.5" fill="${s.color}"/>`);
    const ly = M.top + 12 + k * 20;
    out.push(`<line x1="${M.left + pw + 16}" y1="${ly}" x2="${M.left + pw + 40}" y2="${ly}" stroke="${s.color}" stroke-width="2"/>`);
    out.push(`<text x="${M.left + pw + 46}" y="${ly}" dominant-baseline="middle">${esc(s.name)}</text>`);
  });
  out.push(`<text x="${M.left + pw + 16}" y="${M.top + 12 + series.length * 20 + 8}" fill="#555" font-size="10">median per log bin (${BINS_PER_DECADE}/decade)</text>`);
  out.push('</svg>');
  return out.join('\n');
}
