/**
 * Prints the benchmark tables of docs/benchmarks.md from `bench/results/latest.json` (a full run),
 * so the figures the docs cite are copied by a program, not by hand (the README's short summary
 * quotes the F = 0.25 rows of the `--economy` table):
 *
 *   npx tsc -p tsconfig.json && node dist/bench/readme-tables.js
 *
 * Prints the time table (median ms per request, good views), the goals, the adapter overhead
 * table, the proxy load table, the small-conversation table (when the run has one) and the fact
 * retention table. Refuses a quick run's results.
 * `--economy` prints the fair-budget retention table from `bench/results/economy.json` instead.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface Row {
  readonly workload: string;
  readonly mode: string;
  readonly system: string;
  readonly requests: number;
  readonly timeouts: number;
  readonly medianMs?: number | null;
  readonly goodPct?: number;
  readonly protectedOverPct?: number;
}

interface Results {
  readonly mode: string;
  readonly date: string;
  readonly machine: { readonly cpu: string; readonly cores: number; readonly node: string };
  readonly loadAverage: { readonly before: number[] };
  readonly rows: Row[];
  readonly goals: { readonly holds: boolean; readonly goal: string; readonly measured: string }[];
  readonly adapterOverhead?: { adapter: string; messages: number; withoutMs: number; withMs: number; overheadMs: number }[];
  readonly proxyLoad?: { row: string; addedP50Ms?: number; addedP99Ms?: number; floorMs?: number; errors: number; timeouts: number; non2xx: number; proxyP99Ms: number; verdict: string; goal: string }[];
  readonly economy?: { readonly retention: readonly RetentionTable[] };
  /** The small-conversation rows (`bench/small.ts`), in runs since they were added. */
  readonly small?: { readonly rows: readonly (Row & { readonly ctxfoldRatio?: number; readonly byteBoundPct?: number })[] };
}

/** The figures of `bench/economy/retention.ts`'s `RetentionRow` docs/benchmarks.md's retention table cites. */
interface RetentionFigures {
  readonly system: string;
  readonly share: number;
  readonly meanKept: number;
  readonly worstTenth: number;
  readonly meanKeptGood: number;
  readonly worstTenthGood: number;
  readonly meanReachable: number;
  readonly worstTenthReachable: number;
  readonly ceiling: number;
  readonly ceilingWorstTenth: number;
}

interface RetentionTable {
  readonly title: string;
  readonly rows: readonly RetentionFigures[];
}

/** The retention table's columns: header, system, and which of its figures (mean, worst tenth). */
const RETENTION_COLUMNS: [string, string, (r: RetentionFigures) => [number, number]][] = [
  ['ctxfold', 'ctxfold', (r) => [r.meanKept, r.worstTenth]],
  ['ctxfold, good views only', 'ctxfold', (r) => [r.meanKeptGood, r.worstTenthGood]],
  ['ctxfold + recall, reachable', 'ctxfold + recall', (r) => [r.meanReachable, r.worstTenthReachable]],
  ['ctxfold, server', 'ctxfold, background (createCompressor)', (r) => [r.meanKept, r.worstTenth]],
  ['ctxfold, no summary', 'ctxfold, no summary', (r) => [r.meanKept, r.worstTenth]],
  ['trimMessages', 'langchain trimMessages', (r) => [r.meanKept, r.worstTenth]],
  ['pruneMessages + cut', 'ai-sdk pruneMessages', (r) => [r.meanKept, r.worstTenth]],
  ['ceiling', 'ctxfold', (r) => [r.ceiling, r.ceilingWorstTenth]],
];

/** A share kept as docs/benchmarks.md's retention table writes it: mean (worst tenth), one decimal. */
function keptText([mean, worst]: [number, number]): string {
  return `${(100 * mean).toFixed(1)}% (${(100 * worst).toFixed(1)}%)`;
}

const COLUMNS = ['ctxfold', 'JSON.parse', 'langchain trimMessages', 'langchain trimMessages + memo', 'ai-sdk pruneMessages', 'ai-sdk pruneMessages + memo', 'slice(-N)'];
const HEADERS = ['ctxfold', 'JSON.parse', 'trimMessages', 'trimMessages + memo', 'pruneMessages + cut', 'pruneMessages + memo', 'slice(-N)'];
const WORKLOADS: [string, string][] = [['corpus', 'corpus'], ['gen-2k', '2k messages'], ['gen-10k', '10k messages'], ['gen-100k', '100k messages']];

/** A share as docs/benchmarks.md writes it: whole percent. */
function pctText(x: number | undefined): string {
  return x === undefined ? '-' : `${Math.round(x)}%`;
}

/** A time as docs/benchmarks.md writes it: 3 significant digits, thousands separated. */
function ms(x: number | null | undefined): string {
  if (x === undefined || x === null || Number.isNaN(x)) return '-';
  if (x >= 1000) return Math.round(x).toLocaleString('en-US');
  if (x >= 100) return x.toFixed(1);
  return x.toFixed(2);
}

/** The fair-budget retention table's columns (`--economy`, from economy.json): header, system, figures. */
const FAIR_COLUMNS: [string, string, (r: RetentionFigures) => [number, number]][] = [
  ['ctxfold one-shot', 'ctxfold', (r) => [r.meanKept, r.worstTenth]],
  ['naive newest-groups cut', 'naive newest-groups cut', (r) => [r.meanKept, r.worstTenth]],
  ['trimMessages', 'langchain trimMessages', (r) => [r.meanKept, r.worstTenth]],
  ['pruneMessages + cut', 'ai-sdk pruneMessages', (r) => [r.meanKept, r.worstTenth]],
  ['slice(-N), good views', 'slice(-N)', (r) => [r.meanKeptGood, r.worstTenthGood]],
  ['ceiling', 'ctxfold', (r) => [r.ceiling, r.ceilingWorstTenth]],
];

/** `--economy`: the fair-budget retention table of `bench/results/economy.json` (a full `--economy` run). */
function economyTable(root: string): void {
  const results = JSON.parse(readFileSync(join(root, 'bench', 'results', 'economy.json'), 'utf8')) as { mode: string; date: string; machine: { node: string }; retention: { title: string; rows: RetentionFigures[] }[] };
  if (results.mode !== 'full') throw new Error(`economy.json holds a ${results.mode} run; docs/benchmarks.md cites full runs only`);
  const lines = [`Run of ${results.date.slice(0, 10)} (Node ${results.machine.node.replace(/^v/, '')}), budget = floor + F x rest; mean (worst tenth):`, ''];
  lines.push(`| conversations | F | ${FAIR_COLUMNS.map(([h]) => h).join(' | ')} |`, `| --- | ---: |${FAIR_COLUMNS.map(() => ' ---: |').join('')}`);
  for (const table of results.retention) {
    const name = table.title.replace(/ \(.*$/, '');
    for (const share of [...new Set(table.rows.map((r) => r.share))]) {
      const cells = FAIR_COLUMNS.map(([, system, figures]) => {
        const row = table.rows.find((r) => r.system === system && r.share === share);
        return row === undefined ? '-' : keptText(figures(row));
      });
      lines.push(`| ${name} | ${share} | ${cells.join(' | ')} |`);
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

function main(): void {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  if (process.argv.includes('--economy')) return economyTable(root);
  const results = JSON.parse(readFileSync(join(root, 'bench', 'results', 'latest.json'), 'utf8')) as Results;
  if (results.mode !== 'full') throw new Error(`latest.json holds a ${results.mode} run; docs/benchmarks.md cites full runs only`);
  const find = (workload: string, mode: string, system: string) => results.rows.find((r) => r.workload === workload && r.mode === mode && r.system === system);
  const cell = (r: Row | undefined) => (r === undefined ? '-' : r.timeouts > 0 && (r.medianMs === undefined || r.medianMs === null) ? 'timed out' : ms(r.medianMs));
  const lines = [`Run of ${results.date.slice(0, 10)}: ${results.machine.cpu}, ${results.machine.cores} cores, Node ${results.machine.node.replace(/^v/, '')}, load average ${results.loadAverage.before[0].toFixed(2)} at the start.`, ''];
  lines.push(`| workload | ${HEADERS.join(' | ')} |`, `| --- |${HEADERS.map(() => ' ---: |').join('')}`);
  for (const [key, label] of WORKLOADS) {
    for (const mode of ['cold', 'replay']) {
      const n = find(key, mode, 'ctxfold')?.requests;
      // A peer whose cold call timed out is left out of that workload's replay.
      const shown = (c: string) => (mode === 'replay' && !find(key, mode, c) && find(key, 'cold', c)?.timeouts ? 'skipped' : cell(find(key, mode, c)));
      lines.push(`| ${label}, ${mode}${key === 'corpus' && n ? ` (${n})` : ''} | ${COLUMNS.map(shown).join(' | ')} |`);
    }
    if (key === 'corpus') {
      lines.push(`| corpus, good views (replay) | ${COLUMNS.map((c) => (c === 'JSON.parse' ? '' : pctText(find(key, 'replay', c)?.goodPct))).join(' | ')} |`);
      lines.push(`| corpus, over budget only by keepFirst + keepLast (replay) | ${COLUMNS.map((c) => { const v = find(key, 'replay', c)?.protectedOverPct; return c === 'JSON.parse' || v === undefined ? '' : pctText(v); }).join(' | ')} |`);
    }
  }
  const generated = (c: string) => {
    const pcts = results.rows.filter((r) => r.workload.startsWith('gen-') && r.system === c && r.goodPct !== undefined).map((r) => r.goodPct!);
    if (pcts.length === 0) return '-';
    const lo = Math.min(...pcts);
    const hi = Math.max(...pcts);
    return lo === hi ? pctText(lo) : `${pctText(lo)}–${pctText(hi)}`;
  };
  lines.push(`| generated, good views | ${COLUMNS.map((c) => (c === 'JSON.parse' ? '' : generated(c))).join(' | ')} |`);
  lines.push('', 'Goals:', '');
  for (const g of results.goals) lines.push(`- [${g.holds ? 'PASS' : 'MISS'}] ${g.goal}: ${g.measured}`);
  if (results.small) {
    // Small conversations: ctxfold / JSON.parse of the same body (median over requests), and the share the byte bound decided.
    const smallRow = (w: string, mode: string, system: string) => results.small!.rows.find((r) => r.workload === w && r.mode === mode && r.system === system);
    lines.push('', '| small conversation | window | cold: ctxfold / JSON.parse | warm: ctxfold / JSON.parse | byte bound decided (cold) |', '| --- | --- | ---: | ---: | ---: |');
    for (const w of [...new Set(results.small.rows.map((r) => r.workload))]) {
      const [size, windowCase] = w.slice('small-'.length).split('/');
      const ratio = (mode: string) => smallRow(w, mode, 'JSON.parse')?.ctxfoldRatio?.toFixed(2) ?? '-';
      const bytes = smallRow(w, 'cold', 'ctxfold')?.byteBoundPct;
      lines.push(`| ${size} messages | ${windowCase} | ${ratio('cold')}x | ${ratio('replay')}x | ${bytes === undefined ? '-' : `${Math.round(bytes)}%`} |`);
    }
  }
  if (results.adapterOverhead) {
    lines.push('', '| adapter (row) | messages | SDK alone (ms) | with ctxfold (ms) | difference (ms) |', '| --- | ---: | ---: | ---: | ---: |');
    for (const r of results.adapterOverhead) lines.push(`| ${r.adapter} | ${r.messages.toLocaleString('en-US')} | ${ms(r.withoutMs)} | ${ms(r.withMs)} | ${r.overheadMs >= 0 ? '+' : ''}${r.overheadMs.toFixed(2)} |`);
  }
  if (results.proxyLoad) {
    lines.push('', '| proxy load (row) | added p50 (ms) | added p99 (ms) | floor: parse + stringify (ms) | failures | goal |', '| --- | ---: | ---: | ---: | ---: | --- |');
    for (const r of results.proxyLoad) {
      const failures = r.errors + r.timeouts + r.non2xx;
      lines.push(`| ${r.row} | ${r.addedP50Ms === undefined ? '-' : r.addedP50Ms.toFixed(2)} | ${r.addedP99Ms === undefined ? '-' : r.addedP99Ms.toFixed(2)} | ${r.floorMs === undefined ? '-' : r.floorMs.toFixed(2)} | ${failures} | ${r.verdict}: ${r.goal} |`);
    }
  }
  if (results.economy) {
    lines.push('', `| conversations | budget | ${RETENTION_COLUMNS.map(([h]) => h).join(' | ')} |`, `| --- | ---: |${RETENTION_COLUMNS.map(() => ' ---: |').join('')}`);
    for (const table of results.economy.retention) {
      // "corpus (all)", "code-agent (20 conversations, 200-400 messages)": the name before the parenthesis.
      const name = table.title.replace(/ \(.*$/, '');
      for (const share of [...new Set(table.rows.map((r) => r.share))]) {
        const cells = RETENTION_COLUMNS.map(([, system, figures]) => {
          const row = table.rows.find((r) => r.system === system && r.share === share);
          return row === undefined ? '-' : keptText(figures(row));
        });
        lines.push(`| ${name} | ${Math.round(share * 100)}% | ${cells.join(' | ')} |`);
      }
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main();
