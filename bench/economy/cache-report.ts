/**
 * What compression does to the provider's prompt cache and to the bill: replays 3 conversations of
 * the shared corpus, one generated 2,000-message conversation and (not with `--quick`) the last 200
 * requests of a generated 10,000-message one, request by request through
 * ctxfold, LangChain trimMessages and AI SDK pruneMessages (as configured in bench/systems.ts),
 * ctxfold as a server runs it (`createCompressor` with background summaries, compressor-system.ts), plus
 * "no compression", and bills every system's views through the simulated OpenAI and Anthropic
 * prompt caches (prompt-cache.ts) at the prices of prices.ts.
 *
 *   npx tsc -p tsconfig.json && node dist/bench/economy/cache-report.js [--quick]
 *
 * Run from the project root (the corpus is read from ../shared/corpus, or $CTXFOLD_CORPUS).
 * Budget per conversation: min(32000, floor(50% of the whole conversation's tokens)), fixed for all
 * its requests (bench/run.ts instead gives each request half its own tokens). Every system sees the
 * same history objects (no fresh JSON.parse per system: nothing is timed here). Prints only.
 *
 * CTXFOLD_VARIANTS='[{"keepLast":2}, ...]' adds one row per object: compressContext with those
 * options on top of the same per-workload counter, history cache and chat id (to compare settings).
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { compressContext, createHistoryCache, createTokenCounter, type CompressOptions, type OpenAIChatMessage } from '../../src/index.js';
import { BUDGET_CAP_TOKENS, viewTokens } from '../budget.js';
import { generateConversation } from '../fixtures/conversation.js';
import { SYSTEMS, type BenchSystem, type RunContext } from '../systems.js';
import { collectViews, defaultMessageCounter, economyOfViews, type EconomyResult, type EconomySystem, type ReplayViews } from './economy-replay.js';
import { priceOf } from './prices.js';
import type { CacheRules } from './prompt-cache.js';
import { compressorSystem } from './compressor-system.js';

const COMPARED = ['ctxfold', 'langchain trimMessages', 'ai-sdk pruneMessages'];
const BILLS: { rules: CacheRules; model: string }[] = [
  { rules: 'openai', model: 'gpt-4.1' },
  { rules: 'openai', model: 'gpt-5.4' },
  { rules: 'anthropic', model: 'claude-sonnet-4.5' },
  { rules: 'anthropic', model: 'claude-haiku-4.5' },
];

/** A bench system as an economy system, with one counter, history cache and chat id per workload (as one server process). */
function economySystem(system: BenchSystem): EconomySystem {
  const counter = createTokenCounter();
  const historyCache = createHistoryCache();
  return {
    name: system.name,
    viewOf: async (history, budget, chatId) => {
      const ctx: RunContext = { budget, deadline: Number.POSITIVE_INFINITY, deadlineSeconds: Number.POSITIVE_INFINITY, counter, historyCache, chatId };
      const input = system.prepare('', history);
      const output = await system.run(input, ctx);
      const view = system.view(output);
      if (!view) throw new Error(`${system.name} returned no view`);
      return view;
    },
  };
}

/** Extra ctxfold rows from $CTXFOLD_VARIANTS (a JSON array of option objects), fresh per workload. */
function ctxfoldVariants(): EconomySystem[] {
  const raw = process.env.CTXFOLD_VARIANTS;
  if (!raw) return [];
  return (JSON.parse(raw) as Record<string, unknown>[]).map((extra) => {
    const counter = createTokenCounter();
    const historyCache = createHistoryCache();
    return {
      name: `ctxfold ${JSON.stringify(extra)}`,
      viewOf: (history, budget, chatId) => compressContext(history, { ...extra, maxContextTokens: budget, counter, historyCache, chatId } as CompressOptions).messages,
    };
  });
}

interface Workload {
  readonly name: string;
  readonly messages: OpenAIChatMessage[];
  /** Replay only the conversation's last requests (see `collectViews`). */
  readonly lastRequests?: number;
  /** The peers' memoized configurations (the same views, counted faster): at 10k messages the shipped ones take seconds per request. */
  readonly memoPeers?: boolean;
}

/** Requests replayed of the 10k-message conversation: its last ones, each carrying 9,000-10,000 messages. */
const LONG_REPLAY_REQUESTS = 200;

function corpusWorkloads(log: (line: string) => void): Workload[] {
  const path = process.env.CTXFOLD_CORPUS ?? resolve(process.cwd(), '..', 'shared', 'corpus', 'tau-bench-airline-gpt4o.jsonl');
  if (!existsSync(path)) {
    log(`corpus not found at ${path}: corpus workloads skipped`);
    return [];
  }
  const all = readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; messages: OpenAIChatMessage[] });
  const reference = createTokenCounter();
  const sized = all.map((c) => ({ c, tokens: viewTokens(c.messages, reference) })).sort((a, b) => b.tokens - a.tokens || a.c.id.localeCompare(b.c.id));
  // The longest conversation, the one at the 25th percentile from the top, and the median.
  const picks = [0, Math.floor(sized.length / 4), Math.floor(sized.length / 2)];
  return picks.map((i) => ({ name: `corpus ${sized[i].c.id}`, messages: sized[i].c.messages }));
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const usd = (x: number) => `$${x < 0.1 ? x.toFixed(4) : x.toFixed(3)}`;
const int = (x: number) => x.toLocaleString('en-US');

function table(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  return rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ')).join('\n');
}

function printWorkload(name: string, replay: ReplayViews, bills: EconomyResult[], log: (line: string) => void): void {
  log(`\n## ${name}: ${replay.requests} requests, budget ${int(replay.budget)} tokens, output ${int(replay.outputTokens)} tokens (same for every system)`);
  const head = ['system', 'sent', 'over budget', 'failed', 'grew only', 'input tokens'];
  for (const b of bills) head.push(`${b.model.model} cached`, b.rules === 'anthropic' ? 'written' : 'saved', 'cost', 'no-cache cost');
  const rows = [head];
  replay.systems.forEach((s, i) => {
    const first = bills[0].systems[i];
    const row = [s.name, String(first.requests), String(s.overBudgetRequests), String(s.failedRequests), pct(s.views.length > 1 ? s.extendedPrevious / (s.views.length - 1) : 0), int(first.inputTokens)];
    for (const b of bills) {
      const e = b.systems[i];
      row.push(pct(e.cachedShare), b.rules === 'anthropic' ? pct(e.inputTokens ? e.cacheWriteTokens / e.inputTokens : 0) : usd(e.costWithoutCache - e.cost), usd(e.cost), usd(e.costWithoutCache));
    }
    rows.push(row);
  });
  log(table(rows));
  for (const s of replay.systems) if (s.firstError) log(`  ${s.name}: first failure: ${s.firstError}`);
}

/** One workload's bill: per system, sent requests, over-budget views, cached share and cost per price table. */
export interface CacheWorkloadFigures {
  readonly workload: string;
  readonly budget: number;
  readonly systems: readonly { readonly name: string; readonly sent: number; readonly overBudget: number; readonly failed: number; readonly bills: readonly { readonly model: string; readonly cachedShare: number; readonly cost: number; readonly costWithoutCache: number }[] }[];
  /** `createCompressor` with background summaries over the same requests: summarizer calls per 100 requests (turns). */
  readonly summarizerCallsPer100Turns: number;
  readonly summaries: number;
}

/** Replays the workloads through every compared system and the simulated caches; prints through `log`, returns the figures. */
export async function cacheReport(log: (line: string) => void, options: { quick?: boolean } = {}): Promise<CacheWorkloadFigures[]> {
  const figures: CacheWorkloadFigures[] = [];
  const named = (name: string) => {
    const s = SYSTEMS.find((x) => x.name === name);
    if (!s) throw new Error(`system ${name} not in bench/systems.ts`);
    return s;
  };
  const systems = COMPARED.map(named);
  const memoSystems = COMPARED.map((name) => named(name === 'ctxfold' ? name : `${name} + memo`));
  const workloads: Workload[] = [...corpusWorkloads(log), { name: 'generated 2,000 messages (seed 3000)', messages: generateConversation({ messages: 2000, seed: 1000 + 2000 }) }];
  if (!options.quick) {
    workloads.push({
      name: `generated 10,000 messages (seed 11000), its last ${LONG_REPLAY_REQUESTS} requests`,
      messages: generateConversation({ messages: 10_000, seed: 1000 + 10_000 }),
      lastRequests: LONG_REPLAY_REQUESTS,
      memoPeers: true,
    });
  }
  log('# Prompt cache and bill per system (input side; simulated caches, see bench/economy/prompt-cache.ts)');
  log(`systems: ${systems.map((s) => `${s.name}: ${s.settings}`).join('\n  ')}`);
  if (!options.quick) log(`  on the 10,000-message conversation the peers run with their memo (the same views, counted faster): ${memoSystems.slice(1).map((s) => s.name).join(', ')}; only its last ${LONG_REPLAY_REQUESTS} requests are replayed, the first of them being every system's first sight of the chat (cold caches, no summary yet)`);
  log('prices (USD / 1M tokens: input, cached, write, output; min cacheable):');
  for (const b of BILLS) {
    const p = priceOf(b.model);
    log(`  ${p.model}: ${p.input} / ${p.cachedInput} / ${p.cacheWrite} / ${p.output}; ${p.minCacheableTokens} (${p.sources.map((s) => s.url).join(', ')}; read ${p.sources[0].read})`);
  }
  log("columns: sent = requests billed (a failed view sends nothing); over budget = views above the budget; grew only = share of views that begin with the whole previous view; cached = cached share of input tokens; OpenAI 'saved' = dollars the cache saved; Anthropic 'written' = share of input written at 1.25x; cost = input side with the cache; no-cache cost = every input token at the base price.");

  const totals = new Map<string, { sent: number; failed: number; input: number; cached: number[]; cost: number[]; plain: number[] }>();
  for (const w of workloads) {
    const started = performance.now();
    const reference = createTokenCounter();
    const budget = Math.min(BUDGET_CAP_TOKENS, Math.floor(viewTokens(w.messages, reference) / 2));
    const count = defaultMessageCounter();
    const withSummaries = compressorSystem();
    const compared = w.memoPeers ? memoSystems : systems;
    const replay = await collectViews(w.messages, [...compared.map(economySystem), withSummaries, ...ctxfoldVariants()], budget, { chatId: `economy:${w.name}`, countMessage: count, ...(w.lastRequests === undefined ? {} : { lastRequests: w.lastRequests }) });
    await withSummaries.close();
    const calls = withSummaries.stats();
    const per100 = calls.requests > 0 ? (100 * calls.summarizerCalls) / calls.requests : 0;
    const bills = BILLS.map((b) => economyOfViews(replay, b.rules, b.model, { countMessage: count }));
    printWorkload(w.name, replay, bills, log);
    log(`  ${withSummaries.name}: ${calls.summarizerCalls} summarizer calls (${calls.summaries} summaries) over ${calls.requests} requests = ${per100.toFixed(1)} per 100 turns`);
    figures.push({ workload: w.name, budget, summarizerCallsPer100Turns: per100, summaries: calls.summaries, systems: replay.systems.map((s, i) => ({ name: s.name, sent: s.views.length, overBudget: s.overBudgetRequests, failed: s.failedRequests, bills: bills.map((b) => ({ model: b.model.model, cachedShare: b.systems[i].cachedShare, cost: b.systems[i].cost, costWithoutCache: b.systems[i].costWithoutCache })) })) });
    log(`  (${replay.requests} requests replayed in ${((performance.now() - started) / 1000).toFixed(1)} s)`);
    if (w.name.startsWith('corpus')) {
      replay.systems.forEach((s, i) => {
        const t = totals.get(s.name) ?? { sent: 0, failed: 0, input: 0, cached: BILLS.map(() => 0), cost: BILLS.map(() => 0), plain: BILLS.map(() => 0) };
        t.sent += s.views.length;
        t.failed += s.failedRequests;
        t.input += bills[0].systems[i].inputTokens;
        bills.forEach((b, j) => {
          t.cached[j] += b.systems[i].cachedTokens;
          t.cost[j] += b.systems[i].cost;
          t.plain[j] += b.systems[i].costWithoutCache;
        });
        totals.set(s.name, t);
      });
    }
  }
  if (totals.size > 0) {
    log('\n## corpus, the 3 conversations together');
    const rows = [['system', 'sent', 'failed', 'input tokens', ...BILLS.flatMap((b) => [`${b.model} cached`, 'cost', 'no-cache cost'])]];
    for (const [name, t] of totals) rows.push([name, String(t.sent), String(t.failed), int(t.input), ...BILLS.flatMap((_, j) => [pct(t.input ? t.cached[j] / t.input : 0), usd(t.cost[j]), usd(t.plain[j])])]);
    log(table(rows));
  }
  return figures;
}

// `node dist/bench/economy/cache-report.js` prints the tables.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  cacheReport((line) => console.log(line), { quick: process.argv.includes('--quick') }).catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
