/**
 * "Every core": proxy throughput with `--workers 1` and `--workers 2`, side by side in one run,
 * on two kinds of traffic: 2-message chats (a new chat per request, 256 chats in turn: the
 * proxy's own cost per request) and 1k-message chats (8 chats growing turn by turn, folded to a
 * 32k-token window: the fold's cost, in fold threads). Both settings use one redis-server the
 * bench starts on loopback (`--workers 2` needs a store that coordinates processes), and
 * `--summarizer none`, so only requests use the CPU.
 *
 * Set-up: the real `ctxfold serve` (dist/src/cli/main.js), a stand-in upstream in a process of its
 * own (answers a fixed completion after reading the body), and autocannon in this process; all on
 * this host, so the load generator and the stand-in share its cores with the proxy. Each row:
 * `WARMUP_SECONDS` unmeasured, then `SECONDS` measured; requests per second, latency p50 / p99, and
 * every error, timeout and non-2xx; the CPU the proxy's processes and the load generator used
 * (/proc), so the figures say how many cores the proxy had and what one core of it serves.
 *
 * Run: `npm run bench -- --proxy-workers` (writes bench/results/proxy-workers.json and .md).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateConversation, modelRequestEnds } from './fixtures/conversation.js';
import { machineInfo } from './machine.js';
import { quantile } from './stats.js';

const WARMUP_SECONDS = 3;
const SECONDS = 10;
const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

interface CannonOptions {
  readonly url: string;
  readonly method: 'POST';
  readonly headers: Record<string, string>;
  readonly requests: readonly { readonly method: 'POST'; readonly body: string; readonly headers: Record<string, string> }[];
  readonly connections: number;
  readonly duration: number;
  readonly timeout: number;
}
interface CannonResult {
  readonly errors: number;
  readonly timeouts: number;
  readonly non2xx: number;
  readonly '2xx': number;
}
interface CannonRun extends PromiseLike<CannonResult> {
  on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void): void;
}
const autocannon = createRequire(import.meta.url)('autocannon') as (options: CannonOptions) => CannonRun;

/** One row: a kind of traffic on a number of worker processes. */
export interface WorkersRow {
  readonly traffic: string;
  readonly workers: number;
  readonly connections: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly non2xx: number;
  /** CPU the proxy's processes used over the measured seconds, in cores (1 = one core busy throughout). */
  readonly proxyCores: number;
  /** CPU the load generator (this process) used, in cores. */
  readonly loadGeneratorCores: number;
  /** Requests answered per second of the proxy's CPU: what one core serves. */
  readonly requestsPerProxyCoreSecond: number;
}

/** CPU seconds (user + system) of `pid` and its child processes so far, from /proc (Linux). */
function cpuSeconds(pid: number): number {
  const children = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).stdout.split('\n').filter((l) => l !== '').map(Number);
  let ticks = 0;
  for (const p of [pid, ...children]) {
    try {
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone
    }
  }
  return ticks / 100;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const STAND_IN = `
const body = JSON.stringify({ id: 'c', object: 'chat.completion', created: 0, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: 'Noted.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 100, completion_tokens: 2, total_tokens: 102 } });
require('node:http').createServer({ keepAliveTimeout: 65000 }, (req, res) => { req.resume(); req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }); res.end(body); }); }).listen(Number(process.argv[1]), '127.0.0.1', () => process.stdout.write('ready\\n'));
`;

function waitFor(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = pattern.exec(out);
      if (m) resolve(m[1] ?? m[0]);
    });
    child.once('exit', (code) => reject(new Error(`exited (${code}) before ${pattern}`)));
  });
}

async function cannon(url: string, requests: CannonOptions['requests'], connections: number, seconds: number): Promise<{ latencies: number[]; result: CannonResult }> {
  const latencies: number[] = [];
  const run = autocannon({ url, method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-workers' }, requests, connections, duration: seconds, timeout: 30 });
  run.on('response', (_c, status, _b, ms) => { if (status >= 200 && status < 300) latencies.push(ms); });
  return { latencies, result: await run };
}

/** The two kinds of traffic, as autocannon requests. */
function traffic(): { name: string; connections: number; maxTokens: number; requests: CannonOptions['requests'] }[] {
  const two = Array.from({ length: 256 }, (_, i) => ({
    method: 'POST' as const,
    headers: { 'x-ctxfold-chat-id': `two-${i}` },
    body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'system', content: 'You answer briefly.' }, { role: 'user', content: `Question ${i}: what is the status of ticket T-${1000 + i}?` }] }),
  }));
  const thousand = Array.from({ length: 8 }, (_, c) => {
    const conversation = generateConversation({ messages: 1000, seed: 40 + c });
    return modelRequestEnds(conversation).slice(-4).map((end) => ({ method: 'POST' as const, headers: { 'x-ctxfold-chat-id': `thousand-${c}` }, body: JSON.stringify({ model: 'gpt-4o', messages: conversation.slice(0, end) }) }));
  }).flat();
  return [
    { name: '2-message chats', connections: 16, maxTokens: 128_000, requests: two },
    { name: '1k-message chats (32k window)', connections: 8, maxTokens: 32_000, requests: thousand },
  ];
}

/** Runs every row; undefined when redis-server is not on PATH. */
export async function proxyWorkers(log: (line?: string) => void): Promise<WorkersRow[] | undefined> {
  if (spawnSync('redis-server', ['--version']).status !== 0) {
    log('redis-server is not on PATH: --workers 2 needs it (apt-get install -y redis-server); skipped');
    return undefined;
  }
  const redisPort = await freePort();
  const redis = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'ignore'] });
  await waitFor(redis, /Ready to accept connections/);
  const upstreamPort = await freePort();
  const standIn = spawn(process.execPath, ['-e', STAND_IN, String(upstreamPort)], { stdio: ['ignore', 'pipe', 'inherit'] });
  await waitFor(standIn, /ready/);
  const rows: WorkersRow[] = [];
  try {
    for (const t of traffic()) {
      for (const workers of [1, 2]) {
        log(`  ${t.name}, --workers ${workers}...`);
        const proxy = spawn(process.execPath, [CLI, 'serve', '--upstream', `http://127.0.0.1:${upstreamPort}/v1`, '--port', '0', '--workers', String(workers), '--store', `redis://127.0.0.1:${redisPort}`, '--summarizer', 'none', '--max-context-tokens', String(t.maxTokens), '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'inherit'] });
        const url = await waitFor(proxy, /ctxfold serve listening on (http:\/\/\S+)/);
        await cannon(`${url}/v1/chat/completions`, t.requests, t.connections, WARMUP_SECONDS);
        const cpuBefore = cpuSeconds(proxy.pid!);
        const ownBefore = process.cpuUsage();
        const { latencies, result } = await cannon(`${url}/v1/chat/completions`, t.requests, t.connections, SECONDS);
        const proxyCpu = cpuSeconds(proxy.pid!) - cpuBefore;
        const own = process.cpuUsage(ownBefore);
        proxy.kill('SIGTERM');
        await new Promise((resolve) => proxy.once('exit', resolve));
        rows.push({
          traffic: t.name, workers, connections: t.connections,
          requestsPerSecond: result['2xx'] / SECONDS,
          p50Ms: quantile(latencies, 0.5), p99Ms: quantile(latencies, 0.99),
          errors: result.errors, timeouts: result.timeouts, non2xx: result.non2xx,
          proxyCores: proxyCpu / SECONDS,
          loadGeneratorCores: (own.user + own.system) / 1e6 / SECONDS,
          requestsPerProxyCoreSecond: proxyCpu > 0 ? result['2xx'] / proxyCpu : 0,
        });
      }
    }
  } finally {
    standIn.kill('SIGKILL');
    redis.kill('SIGKILL');
  }
  return rows;
}

/** The table, with each kind of traffic's 2-worker / 1-worker throughput ratio. */
export function formatWorkers(rows: readonly WorkersRow[]): string {
  const lines = [
    '| traffic | workers | connections | requests/s | p50 ms | p99 ms | errors | timeouts | non-2xx | vs 1 worker | proxy cores | load generator cores | requests per proxy core-second |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const r of rows) {
    const one = rows.find((o) => o.traffic === r.traffic && o.workers === 1);
    lines.push(`| ${r.traffic} | ${r.workers} | ${r.connections} | ${r.requestsPerSecond.toFixed(0)} | ${r.p50Ms.toFixed(1)} | ${r.p99Ms.toFixed(1)} | ${r.errors} | ${r.timeouts} | ${r.non2xx} | ${one ? `${(r.requestsPerSecond / one.requestsPerSecond).toFixed(2)}x` : ''} | ${r.proxyCores.toFixed(2)} | ${r.loadGeneratorCores.toFixed(2)} | ${r.requestsPerProxyCoreSecond.toFixed(0)} |`);
  }
  lines.push('');
  for (const r of rows.filter((o) => o.workers === 1)) {
    lines.push(`- ${r.traffic}: one worker process used ${r.proxyCores.toFixed(2)} cores (its serving thread and fold threads) and served ${r.requestsPerProxyCoreSecond.toFixed(0)} requests per core-second; with N workers on N times that many free cores, throughput would be about N x ${r.requestsPerSecond.toFixed(0)} requests/s, less what the shared Redis store and the load generator take. On this host the cores left beside the load generator, the stand-in and Redis cap it at what one worker already uses.`);
  }
  return lines.join('\n');
}

/** `npm run bench -- --proxy-workers`: prints the table, writes bench/results/proxy-workers.json and .md. */
export async function writeProxyWorkers(): Promise<void> {
  const log = (line = '') => process.stdout.write(`${line}\n`);
  const machine = machineInfo();
  log(`proxy workers — ${new Date().toISOString()}; ${machine.cpu}, ${machine.cores} cores, node ${machine.node}`);
  const before = loadavg();
  const rows = await proxyWorkers(log);
  if (rows === undefined) return;
  const after = loadavg();
  const table = formatWorkers(rows);
  log(table);
  const dir = fileURLToPath(new URL('../../bench/results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'proxy-workers.json'), `${JSON.stringify({ date: new Date().toISOString(), machine, loadAverage: { before, after }, seconds: SECONDS, rows }, null, 2)}\n`);
  const load = (l: number[]) => l.map((v) => v.toFixed(2)).join(' ');
  writeFileSync(join(dir, 'proxy-workers.md'), [
    '# Proxy throughput, 1 and 2 worker processes',
    '',
    `Written by \`npm run bench -- --proxy-workers\` (bench/proxy-workers.ts) on ${new Date().toISOString().slice(0, 10)}: ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}; load average ${load(before)} before, ${load(after)} after. The load generator (autocannon) and the stand-in upstream run on the same host. ${SECONDS} s per row after ${WARMUP_SECONDS} s of warm-up.`,
    '',
    table,
    '',
  ].join('\n'));
  log('\nwrote bench/results/proxy-workers.json and proxy-workers.md');
}
