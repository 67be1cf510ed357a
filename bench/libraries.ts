/**
 * ctxfold's own code against the obvious well-kept library for each area, side by side in one run,
 * so the choice between them rests on figures: (a) argument parsing, (b) server-sent events,
 * (c) a bounded cache, (d) retry and backoff (a feature table), (e) the upstream client and (f) the
 * HTTP server. No candidate is a dependency of the project: each is loaded with `import()` and,
 * when absent, its row says `not installed: npm i --no-save X`.
 *
 * (e) and (f) run their servers in child processes (this file with `--serve KIND`), so the
 * measured client does not share an event loop with the server it calls.
 *
 * Run: `npm i --no-save commander yargs eventsource-parser lru-cache p-retry exponential-backoff
 * undici fastify && npm run bench -- --libraries` (or `node --expose-gc dist/bench/libraries.js`
 * after a build; about a minute). Prints markdown and writes it to bench/results/libraries.md.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { parseArgs as nodeParseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { Bench } from 'tinybench';
import { parseArgs as ctxfoldParseArgs } from '../src/cli/args.js';
import { SseReader } from '../src/server/sse-reader.js';
import { TextMemo } from '../src/tokens/text-memo.js';
import { DEFAULT_COUNT_CACHE_BYTES } from '../src/tokens/counter.js';
import { callUpstream } from '../src/server/upstream.js';
import { createUpstreamAgent } from '../src/server/upstream-agent.js';
import { DEFAULT_UPSTREAM_KEEP_ALIVE_MS } from '../src/server/options.js';
import { readBody } from '../src/server/read-body.js';
import { median, quantile } from './stats.js';

/** A candidate module, typed loosely so this file compiles with none of them installed. */
type Loose = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const SELF = fileURLToPath(import.meta.url);
const require = createRequire(import.meta.url);

/**
 * The module, or undefined after printing how to install it. `has` names an export the comparison
 * needs: an older major version that another package pulled in (without it) is skipped too.
 */
async function load(name: string, has?: string): Promise<Loose | undefined> {
  let mod: Loose;
  try {
    mod = await import(name);
  } catch {
    line(`- ${name}: not installed: npm i --no-save ${name}`);
    return undefined;
  }
  if (has !== undefined && mod[has] === undefined) {
    line(`- ${name} ${versionOf(name)} has no \`${has}\` export: npm i --no-save ${name}@latest`);
    return undefined;
  }
  return mod;
}

function versionOf(name: string): string {
  try {
    // Read from node_modules directly: some packages do not export their package.json.
    const main = require.resolve(name);
    const root = main.slice(0, main.lastIndexOf(`node_modules/${name}/`) + `node_modules/${name}/`.length);
    return (JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { version: string }).version;
  } catch {
    return 'not installed';
  }
}

/** Every printed line, written to bench/results/libraries.md at the end. */
const printed: string[] = [];
const line = (text = ''): void => {
  printed.push(text);
  console.log(text);
};
const f = (n: number, digits = 2): string => n.toFixed(digits);

/** tinybench over `tasks`: each task's mean and p99 per call, in µs. */
async function timeTasks(tasks: Record<string, () => unknown>, timeMs = 400): Promise<{ name: string; meanUs: number; p99Us: number; hz: number }[]> {
  const bench = new Bench({ time: timeMs, warmupTime: 100, throws: true });
  for (const [name, fn] of Object.entries(tasks)) bench.add(name, fn);
  await bench.run();
  return bench.tasks.map((t) => {
    const r = t.result as Loose;
    return { name: t.name, meanUs: r.latency.mean * 1000, p99Us: r.latency.p99 * 1000, hz: r.throughput.mean };
  });
}

// ---------------------------------------------------------------------------------------------
// (a) Argument parsing
// ---------------------------------------------------------------------------------------------

const ARGV = ['compress', '--max-context-tokens', '8000', '--keep-last', '6', '--model', 'gpt-4o', '--summarizer', 'extractive', '--quiet', 'conversation.json'];
const TYPO_FLAG = ['compress', '--max-context-tokns', '8000', 'conversation.json'];
const TYPO_COMMAND = ['compres', '--max-context-tokens', '8000', 'conversation.json'];

/** Cold `import()` of `spec` in a fresh process, median of 5, in ms. */
function coldImportMs(spec: string): number | undefined {
  const code = `const t = performance.now(); await import(${JSON.stringify(spec)}); console.log(performance.now() - t);`;
  const runs: number[] = [];
  for (let i = 0; i < 5; i++) {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd: process.cwd(), encoding: 'utf8' });
    if (r.status !== 0) return undefined;
    runs.push(Number(r.stdout.trim()));
  }
  return median(runs);
}

async function argParsing(): Promise<void> {
  line('## (a) Argument parsing');
  line();
  line(`argv: \`${ARGV.join(' ')}\`; parse: tinybench mean per parse (a fresh program each time for commander and yargs, as a CLI builds it once per process); cold import: fresh process, median of 5 (ctxfold's figure includes the formats and runtime defaults args.ts imports, which the CLI loads anyway; a library's adds to it). Last two columns: the message for a misspelled flag and command.`);
  line();
  const commander = await load('commander');
  const yargsMod = await load('yargs');
  const utilOptions = {
    'max-context-tokens': { type: 'string' }, 'keep-last': { type: 'string' }, model: { type: 'string' },
    summarizer: { type: 'string' }, quiet: { type: 'boolean', short: 'q' },
  } as const;
  const tasks: Record<string, () => unknown> = {
    'ctxfold cli/args.ts': () => ctxfoldParseArgs(ARGV),
    'node:util parseArgs': () => nodeParseArgs({ args: ARGV.slice(1), options: utilOptions, allowPositionals: true, strict: true }),
  };
  const commanderProgram = (): Loose => {
    const program = new commander.Command('ctxfold').exitOverride().configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
    program.command('compress').argument('[file]').option('--max-context-tokens <n>').option('--keep-last <n>').option('--model <name>')
      .option('--summarizer <kind>').option('-q, --quiet').action(() => undefined);
    for (const c of ['validate', 'inspect', 'serve']) program.command(c).action(() => undefined);
    return program;
  };
  if (commander) tasks[`commander ${versionOf('commander')}`] = () => commanderProgram().parse(ARGV, { from: 'user' });
  const yargsProgram = (argv: readonly string[]): Loose => {
    const y = yargsMod.default([...argv]);
    return y.command('compress [file]', 'fold', (b: Loose) => b.option('max-context-tokens', { type: 'number' }).option('keep-last', { type: 'number' })
      .option('model', { type: 'string' }).option('summarizer', { type: 'string' }).option('quiet', { alias: 'q', type: 'boolean' }))
      .command('validate', '').command('inspect', '').command('serve', '')
      .strict().recommendCommands().exitProcess(false).fail((msg: string, err: Error) => { throw err ?? new Error(msg); }).help(false).version(false);
  };
  if (yargsMod) tasks[`yargs ${versionOf('yargs')}`] = () => yargsProgram(ARGV).parseSync();
  const rows = await timeTasks(tasks);
  const imports: Record<string, string> = {
    'ctxfold cli/args.ts': new URL('../src/cli/args.js', import.meta.url).href,
    'node:util parseArgs': 'node:util',
    [`commander ${versionOf('commander')}`]: 'commander',
    [`yargs ${versionOf('yargs')}`]: 'yargs',
  };
  // Did-you-mean: the message each gives for a misspelled flag and a misspelled command.
  const message = (fn: () => unknown): string => {
    try {
      fn();
      return '(accepted)';
    } catch (error) {
      return ((error as Error).message || String(error)).replace(/\s*\n\s*/g, ' ').slice(0, 120);
    }
  };
  const typo: Record<string, [string, string]> = {
    'ctxfold cli/args.ts': [message(() => ctxfoldParseArgs(TYPO_FLAG)), message(() => ctxfoldParseArgs(TYPO_COMMAND))],
    'node:util parseArgs': [message(() => nodeParseArgs({ args: TYPO_FLAG.slice(1), options: utilOptions, allowPositionals: true, strict: true })), 'no commands'],
  };
  if (commander) typo[`commander ${versionOf('commander')}`] = [message(() => commanderProgram().parse(TYPO_FLAG, { from: 'user' })), message(() => commanderProgram().parse(TYPO_COMMAND, { from: 'user' }))];
  if (yargsMod) typo[`yargs ${versionOf('yargs')}`] = [message(() => yargsProgram(TYPO_FLAG).parseSync()), message(() => yargsProgram(TYPO_COMMAND).parseSync())];
  line('| parser | parse mean µs | parse p99 µs | cold import ms | `--max-context-tokns` | `compres` |');
  line('|---|---:|---:|---:|---|---|');
  for (const r of rows) {
    const cold = coldImportMs(imports[r.name]);
    const [flag, command] = typo[r.name] ?? ['', ''];
    line(`| ${r.name} | ${f(r.meanUs)} | ${f(r.p99Us)} | ${cold === undefined ? 'n/a' : f(cold, 1)} | ${flag.replaceAll('|', '\\|')} | ${command.replaceAll('|', '\\|')} |`);
  }
  line();
}

// ---------------------------------------------------------------------------------------------
// (b) Server-sent events
// ---------------------------------------------------------------------------------------------

/** 2,000 OpenAI `chat.completion.chunk` events and `[DONE]`, cut into network-like pieces of 1–1,500 bytes. */
function sseStream(): Uint8Array[] {
  const words = ['The', ' fold', ' keeps', ' tool', ' calls', ' whole', ',', ' 数据', ' and', ' résumé', '.', '\n'];
  let text = '';
  for (let i = 0; i < 2000; i++) {
    const chunk = { id: 'chatcmpl-abc123', object: 'chat.completion.chunk', created: 1764633600, model: 'gpt-4o-2024-08-06', system_fingerprint: 'fp_1', choices: [{ index: 0, delta: { content: words[i % words.length] }, logprobs: null, finish_reason: i === 1999 ? 'stop' : null }] };
    text += `data: ${JSON.stringify(chunk)}\n\n`;
  }
  text += 'data: [DONE]\n\n';
  const bytes = new TextEncoder().encode(text);
  const pieces: Uint8Array[] = [];
  let seed = 7;
  for (let at = 0; at < bytes.length;) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const size = 1 + (seed % 1500);
    pieces.push(bytes.subarray(at, at + size));
    at += size;
  }
  return pieces;
}

async function sseParsing(): Promise<void> {
  line('## (b) Server-sent events');
  line();
  const pieces = sseStream();
  const total = pieces.reduce((n, p) => n + p.byteLength, 0);
  line(`Stream: 2,000 OpenAI chunk events and [DONE], ${total} bytes in ${pieces.length} pieces of 1–1,500 bytes; one task = the whole stream, each event's data handed over (not JSON-parsed).`);
  line();
  const esp = await load('eventsource-parser', 'createParser');
  let events = 0;
  const tasks: Record<string, () => unknown> = {
    'ctxfold server/sse-reader.ts': () => {
      const reader = new SseReader(() => { events++; });
      for (const p of pieces) reader.push(p);
      reader.end();
    },
  };
  if (esp) {
    tasks[`eventsource-parser ${versionOf('eventsource-parser')}`] = () => {
      const decoder = new TextDecoder();
      const parser = esp.createParser({ onEvent: () => { events++; } });
      for (const p of pieces) parser.feed(decoder.decode(p, { stream: true }));
      parser.feed(decoder.decode());
    };
  }
  // Both must see every event.
  for (const [name, fn] of Object.entries(tasks)) {
    events = 0;
    fn();
    if (events !== 2001) throw new Error(`${name} delivered ${events} events, expected 2001`);
  }
  const rows = await timeTasks(tasks, 600);
  line('| parser | ms per stream | p99 ms | MB/s |');
  line('|---|---:|---:|---:|');
  for (const r of rows) line(`| ${r.name} | ${f(r.meanUs / 1000, 3)} | ${f(r.p99Us / 1000, 3)} | ${f(total / r.meanUs, 0)} |`);
  line();
}

// ---------------------------------------------------------------------------------------------
// (c) Bounded cache
// ---------------------------------------------------------------------------------------------

interface CacheLike {
  get(key: string): number | undefined;
  set(key: string, value: number): void;
}

/** Entries a cache holds now. */
const held = (cache: CacheLike): number => (cache instanceof TextMemo ? cache.size().texts : (cache as Loose).size as number);

async function boundedCache(): Promise<void> {
  line('## (c) Bounded cache');
  line();
  line(`tokens/text-memo.ts (two-generation approximate LRU, bounded by bytes of text: the token counter's memo, ${DEFAULT_COUNT_CACHE_BYTES / 1024 / 1024} MiB by default) against lru-cache bounded the same way (\`maxSize\` ${DEFAULT_COUNT_CACHE_BYTES} with \`sizeCalculation\` 2 bytes a character). Workload: message texts of 40–800 characters, looked up with \`get\` and \`set\` on a miss, as the counter does; one task = 10,000 lookups, keys drawn so about 90% hit. Memory: heap growth while a fresh cache is filled with every key (the keys exist beforehand), per entry, at 10,000 keys (at 100,000 the texts exceed 32 MiB and both evict: TextMemo drops its old generation whole, so it holds between half and all of its bound); one run, so a rough figure.`);
  line();
  const lru = await load('lru-cache', 'LRUCache');
  const make: Record<string, () => CacheLike> = { 'ctxfold TextMemo': () => new TextMemo<number>(DEFAULT_COUNT_CACHE_BYTES) };
  if (lru) make[`lru-cache ${versionOf('lru-cache')}`] = () => new lru.LRUCache({ maxSize: DEFAULT_COUNT_CACHE_BYTES, sizeCalculation: (_v: number, k: string) => 2 * k.length });
  line('| cache | keys (held after filling) | lookups/s (90% hits) | set-only fill, ns per entry | bytes per entry (excl. keys) |');
  line('|---|---:|---:|---:|---:|');
  for (const keys of [10_000, 100_000]) {
    const texts = Array.from({ length: keys }, (_, i) => `message ${i}: ` + 'lorem ipsum dolor sit amet '.repeat(1 + (i * 7919) % 30));
    const order = Array.from({ length: 10_000 }, (_, i) => (i * 2654435761) % Math.round(keys / 0.9));
    const caches = Object.fromEntries(Object.entries(make).map(([n, m]) => [n, m()]));
    const tasks: Record<string, () => unknown> = {};
    for (const [name, cache] of Object.entries(caches)) {
      tasks[name] = () => {
        for (const k of order) {
          const text = texts[k] ?? texts[k % keys];
          if (cache.get(text) === undefined) cache.set(text, text.length);
        }
      };
    }
    const rows = await timeTasks(tasks);
    for (const r of rows) {
      // Fill time and memory on a fresh cache.
      const gc = (globalThis as { gc?: () => void }).gc;
      gc?.(); gc?.();
      const before = process.memoryUsage().heapUsed;
      const started = performance.now();
      const fresh = make[r.name]();
      for (let i = 0; i < keys; i++) fresh.set(texts[i], i);
      const fillNs = ((performance.now() - started) * 1e6) / keys;
      gc?.(); gc?.();
      const kept = held(fresh);
      const perEntry = (process.memoryUsage().heapUsed - before) / kept;
      // Once a cache evicts, the heap's growth mixes in what it freed: no per-entry figure then.
      const memory = kept < keys ? 'n/a (evicting)' : gc ? f(perEntry, 0) : 'n/a (run with --expose-gc)';
      line(`| ${r.name} | ${keys} (${kept} held) | ${f(r.hz * 10_000 / 1e6, 2)} M | ${f(fillNs, 0)} | ${memory} |`);
      if (fresh.get(texts[keys - 1]) === undefined) throw new Error(`${r.name} lost its last entry`);
    }
  }
  line();
}

// ---------------------------------------------------------------------------------------------
// (d) Retry and backoff
// ---------------------------------------------------------------------------------------------

async function retryBackoff(): Promise<void> {
  line('## (d) Retry and backoff (features; timing is irrelevant next to a network call)');
  line();
  const pRetry = await load('p-retry');
  const eb = await load('exponential-backoff');
  // One check each can make here: does an abort during the wait end it at once?
  const abortCheck = async (run: (signal: AbortSignal) => Promise<unknown>): Promise<string> => {
    const controller = new AbortController();
    const started = performance.now();
    setTimeout(() => controller.abort(new Error('aborted')), 50);
    try {
      await run(controller.signal);
      return 'resolved';
    } catch {
      return `rejected after ${f(performance.now() - started, 0)} ms`;
    }
  };
  const failing = async (): Promise<never> => { throw new Error('503'); };
  const { abortableSleep } = await import('../src/summarize/backoff.js');
  const ownAbort = await abortCheck((signal) => abortableSleep(2000, signal));
  const pRetryAbort = pRetry ? await abortCheck((signal) => pRetry.default(failing, { retries: 3, minTimeout: 2000, signal })) : 'n/a';
  const ebAbort = eb ? await abortCheck(() => eb.backOff(failing, { numOfAttempts: 2, startingDelay: 2000 })) : 'n/a';
  line('A first retry due in 2,000 ms, the caller aborting at 50 ms:');
  line();
  line(`- ctxfold summarize/backoff.ts abortableSleep: ${ownAbort}`);
  line(`- p-retry ${versionOf('p-retry')} ({ signal }): ${pRetryAbort}`);
  line(`- exponential-backoff ${versionOf('exponential-backoff')} (no signal option): ${ebAbort}`);
  line();
  line('| need (summarize/llm.ts) | ctxfold backoff.ts + llm.ts loop | p-retry | exponential-backoff |');
  line('|---|---|---|---|');
  line('| `retry-after` (seconds or HTTP date), capped | yes (`retryAfterMs`) | no: a custom wait needs `onFailedAttempt` sleeping itself, beside its own delay | no |');
  line('| caller\'s AbortSignal stops the wait at once | yes | yes (`signal`) | no (the wait runs to its end) |');
  line('| jitter | equal jitter (half fixed, half random) | `randomize` (factor 1–2) | `jitter: \'full\'` |');
  line('| retry only some failures (408/429/5xx, network, timeout) | yes | `shouldRetry` | `retry()` callback |');
  line('| cap on one delay | 30 s | `maxTimeout` | `maxDelay` |');
  line('| injectable sleep for tests (no real waiting) | yes (`sleep` option) | no | no |');
  line();
}

// ---------------------------------------------------------------------------------------------
// (e) and (f): servers in child processes, and a client loop
// ---------------------------------------------------------------------------------------------

const ANSWER = JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion', created: 1764633600, model: 'gpt-4o', choices: [{ index: 0, message: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 812, completion_tokens: 2, total_tokens: 814 } });
const REQUEST_BODY = JSON.stringify({ model: 'gpt-4o', messages: Array.from({ length: 8 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `turn ${i}: ` + 'some words of the conversation '.repeat(8) })) });

/** `--serve upstream|node|fastify`: listens on 127.0.0.1 and prints its port. */
async function serve(kind: string): Promise<void> {
  if (kind === 'fastify') {
    const fastify = (await import('fastify' as string) as Loose).default({ logger: false, bodyLimit: 32 * 1024 * 1024 });
    fastify.post('/echo', async (request: Loose) => ({ echoed: request.body }));
    await fastify.listen({ host: '127.0.0.1', port: 0 });
    console.log(fastify.server.address().port);
    return;
  }
  const server = createServer((req, res) => {
    readBody(req, 32 * 1024 * 1024).then((body) => {
      if (kind === 'upstream') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWER);
        return;
      }
      // ctxfold's way: node:http, readBody, JSON in and out.
      if (req.method !== 'POST' || req.url !== '/echo') return void res.writeHead(404).end();
      const out = JSON.stringify({ echoed: JSON.parse(body.toString('utf8')) as unknown });
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(out) }).end(out);
    }, () => res.writeHead(400).end());
  });
  // keepAliveTimeout left at Node's default (5 s), as the task's upstream.
  server.listen(0, '127.0.0.1', () => console.log((server.address() as AddressInfo).port));
}

async function startChild(kind: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [SELF, '--serve', kind], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${kind} server exited (${code})`)));
    child.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
  });
  return { child, port };
}

interface LoadFigures {
  readonly p50: number;
  readonly p99: number;
  readonly errors: number;
  readonly perSecond: number;
}

/** `total` calls of `one`, `concurrency` at a time; `pauseMs` between the two halves (0: none). */
async function underLoad(one: () => Promise<void>, total: number, concurrency: number, pauseMs = 0): Promise<LoadFigures> {
  const latencies: number[] = [];
  let errors = 0;
  let wall = 0;
  const burst = async (count: number): Promise<void> => {
    let left = count;
    const started = performance.now();
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (left-- > 0) {
        const t = performance.now();
        try {
          await one();
          latencies.push(performance.now() - t);
        } catch {
          errors++;
        }
      }
    }));
    wall += performance.now() - started;
  };
  if (pauseMs === 0) await burst(total);
  else {
    await burst(total / 2);
    await new Promise((r) => setTimeout(r, pauseMs));
    await burst(total / 2);
  }
  return { p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), errors, perSecond: (latencies.length * 1000) / wall };
}

async function upstreamClient(): Promise<void> {
  line('## (e) Upstream client');
  line();
  line(`A loopback upstream (node:http in another process, keepAliveTimeout left at Node's 5 s) answering a fixed chat.completion; 2,000 POSTs of ${REQUEST_BODY.length} bytes at 20 concurrent, in two bursts of 1,000 with 4.95 s between them (idle pooled connections race the upstream closing them), after 400 unmeasured; before them, 1,000 on one connection after another (as proxy-load.ts times the proxy's latency goals). Each call reads the whole answer. The clients take turns, twice, the second round reported.`);
  line();
  const undici = await load('undici', 'Pool');
  const { child, port } = await startChild('upstream');
  const origin = `http://127.0.0.1:${port}`;
  const body = Buffer.from(REQUEST_BODY);
  const agent = createUpstreamAgent(new URL(origin), DEFAULT_UPSTREAM_KEEP_ALIVE_MS);
  const never = new AbortController().signal;
  const clients: Record<string, () => Promise<void>> = {
    [`ctxfold server/upstream.ts callUpstream (node:http Agent, keep-alive ${DEFAULT_UPSTREAM_KEEP_ALIVE_MS} ms, one resend on a closed idle connection)`]: async () => {
      const res = await callUpstream({ url: `${origin}/v1/chat/completions`, method: 'POST', headers: { 'content-type': 'application/json' }, body, agent, clientGone: never, timeoutMs: 30_000 });
      for await (const _ of res.chunks()) { /* read it all */ }
      if (res.status !== 200) throw new Error(String(res.status));
    },
  };
  // The same client without ctxfold's wrapper (timeouts, abort, resend): what node:http itself costs.
  const plainAgent = new Agent({ keepAlive: true, timeout: DEFAULT_UPSTREAM_KEEP_ALIVE_MS });
  clients['node:http request alone (keep-alive Agent, no wrapper)'] = () => new Promise((resolve, reject) => {
    const req = httpRequest(`${origin}/v1/chat/completions`, { method: 'POST', agent: plainAgent, headers: { 'content-type': 'application/json', 'content-length': body.byteLength } }, (res) => {
      res.resume();
      res.once('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(String(res.statusCode)))));
      res.once('error', reject);
    });
    req.once('error', reject);
    req.end(body);
  });
  let pool: Loose;
  if (undici) {
    pool = new undici.Pool(origin);
    clients[`undici ${versionOf('undici')} Pool.request (defaults: keep-alive 4 s, upstream hint honoured)`] = async () => {
      const res = await pool.request({ path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json' }, body });
      await res.body.arrayBuffer();
      if (res.statusCode !== 200) throw new Error(String(res.statusCode));
    };
  }
  const figures: Record<string, { one: LoadFigures; twenty: LoadFigures }> = {};
  for (let round = 0; round < 2; round++) {
    for (const [name, one] of Object.entries(clients)) {
      await underLoad(one, 400, 20);
      const single = await underLoad(one, 1000, 1);
      figures[name] = { one: single, twenty: await underLoad(one, 2000, 20, 4950) };
    }
  }
  line('| client | 1 connection: p50 ms | p99 ms | 20 concurrent: p50 ms | p99 ms | requests/s | errors (both) |');
  line('|---|---:|---:|---:|---:|---:|---:|');
  for (const [name, r] of Object.entries(figures)) line(`| ${name} | ${f(r.one.p50, 3)} | ${f(r.one.p99, 3)} | ${f(r.twenty.p50, 3)} | ${f(r.twenty.p99, 3)} | ${f(r.twenty.perSecond, 0)} | ${r.one.errors + r.twenty.errors} |`);
  line();
  plainAgent.destroy();
  agent.destroy();
  await pool?.close();
  child.kill();
}

async function httpServer(): Promise<void> {
  line('## (f) HTTP server');
  line();
  line(`A trivial JSON echo route (POST /echo, ${REQUEST_BODY.length}-byte body parsed and sent back) in another process: node:http as ctxfold runs it (server/read-body.ts, JSON.parse, JSON.stringify) against fastify (its own JSON body parser and serializer, logger off). Client: node:http keep-alive agent, 20 concurrent, 2,000 requests after 1,000 unmeasured; the two servers take turns, twice, the second round reported.`);
  line();
  const hasFastify = (await load('fastify')) !== undefined;
  const kinds = hasFastify ? ['node', 'fastify'] : ['node'];
  const servers = await Promise.all(kinds.map(async (k) => ({ kind: k, ...(await startChild(k)) })));
  const agent = new Agent({ keepAlive: true, maxSockets: 20 });
  const body = Buffer.from(REQUEST_BODY);
  const call = (port: number) => (): Promise<void> => new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/echo', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.byteLength } }, (res) => {
      res.resume();
      res.once('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(String(res.statusCode)))));
      res.once('error', reject);
    });
    req.once('error', reject);
    req.end(body);
  });
  const figures: Record<string, LoadFigures> = {};
  for (let round = 0; round < 2; round++) {
    for (const s of servers) {
      await underLoad(call(s.port), 1000, 20);
      figures[s.kind === 'node' ? 'node:http (ctxfold\'s way)' : `fastify ${versionOf('fastify')}`] = await underLoad(call(s.port), 2000, 20);
    }
  }
  line('| server | p50 ms | p99 ms | requests/s | errors |');
  line('|---|---:|---:|---:|---:|');
  for (const [name, r] of Object.entries(figures)) line(`| ${name} | ${f(r.p50, 3)} | ${f(r.p99, 3)} | ${f(r.perSecond, 0)} | ${r.errors} |`);
  line();
  agent.destroy();
  for (const s of servers) s.child.kill();
}

/** Runs every comparison, prints it as markdown and writes it to bench/results/libraries.md. */
export async function compareLibraries(): Promise<void> {
  const started = performance.now();
  const [l1, l5, l15] = loadavg();
  line('# ctxfold code against well-kept libraries');
  line();
  line(`${new Date().toISOString()}, Node ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, load average ${f(l1)} ${f(l5)} ${f(l15)} at the start. Produced by \`npm run bench -- --libraries\` (bench/libraries.ts).`);
  line();
  await argParsing();
  await sseParsing();
  await boundedCache();
  await retryBackoff();
  await upstreamClient();
  await httpServer();
  const [e1, e5, e15] = loadavg();
  line(`Wall time ${f((performance.now() - started) / 1000, 0)} s; load average ${f(e1)} ${f(e5)} ${f(e15)} at the end.`);
  writeFileSync(fileURLToPath(new URL('../../bench/results/libraries.md', import.meta.url)), printed.join('\n') + '\n');
}

// Run as a script (`node dist/bench/libraries.js`, or a `--serve KIND` child), not when bench/run.ts imports it.
if (process.argv[1] === SELF) {
  const serveAt = process.argv.indexOf('--serve');
  await (serveAt !== -1 ? serve(process.argv[serveAt + 1]) : compareLibraries());
}
