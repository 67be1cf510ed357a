/**
 * "One huge chat never stalls the others": the proxy's event loop, and what small requests of
 * other chats pay, while a cold 100k-message request and then its background fold run, with the
 * fold threads off (`foldThreads: 0`: everything on the serving thread) and on (the default), side
 * by side in one run, with a CPU hog (a busy-loop child process) running beside it the whole time.
 *
 * Set-up: the proxy runs in a process of its own (proxy-stall-server.ts: `startServer`, memory
 * store, the default extractive summarizer, 128k-token window) and watches its own loop with a
 * 5 ms ticker (max gap: the longest stall, caught whole) and `monitorEventLoopDelay`. This process
 * is the stand-in upstream and the client. The window opens when the 100k-message request (49 MB)
 * is sent and closes `FOLD_SECONDS` after its answer, while its background fold still runs (it takes
 * minutes; it is abandoned at close). Meanwhile small requests (50 messages, 20 chats in turn, one
 * connection) go one at a time, alternately straight to the stand-in and through the proxy: "added"
 * is the proxied p99 minus the direct p99.
 *
 * Goals (from the threads-on row): event-loop p99 <= 20 ms (both watches) and added p99 <= 5 ms.
 * Run: `npm run bench -- --proxy-stalls` (writes bench/results/proxy-stalls.json and .md).
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { createServer, request, Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateConversation } from './fixtures/conversation.js';
import { machineInfo } from './machine.js';
import { quantile } from './stats.js';

const BIG_MESSAGES = 100_000;
const SMALL_MESSAGES = 50;
const SMALL_CHATS = 20;
const FOLD_SECONDS = 20;
const WARMUP_REQUESTS = 300;

/** One mode's figures. */
export interface StallRow {
  readonly mode: 'threads off' | 'threads on';
  readonly bigRequestMs: number;
  readonly loopDelayP99Ms: number;
  readonly loopDelayMaxMs: number;
  readonly tickerP99Ms: number;
  readonly tickerMaxStallMs: number;
  readonly smallRequests: number;
  readonly directP99Ms: number;
  readonly proxiedP99Ms: number;
  readonly addedP50Ms: number;
  readonly addedP99Ms: number;
  /** Summary jobs running when the window closed (1: the big chat's fold ran through it). */
  readonly jobsRunningAtEnd: number;
}

const completion = Buffer.from(JSON.stringify({
  id: 'chatcmpl-stall', object: 'chat.completion', created: 0, model: 'gpt-4o',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Noted.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 100, completion_tokens: 2, total_tokens: 102 },
}));

function post(agent: Agent, base: string, path: string, body: Buffer, chat: string): Promise<number> {
  const url = new URL(path, base);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.byteLength, 'x-ctxfold-chat-id': chat } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`${path}: HTTP ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function get(base: string, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    request(new URL(path, base), (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => { text += d; }).on('end', () => resolve(text));
    }).on('error', reject).end();
  });
}

function ask<T>(child: ChildProcess, op: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: { op: string }) => {
      if (m.op !== op) return;
      child.off('message', on);
      resolve(m as T);
    };
    child.on('message', on);
    if (op !== 'listening') child.send({ op });
  });
}

async function runMode(mode: StallRow['mode'], upstream: string, big: Buffer, small: Buffer[]): Promise<StallRow> {
  const server = fileURLToPath(new URL('./proxy-stall-server.js', import.meta.url));
  const options = { upstream, port: 0, store: 'memory', maxBodyBytes: 128 * 1024 * 1024, jobTimeoutMs: 3_600_000, shutdownGraceMs: 0, ...(mode === 'threads off' ? { foldThreads: 0 } : {}) };
  const proxy = fork(server, [JSON.stringify(options)], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const { url } = await ask<{ url: string }>(proxy, 'listening');
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const bigAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const direct: number[] = [];
  const proxied: number[] = [];
  let k = 0;
  const one = async (record: boolean) => {
    const i = k++ % SMALL_CHATS;
    const d = await post(agent, upstream, '/v1/chat/completions', small[i]!, `small-${i}`);
    const p = await post(agent, url, '/v1/chat/completions', small[i]!, `small-${i}`);
    if (record) {
      direct.push(d);
      proxied.push(p);
    }
  };
  for (let n = 0; n < WARMUP_REQUESTS; n++) await one(false);
  await ask(proxy, 'reset');
  let open = true;
  const loop = (async () => {
    while (open) await one(true);
  })();
  const bigRequestMs = await post(bigAgent, url, '/v1/chat/completions', big, 'big');
  const bigDone = performance.now();
  while (performance.now() - bigDone < FOLD_SECONDS * 1000) await new Promise((resolve) => setTimeout(resolve, 100));
  open = false;
  await loop;
  const stats = await ask<{ loopDelayP99Ms: number; loopDelayMaxMs: number; tickerP99Ms: number; tickerMaxStallMs: number }>(proxy, 'stats');
  const metrics = await get(url, '/metrics');
  const jobsRunningAtEnd = Number(/^ctxfold_summary_jobs_running (\d+)/m.exec(metrics)?.[1] ?? 0);
  proxy.send({ op: 'close' });
  await new Promise((resolve) => proxy.once('exit', resolve));
  agent.destroy();
  bigAgent.destroy();
  const ds = direct.slice().sort((a, b) => a - b);
  const ps = proxied.slice().sort((a, b) => a - b);
  return {
    mode,
    bigRequestMs,
    ...stats,
    smallRequests: proxied.length,
    directP99Ms: quantile(ds, 0.99),
    proxiedP99Ms: quantile(ps, 0.99),
    addedP50Ms: quantile(ps, 0.5) - quantile(ds, 0.5),
    addedP99Ms: quantile(ps, 0.99) - quantile(ds, 0.99),
    jobsRunningAtEnd,
  };
}

/** The table of both modes, and each goal of the threads-on row. */
export function formatStalls(rows: readonly StallRow[]): string {
  const f = (v: number) => v.toFixed(1);
  const lines = [
    '| mode | 100k request ms | loop p99 ms (monitor) | loop max ms (monitor) | ticker p99 ms | max stall ms (ticker) | small requests | small added p50 ms | small added p99 ms | jobs running at end |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map((r) => `| ${r.mode} | ${f(r.bigRequestMs)} | ${f(r.loopDelayP99Ms)} | ${f(r.loopDelayMaxMs)} | ${f(r.tickerP99Ms)} | ${f(r.tickerMaxStallMs)} | ${r.smallRequests} | ${f(r.addedP50Ms)} | ${f(r.addedP99Ms)} | ${r.jobsRunningAtEnd} |`),
  ];
  const on = rows.find((r) => r.mode === 'threads on');
  if (on) {
    const p99 = Math.max(on.loopDelayP99Ms, on.tickerP99Ms);
    lines.push('', `- event-loop p99 <= 20 ms (threads on, the larger of both watches): ${f(p99)} ms ${p99 <= 20 ? 'PASS' : 'MISS'}`);
    lines.push(`- small requests' added p99 <= 5 ms (threads on): ${f(on.addedP99Ms)} ms ${on.addedP99Ms <= 5 ? 'PASS' : 'MISS'}`);
  }
  return lines.join('\n');
}

/** Runs both modes with the hog beside them; returns the rows and the load average seen. */
export async function proxyStalls(log: (line?: string) => void): Promise<{ rows: StallRow[]; loadAverage: { before: number[]; after: number[] } }> {
  log(`generating a ${BIG_MESSAGES}-message history and ${SMALL_CHATS} of ${SMALL_MESSAGES}...`);
  const big = Buffer.from(JSON.stringify({ model: 'gpt-4o', messages: generateConversation({ messages: BIG_MESSAGES, seed: 7 }) }));
  const small = Array.from({ length: SMALL_CHATS }, (_, i) => Buffer.from(JSON.stringify({ model: 'gpt-4o', messages: generateConversation({ messages: SMALL_MESSAGES, seed: 100 + i }) })));
  log(`  100k body ${(big.byteLength / 1e6).toFixed(1)} MB, 50-message bodies about ${(small[0]!.byteLength / 1e3).toFixed(0)} kB`);
  const upstreamServer = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': completion.byteLength });
      res.end(completion);
    });
  });
  await new Promise<void>((resolve) => upstreamServer.listen(0, '127.0.0.1', resolve));
  const upstream = `http://127.0.0.1:${(upstreamServer.address() as AddressInfo).port}/v1`;
  const hog = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
  const before = loadavg();
  const rows: StallRow[] = [];
  try {
    for (const mode of ['threads off', 'threads on'] as const) {
      log(`  ${mode}: warm-up, then the 100k request and ${FOLD_SECONDS} s of its background fold...`);
      rows.push(await runMode(mode, upstream, big, small));
    }
  } finally {
    hog.kill('SIGKILL');
    upstreamServer.closeAllConnections();
    upstreamServer.close();
  }
  return { rows, loadAverage: { before, after: loadavg() } };
}

/** `npm run bench -- --proxy-stalls`: runs both modes, prints the table, writes bench/results/proxy-stalls.json and .md. */
export async function writeProxyStalls(): Promise<void> {
  const log = (line = '') => process.stdout.write(`${line}\n`);
  const machine = machineInfo();
  log(`proxy stalls — ${new Date().toISOString()}; ${machine.cpu}, ${machine.cores} cores, node ${machine.node}; a busy-loop process beside it`);
  const { rows, loadAverage } = await proxyStalls(log);
  const table = formatStalls(rows);
  log(table);
  const dir = fileURLToPath(new URL('../../bench/results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'proxy-stalls.json'), `${JSON.stringify({ date: new Date().toISOString(), machine, loadAverage, foldSeconds: FOLD_SECONDS, rows }, null, 2)}\n`);
  const load = (l: number[]) => l.map((v) => v.toFixed(2)).join(' ');
  writeFileSync(join(dir, 'proxy-stalls.md'), [
    '# Proxy event loop while one huge chat folds',
    '',
    `Written by \`npm run bench -- --proxy-stalls\` (bench/proxy-stalls.ts) on ${new Date().toISOString().slice(0, 10)}: ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}; load average ${load(loadAverage.before)} before, ${load(loadAverage.after)} after, a busy-loop process running beside the proxy throughout.`,
    `A cold ${BIG_MESSAGES.toLocaleString('en')}-message request, then ${FOLD_SECONDS} s of its background fold, while ${SMALL_MESSAGES}-message requests of ${SMALL_CHATS} other chats go one at a time; fold threads off (everything on the serving thread) and on (the default), in one run.`,
    '',
    table,
    '',
  ].join('\n'));
  log('\nwrote bench/results/proxy-stalls.json and proxy-stalls.md');
}
