/**
 * Prints how many facts each system's view keeps at 25% and 50% of each conversation's tokens, on
 * (a) the shared corpus (200 real conversations; skipped with a message when absent) and (b) 20
 * conversations of 200-400 messages (seeded) of each generated domain (`DOMAINS`: a code agent, a
 * support agent, an on-call operations agent). Run:
 *
 *   npx tsc -p tsconfig.json && node dist/bench/economy/retention-report.js [--quick]
 *
 * `--quick` runs every 10th corpus conversation and 4 generated conversations per domain.
 * Nothing is written to disk.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { createTokenCounter, type OpenAIChatMessage } from '../../src/index.js';
import { DOMAINS } from '../fixtures/domains/index.js';
import { FAIR_BUDGET_RULE } from '../budget.js';
import { goalLines } from './retention-goals.js';
import { measureRetention, type RetentionRow, type RetentionSystem } from './retention.js';
import { CTXFOLD_BACKGROUND, CTXFOLD_NO_SUMMARY, CTXFOLD_RECALL, CTXFOLD_RECALL_BACKGROUND, NAIVE_CUT, RETENTION_SYSTEMS } from './retention-systems.js';

/** Shares of the fair budget (`floor + F x rest`). */
const SHARES = [0.1, 0.25, 0.5];
const root = fileURLToPath(new URL('../../../', import.meta.url));
const corpusFile = join(root, '..', 'shared', 'corpus', 'tau-bench-airline-gpt4o.jsonl');
const systems: RetentionSystem[] = [...RETENTION_SYSTEMS, NAIVE_CUT, CTXFOLD_RECALL, CTXFOLD_NO_SUMMARY, CTXFOLD_BACKGROUND, CTXFOLD_RECALL_BACKGROUND];

function pct(x: number): string {
  return Number.isNaN(x) ? '-' : `${(100 * x).toFixed(1)}%`;
}

/** Missed facts by kind, largest first, as shares of all missed (`number 61% (1,234), date 12% (240)`). */
function byKind(missed: RetentionRow['missedByKind']): string {
  const entries = Object.entries(missed).filter(([, n]) => (n ?? 0) > 0) as [string, number][];
  const total = entries.reduce((a, [, n]) => a + n, 0);
  if (total === 0) return 'nothing';
  return entries.sort((a, b) => b[1] - a[1]).map(([kind, n]) => `${kind} ${pct(n / total)} (${n.toLocaleString('en-US')})`).join(', ');
}

function table(title: string, rows: readonly RetentionRow[], log: (line: string) => void): void {
  const lines = [
    `\n### ${title}`,
    '',
    '| F | system | mean kept | worst tenth | kept, good views only | worst tenth | reachable (recall) | worst tenth | reused kept | within budget | valid | sent/budget (median) | recall announced | errors |',
    '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const r of rows) {
    lines.push(`| ${r.share} | ${r.system} | ${pct(r.meanKept)} | ${pct(r.worstTenth)} | ${pct(r.meanKeptGood)} | ${pct(r.worstTenthGood)} | ${pct(r.meanReachable)} | ${pct(r.worstTenthReachable)} | ${pct(r.reusedKept)} | ${pct(r.withinBudget)} | ${pct(r.valid)} | ${Number.isNaN(r.medianSent) ? '-' : r.medianSent.toFixed(2)} | ${pct(r.recallAnnounced)} | ${r.errors} |`);
  }
  const first = rows[0];
  if (first) {
    lines.push('', `${first.conversations} conversations, ${first.meanFacts.toFixed(1)} facts each on average; budget = floor + F x rest (the floor: system messages, the last user message and the newest exchange after it).`);
    lines.push(`Values-only ceiling (the most facts any view within the budget could carry, values alone, cheapest per fact carried first; an estimate): ${SHARES.map((s) => {
      const r = rows.find((row) => row.share === s);
      return `${pct(r?.ceiling ?? Number.NaN)} mean, ${pct(r?.ceilingWorstTenth ?? Number.NaN)} worst tenth at F = ${s}`;
    }).join('; ')}.`);
    lines.push(`What ${first.system} leaves out, by the checker's kind of fact (share of the facts its views miss, over all conversations): ${SHARES.map((s) => {
      const r = rows.find((row) => row.share === s && row.system === first.system);
      return `at F = ${s}: ${r ? byKind(r.missedByKind) : '-'}`;
    }).join('; ')}.`);
  }
  const goals = goalLines(rows);
  if (goals.length > 0) lines.push('', 'Goals:', ...goals);
  log(lines.join('\n'));
}

/** The retention table of one set of conversations. */
export interface RetentionTable {
  readonly title: string;
  readonly seconds: number;
  readonly rows: readonly RetentionRow[];
}

async function run(title: string, conversations: OpenAIChatMessage[][], log: (line: string) => void): Promise<RetentionTable> {
  const started = performance.now();
  const rows = await measureRetention({
    conversations, shares: SHARES, systems, counter: createTokenCounter(),
    onConversation: (done, total) => {
      if (done % 20 === 0 || done === total) process.stderr.write(`  ${title}: ${done}/${total}\n`);
    },
  });
  const seconds = (performance.now() - started) / 1000;
  table(`${title} (${seconds.toFixed(1)} s)`, rows, log);
  return { title, seconds, rows };
}

/**
 * Measures and prints (through `log`) fact retention on the corpus (when present) and on each
 * generated domain; `quick` takes every 10th corpus conversation and 4 per domain. Returns the tables.
 */
export async function retentionReport(quick: boolean, log: (line: string) => void): Promise<RetentionTable[]> {
  const tables: RetentionTable[] = [];
  log(`Retention of facts at the fair budget floor + F x rest, F = ${SHARES.join(' / ')} (last request of each conversation; o200k_base; ${FAIR_BUDGET_RULE}).`);
  log(`Systems: ${systems.map((s) => s.name).join(', ')}.`);
  if (existsSync(corpusFile)) {
    const all = readFileSync(corpusFile, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { messages: OpenAIChatMessage[] }).messages);
    tables.push(await run(`corpus (${quick ? 'every 10th' : 'all'})`, quick ? all.filter((_, i) => i % 10 === 0) : all, log));
  } else {
    log(`\ncorpus skipped: ${corpusFile} not found`);
  }
  const perDomain = quick ? 4 : 20;
  for (const domain of DOMAINS) {
    const conversations = Array.from({ length: perDomain }, (_, k) => domain.generate({ messages: 200 + Math.round((200 * k) / Math.max(1, perDomain - 1)), seed: 9000 + k }));
    tables.push(await run(`${domain.name} (${perDomain} conversations, 200-400 messages)`, conversations, log));
  }
  return tables;
}

// `node dist/bench/economy/retention-report.js [--quick]` prints the tables.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  retentionReport(process.argv.includes('--quick'), (line) => console.log(line)).catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
