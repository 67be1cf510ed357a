#!/usr/bin/env node
/**
 * `npm run bench [-- --quick] [-- --economy] [-- --libraries]`: ctxfold against LangChain trimMessages, the AI SDK's
 * pruneMessages + a budget cut, slice(-N) and JSON.parse, on the shared corpus and on generated
 * histories of 1k–100k messages, cold and replayed. Prints progress and a table, writes
 * bench/results/latest.json and latest.svg (a `--quick` run writes quick.json and quick.svg instead,
 * so it never replaces the full figures docs/benchmarks.md cites). The full run also measures each
 * adapter's overhead and the economy (fact retention, simulated prompt cache and bill);
 * `--economy` measures only the economy and writes bench/results/economy.json and economy.md
 * (`--economy --quick`: economy-quick.*); `--libraries` only compares ctxfold's own parsers, cache,
 * retry, client and server with the usual libraries (bench/libraries.ts, libraries.md).
 * See bench/README.md for each figure.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateConversation } from './fixtures/conversation.js';
import { createHistoryCache, createTokenCounter } from '../src/index.js';
import { freeEncoders, singleTokenTexts } from '../src/tokens/tiktoken.js';
import { BUDGET_RULE, prefixBudgets } from './budget.js';
import { timedCall, type RequestRecord } from './call.js';
import { renderChart } from './chart.js';
import { countingThroughput, type CountingFigure } from './counting.js';
import { machineInfo, packageVersion } from './machine.js';
import { canMeasureMemory, MemoryProbe } from './memory.js';
import { checkGoals, formatGoals } from './goals.js';
import { planningTime, type PlanningFigure } from './planning.js';
import { summaryLoopDelay } from './summary-loop.js';
import { memorySoak } from './memory-soak.js';
import { runCold, runReplay, type RunSettings } from './runner.js';
import { formatTable, summarize } from './summary.js';
import { SYSTEMS } from './systems.js';
import { measureAdapterOverhead as aiSdkOverhead } from './adapter-ai-sdk.js';
import { measureAdapterOverhead as langchainOverhead } from './adapter-langchain.js';
import { measureAdapterOverhead as openaiOverhead, type AdapterOverheadRow } from './adapter-openai.js';
import { cacheReport, type CacheWorkloadFigures } from './economy/cache-report.js';
import type { ProxyLoadRow } from './proxy-load.js';
import { retentionReport, type RetentionTable } from './economy/retention-report.js';
import { corpusPath, corpusWorkload, generatedWorkload, loadCorpus, type Workload } from './workloads.js';
import { formatSmall, runSmall } from './small.js';
import { firstCalls } from './first-call.js';
import { smallGoals, type FirstCallFigure } from './goals.js';
import type { SummaryRow } from './summary.js';

interface SizeConfig {
  readonly size: number;
  /** Replay requests sampled (ctxfold and JSON.parse run on all of them). */
  readonly samples: number;
  /** Of those, how many the peers run on (they re-count the whole history each request). */
  readonly peerSamples: number;
}

interface Config {
  /** Cold call on every this-many-th corpus conversation; replay on every this-many-th of those. */
  readonly corpusColdEvery: number;
  readonly corpusReplayEvery: number;
  readonly sizes: readonly SizeConfig[];
  /** A peer call running longer than this is abandoned (its token counter throws) and the peer skipped for the rest of the workload. */
  readonly deadlineSeconds: number;
  /** Cold calls per system on each generated history, each with fresh state; the median is reported. */
  readonly coldRepeats: number;
  readonly planningSizes: readonly number[];
  readonly planningTimeMs: number;
  readonly countingSize: number;
  /** History size for the background-summary event-loop figure. */
  readonly summarySize: number;
  /** Memory soak: requests spread round-robin over this many chats. */
  readonly soak: { readonly chats: number; readonly requests: number };
  /** Small-conversation rows: requests per size (each run under, at and over its window, cold and warm). */
  readonly smallRequestsPerSize: number;
}

const FULL: Config = {
  corpusColdEvery: 1,
  corpusReplayEvery: 4,
  sizes: [
    { size: 1000, samples: 50, peerSamples: 25 },
    { size: 2000, samples: 50, peerSamples: 25 },
    { size: 10_000, samples: 50, peerSamples: 6 },
    { size: 100_000, samples: 50, peerSamples: 3 },
  ],
  deadlineSeconds: 10,
  coldRepeats: 5,
  planningSizes: [1000, 10_000, 100_000],
  planningTimeMs: 1000,
  countingSize: 2000,
  summarySize: 100_000,
  soak: { chats: 1000, requests: 100_000 },
  smallRequestsPerSize: 40,
};

const QUICK: Config = {
  corpusColdEvery: 10,
  corpusReplayEvery: 2,
  sizes: [{ size: 1000, samples: 12, peerSamples: 6 }, { size: 2000, samples: 10, peerSamples: 4 }, { size: 5000, samples: 8, peerSamples: 2 }],
  deadlineSeconds: 3,
  coldRepeats: 2,
  planningSizes: [1000, 5000],
  planningTimeMs: 300,
  countingSize: 2000,
  summarySize: 10_000,
  soak: { chats: 200, requests: 10_000 },
  smallRequestsPerSize: 10,
};

/** Every line logged, for the economy's markdown file. */
const logged: string[] = [];
const log = (s = '') => {
  logged.push(s);
  process.stdout.write(`${s}\n`);
};
const root = fileURLToPath(new URL('../../', import.meta.url));

/** Runs every system a few times on a small history so the timed calls do not pay for JIT or encoder loading. */
async function warmUp(settings: RunSettings): Promise<void> {
  const history = generateConversation({ messages: 400, seed: 7 });
  const body = JSON.stringify({ model: 'gpt-4o', messages: history });
  const reference = createTokenCounter();
  const budget = prefixBudgets(history, reference)(history.length);
  for (let round = 0; round < 3; round++) {
    for (const system of settings.systems) {
      const record: RequestRecord = { workload: 'warm-up', mode: 'cold', system: system.name, point: '0', messages: history.length, budget };
      await timedCall(system, { record, body, counter: createTokenCounter(), historyCache: createHistoryCache(), chatId: 'warm-up', reference, deadlineSeconds: settings.deadlineSeconds });
    }
  }
}

/** The economy figures: fact retention (corpus and generated domains), and the simulated prompt cache and bill. */
interface EconomyFigures {
  readonly retention: RetentionTable[];
  readonly cache: CacheWorkloadFigures[];
  readonly markdown: string;
}

/** Measures the economy; logs as it goes and returns the figures with the logged text as markdown. */
async function economy(quick: boolean): Promise<EconomyFigures> {
  const from = logged.length;
  log('\n## Fact retention');
  const retention = await retentionReport(quick, log);
  log('\n## Prompt cache and bill');
  const cache = await cacheReport(log, { quick });
  return { retention, cache, markdown: `${logged.slice(from).join('\n')}\n` };
}

/** Per-request overhead of each adapter over its SDK alone, on a stand-in server on 127.0.0.1. */
async function adapterOverhead(): Promise<AdapterOverheadRow[]> {
  const rows: AdapterOverheadRow[] = [];
  for (const [name, measure] of [['openai', openaiOverhead], ['ai-sdk', aiSdkOverhead], ['langchain', langchainOverhead]] as const) {
    const t0 = performance.now();
    const got = await measure();
    for (const r of got) log(`  ${r.adapter.padEnd(34)} ${String(r.messages).padStart(6)} messages: without ${r.withoutMs.toFixed(2)} ms, with ${r.withMs.toFixed(2)} ms, overhead ${r.overheadMs >= 0 ? '+' : ''}${r.overheadMs.toFixed(2)} ms`);
    log(`  (${name}: ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    rows.push(...got);
  }
  return rows;
}

/**
 * The proxy's load rows (a quick run takes fewer requests per row), logged once they are in.
 * Measured by `proxy-load.js --json` in a process of its own: this one holds the heaps of every
 * workload before it, and its garbage collection would take a core from the proxy measured.
 */
async function proxyLoadRows(quick: boolean): Promise<ProxyLoadRow[]> {
  const t0 = performance.now();
  const script = fileURLToPath(new URL('./proxy-load.js', import.meta.url));
  const out = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, [script, '--json', ...(quick ? ['quick'] : [])], { maxBuffer: 16 * 1024 * 1024, timeout: 10 * 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`proxy-load.js failed: ${error.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
  const rows = JSON.parse(out.trim().split('\n').pop()!) as ProxyLoadRow[];
  for (const r of rows) {
    const added = r.addedP50Ms === undefined ? '' : `added p50 ${r.addedP50Ms.toFixed(2)} ms, p99 ${r.addedP99Ms!.toFixed(2)} ms; `;
    const floor = r.floorMs === undefined ? '' : `floor ${r.floorMs.toFixed(2)} ms; `;
    log(`  ${r.row}: ${added}${floor}errors ${r.errors}, timeouts ${r.timeouts}, non-2xx ${r.non2xx} [${r.verdict}] ${r.goal}`);
  }
  log(`  (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  return rows;
}

/** `--economy`: the economy alone, written to economy(-quick).json and .md. */
async function economyOnly(quick: boolean): Promise<void> {
  const started = performance.now();
  log(`ctxfold economy benchmark (${quick ? 'quick' : 'full'}) — ${new Date().toISOString()}`);
  const figures = await economy(quick);
  const dir = join(root, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const name = quick ? 'economy-quick' : 'economy';
  const wallSeconds = (performance.now() - started) / 1000;
  writeFileSync(join(dir, `${name}.json`), `${JSON.stringify({ date: new Date().toISOString(), mode: quick ? 'quick' : 'full', wallSeconds, machine: machineInfo(), retention: figures.retention, cache: figures.cache }, null, 2)}\n`);
  writeFileSync(join(dir, `${name}.md`), figures.markdown);
  log(`\nwrote bench/results/${name}.json and ${name}.md; wall time ${wallSeconds.toFixed(1)} s`);
  freeEncoders();
}

/** The small-conversation figures: rows (cold and warm, under, at and over the window) and the first call of a process. */
interface SmallFigures {
  readonly rows: SummaryRow[];
  readonly firstCalls: FirstCallFigure[];
}

/** Runs the small-conversation rows and the first-call processes; logs their table. */
async function smallFigures(settings: RunSettings, requestsPerSize: number): Promise<SmallFigures | undefined> {
  const corpus = loadCorpus(root);
  if (!corpus) {
    log(`\n== small conversations: skipped, ${corpusPath(root)} not found`);
    return undefined;
  }
  log(`\n== small conversations (corpus, ${requestsPerSize} requests per size; windows: under = 128k, at = the request's tokens, over = 25% of them)`);
  const t0 = performance.now();
  const records = await runSmall(corpus, { systems: settings.systems, requestsPerSize, deadlineSeconds: settings.deadlineSeconds, log });
  const rows = summarize(records);
  log(formatSmall(rows));
  log('  (ms: medians; ctxfold/parse and ctxfold/peer: median over requests of ctxfold time / that system\'s time on the same body; bytes decided: share of ctxfold calls planned without the tokenizer)');
  log('  first call of a process (each case in a fresh process):');
  const first = await firstCalls();
  for (const f of first) log(`    ${f.call}: first ${f.firstMs.toFixed(2)} ms, later median ${f.laterMs.toFixed(2)} ms (${f.later}), ratio ${(f.firstMs / f.laterMs).toFixed(2)}`);
  log(`  (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  return { rows, firstCalls: first };
}

/** `--small`: the small-conversation rows alone, written to small(-quick).json (never latest.json). */
async function smallOnly(quick: boolean): Promise<void> {
  const started = performance.now();
  const config = quick ? QUICK : FULL;
  log(`ctxfold small-conversation benchmark (${quick ? 'quick' : 'full'}) — ${new Date().toISOString()}`);
  const loadBefore = loadavg();
  log(`machine: ${machineInfo().cpu}, node ${process.version}; load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`);
  const settings: RunSettings = { systems: SYSTEMS, deadlineSeconds: config.deadlineSeconds, coldRepeats: config.coldRepeats, log };
  log('warming up (JIT, encoders, single-token texts)...');
  await warmUp(settings);
  // As in the full run, where these rows follow the corpus workload: the encoder's single-token
  // texts, read in steps once a process has encoded enough, are read, so no row pays for them.
  singleTokenTexts('o200k_base');
  const smallConversations = await smallFigures(settings, config.smallRequestsPerSize);
  const goals = smallConversations ? smallGoals(smallConversations.rows, smallConversations.firstCalls) : [];
  log('\n== goals (from this run)');
  log(formatGoals(goals));
  const dir = join(root, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const name = quick ? 'small-quick' : 'small';
  const wallSeconds = (performance.now() - started) / 1000;
  writeFileSync(join(dir, `${name}.json`), `${JSON.stringify({ date: new Date().toISOString(), mode: quick ? 'quick' : 'full', wallSeconds, machine: machineInfo(), loadAverage: { before: loadBefore, after: loadavg() }, small: smallConversations, goals }, null, 2)}\n`);
  log(`\nwrote bench/results/${name}.json; wall time ${wallSeconds.toFixed(1)} s`);
  freeEncoders();
}

async function main(): Promise<void> {
  const started = performance.now();
  const quick = process.argv.includes('--quick');
  if (process.argv.includes('--economy')) return economyOnly(quick);
  if (process.argv.includes('--small')) return smallOnly(quick);
  if (process.argv.includes('--libraries')) return (await import('./libraries.js')).compareLibraries();
  if (process.argv.includes('--proxy-stalls')) return (await import('./proxy-stalls.js')).writeProxyStalls();
  if (process.argv.includes('--proxy-workers')) return (await import('./proxy-workers.js')).writeProxyWorkers();
  const config = quick ? QUICK : FULL;
  const machine = machineInfo();
  const versions = {
    ctxfold: packageVersion(root),
    '@langchain/core': packageVersion(root, '@langchain/core'),
    ai: packageVersion(root, 'ai'),
    tiktoken: packageVersion(root, 'tiktoken'),
    tinybench: packageVersion(root, 'tinybench'),
  };
  log(`ctxfold benchmark (${quick ? 'quick' : 'full'}) — ${new Date().toISOString()}`);
  const loadBefore = loadavg();
  log(`machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGB} GB, node ${machine.node}, ${machine.platform}; load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`);
  log(`versions: ${Object.entries(versions).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  log(`budget per request: ${BUDGET_RULE}`);
  log('systems:');
  for (const s of SYSTEMS) log(`  ${s.name}: ${s.settings}`);
  if (!canMeasureMemory) log('note: run with node --expose-gc (npm run bench does) to get memory figures');
  log();

  const probe = canMeasureMemory ? new MemoryProbe() : undefined;
  const settings: RunSettings = { systems: SYSTEMS, deadlineSeconds: config.deadlineSeconds, coldRepeats: config.coldRepeats, probe, log };
  log('warming up (JIT, encoders)...');
  await warmUp(settings);

  const records: RequestRecord[] = [];
  const workloads: { name: string; sampling: string; histories: number; messages: number; skippedInReplay: string[] }[] = [];
  const planning: PlanningFigure[] = [];

  const runWorkload = async (w: Workload) => {
    const messages = w.histories.reduce((a, h) => a + h.length, 0);
    log(`\n== ${w.name}: ${w.histories.length} histor${w.histories.length === 1 ? 'y' : 'ies'}, ${messages} messages; replay: ${w.sampling}`);
    const t0 = performance.now();
    const cold = await runCold(w, settings);
    records.push(...cold.records);
    if (w.kind === 'generated' && cold.state && config.planningSizes.includes(cold.state.messages.length)) {
      const p = await planningTime(cold.state, config.planningTimeMs);
      planning.push(p);
      log(`  ${w.name} planning (warm cache): median ${p.medianMs.toFixed(2)} ms = ${p.perMessageUs.toFixed(3)} us/message over ${p.samples} runs`);
    }
    const skipped = [...cold.timedOut];
    if (skipped.length) log(`  ${w.name}: ${skipped.join(', ')} exceeded the ${config.deadlineSeconds} s deadline on the cold call: left out of the replay`);
    records.push(...(await runReplay(w, settings, cold.timedOut)));
    workloads.push({ name: w.name, sampling: w.sampling, histories: w.histories.length, messages, skippedInReplay: skipped });
    log(`  ${w.name} done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  };

  const corpus = corpusWorkload(root, config.corpusColdEvery, config.corpusReplayEvery);
  if (corpus) await runWorkload(corpus);
  else log(`\n== corpus: skipped, ${corpusPath(root)} not found (the shared folder must sit beside the project)`);
  const smallConversations = await smallFigures(settings, config.smallRequestsPerSize);

  for (const s of config.sizes) {
    const t0 = performance.now();
    const w = generatedWorkload(s.size, s.samples, s.peerSamples);
    log(`\n(generated ${s.size} messages in ${(performance.now() - t0).toFixed(0)} ms)`);
    await runWorkload(w);
  }

  log(`\n== token counting throughput (cold) on the generated ${config.countingSize}-message history`);
  const counting: CountingFigure = countingThroughput(generateConversation({ messages: config.countingSize, seed: 1000 + config.countingSize }));
  log(`  ${counting.texts} distinct texts, each encoded once on both sides, ${counting.megabytes.toFixed(2)} MB UTF-8: createTokenCounter ${counting.ctxfoldMBps.toFixed(2)} MB/s, raw encode_ordinary ${counting.rawMBps.toFixed(2)} MB/s, ratio ${counting.ratio.toFixed(2)} (counter encoded ${counting.counterStats.encoded} texts, ${counting.counterStats.cachedHits} repeats served from its cache)`);

  log(`\n== event-loop delay while a background summary of ${config.summarySize} messages runs (createCompressor, extractive summarizer)`);
  const summaryLoop = await summaryLoopDelay(config.summarySize);
  log(`  request ${summaryLoop.requestMs.toFixed(0)} ms (loop p99 ${summaryLoop.requestLoopDelayP99Ms.toFixed(1)} ms); job ${summaryLoop.jobMs.toFixed(0)} ms, ${summaryLoop.summarizerCalls} summarizer calls, ${summaryLoop.coveredMessages} messages covered; loop p99 ${summaryLoop.loopDelayP99Ms.toFixed(1)} ms, max ${summaryLoop.loopDelayMaxMs.toFixed(1)} ms`);

  log(`\n== memory over ${config.soak.requests} requests spread over ${config.soak.chats} chats (RSS and heap after a forced GC)`);
  const memory = await memorySoak(config.soak.chats, config.soak.requests);
  for (const f of memory) log(`  ${f.system.padEnd(30)} ${f.checkpoints.map((c) => `${c.requests} req: rss ${c.rssMB.toFixed(0)} MB, heap ${c.heapMB.toFixed(0)} MB`).join(' | ')} (${f.seconds.toFixed(1)} s)`);

  log('\n== adapter overhead per request (SDK alone vs SDK + ctxfold adapter, stand-in server on 127.0.0.1, median)');
  const adapters = await adapterOverhead();

  log('\n== the proxy under load (autocannon on loopback; stand-in upstream and ctxfold serve in their own processes)');
  const proxyLoad = await proxyLoadRows(quick);

  log('\n== economy');
  const economyFigures = await economy(quick);

  const rows = summarize(records);
  log('\n== results (time per request; ratios are ctxfold time / other system time on the same requests)');
  log(formatTable(rows));

  log('\n== planning is linear (ctxfold, warm token cache)');
  for (const p of planning) log(`  ${String(p.messages).padStart(7)} messages: ${p.medianMs.toFixed(2)} ms median, ${p.perMessageUs.toFixed(3)} us/message`);
  const small = planning.find((p) => p.messages === 1000);
  const large = [...planning].sort((a, b) => b.messages - a.messages)[0];
  const linearRatio = small && large && large !== small ? large.perMessageUs / small.perMessageUs : undefined;
  if (linearRatio !== undefined) log(`  per-message time ${large.messages / 1000}k / 1k: ${linearRatio.toFixed(2)} (1.00 = perfectly linear)`);

  const largest = [...records].filter((r) => r.mode === 'cold' && r.system === 'ctxfold' && r.loopDelayP99Ms !== undefined).sort((a, b) => b.messages - a.messages)[0];
  const eventLoop = largest ? { workload: largest.workload, messages: largest.messages, callMs: largest.ms, p99Ms: largest.loopDelayP99Ms, maxMs: largest.loopDelayMaxMs } : undefined;
  if (eventLoop) log(`\n== event-loop delay during ctxfold's cold call on ${eventLoop.messages} messages: p99 ${eventLoop.p99Ms!.toFixed(0)} ms, max ${eventLoop.maxMs!.toFixed(0)} ms (call took ${eventLoop.callMs?.toFixed(0)} ms)`);

  const goals = [...checkGoals(rows, planning, counting, summaryLoop), ...(smallConversations ? smallGoals(smallConversations.rows, smallConversations.firstCalls) : [])];
  log('\n== goals (from this run)');
  log(formatGoals(goals));

  const generatedReplays = records.filter((r) => r.mode === 'replay' && r.workload.startsWith('gen-') && r.ms !== undefined);
  const date = new Date().toISOString();
  const wallSeconds = (performance.now() - started) / 1000;
  const results = {
    date,
    mode: quick ? 'quick' : 'full',
    wallSeconds,
    machine,
    loadAverage: { before: loadBefore, after: loadavg() },
    versions,
    budgetRule: BUDGET_RULE,
    deadlineSeconds: config.deadlineSeconds,
    systems: SYSTEMS.map((s) => ({ name: s.name, settings: s.settings })),
    workloads,
    rows,
    small: smallConversations,
    planning: { figures: planning, perMessageRatioLargestTo1k: linearRatio },
    counting,
    eventLoop,
    backgroundSummary: summaryLoop,
    memorySoak: memory,
    adapterOverhead: adapters,
    proxyLoad,
    economy: { retention: economyFigures.retention, cache: economyFigures.cache },
    goals,
    replaySeries: generatedReplays.map((r) => ({ workload: r.workload, system: r.system, messages: r.messages, ms: r.ms })),
  };
  const dir = join(root, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  // Only a full run replaces the figures docs/benchmarks.md cites; a quick run writes beside them.
  const name = quick ? 'quick' : 'latest';
  writeFileSync(join(dir, `${name}.json`), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(dir, quick ? 'economy-quick.md' : 'economy.md'), economyFigures.markdown);
  writeFileSync(join(dir, `${name}.svg`), renderChart(generatedReplays, SYSTEMS.map((s) => s.name), `${machine.cpu}, ${machine.cores} cores, node ${machine.node}, ${date.slice(0, 10)} (${quick ? 'quick' : 'full'} run)`));
  log(`\nwrote bench/results/${name}.json and bench/results/${name}.svg; wall time ${wallSeconds.toFixed(1)} s`);
  await probe?.stop();
  freeEncoders();
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
