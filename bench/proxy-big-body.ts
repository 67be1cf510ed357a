/**
 * Big bodies through the proxy against the library on the same bytes (issue 47): a 10 MB tool
 * result of one character (no spaces; `x`, and a Thai letter, which tiktoken encodes whole), and a
 * 30 MB body of ordinary English across many messages, each with tool-output trimming off and on,
 * at an 8,000-token window.
 *
 * - library: what a server built on the library pays for one request: `JSON.parse` of the body's
 *   UTF-8, `compressContext` with a fresh `createTokenCounter()` (nothing counted before), and the
 *   body written again with the view (`JSON.stringify`, UTF-8), unless the view is the history.
 * - proxy: one POST to a proxy started fresh for that run (`startServer`, memory store, no
 *   summarizer, so its counter and body memory are empty too), timed from the first byte sent to
 *   the answer's last byte. Its upstream is a stand-in in a process of its own (this file run with
 *   `--stand-in`) that answers with the SHA-256 of the body it got: each run checks that the proxy
 *   forwarded byte for byte the body the library wrote. The client runs in the proxy's process,
 *   so sending the body counts against the proxy.
 * - direct: the same POST straight to the stand-in, for what receiving the body costs anyone (a
 *   server built on the library receives it too): the proxy's own cost is proxy - direct.
 * Both use the same options (keepLastYields on, the library's default). The three sides take
 * turns, once unmeasured, then 3 times; the rows give the medians. Goal: the proxy's own cost
 * (proxy - direct) <= 1.5x the library's; proxy / library, the client's whole wait through the
 * proxy against the library's work alone, is printed beside it.
 *
 * Run: `npx tsc -p tsconfig.json && node dist/bench/proxy-big-body.js` (about a minute).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { compressContext, createTokenCounter } from '../src/index.js';
import { startServer } from '../src/server/index.js';
import { median } from './stats.js';

const WINDOW = 8000;
const RUNS = 3;
/** Not in ctxfold's table of models: the window is `maxContextTokens` on both sides. */
const MODEL = 'bench-big-body';
const GOAL = 1.5;

type Message = Record<string, unknown>;

/** A tool result of 10 MB of `char`: one run without spaces. */
function oneCharBody(char: string): { model: string; messages: Message[] } {
  return {
    model: MODEL,
    messages: [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: 'Read the file.' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.bin"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: char.repeat(Math.floor(10_000_000 / Buffer.byteLength(char))) },
      { role: 'user', content: 'What is in it?' },
    ],
  };
}

const WORDS = ('the of and to in is that it was for on are with as his they be at one have this from or had by word but what some we can out other were all there when up use your how said an each she which do their time if will way about many then them write would like so these her long make thing see him two has look more day could go come did number sound no most people my over know water than call first who may down side been now find').split(' ');

/** About 30 MB of English-like prose (seeded), in user and assistant turns of ~6 KB. */
function textBody(): { model: string; messages: Message[] } {
  let seed = 47;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const messages: Message[] = [{ role: 'system', content: 'You are a helpful assistant.' }];
  let bytes = 0;
  for (let turn = 0; bytes < 30_000_000; turn++) {
    let text = '';
    for (let w = 0; w < 1000; w++) text += WORDS[Math.floor(next() * WORDS.length)]! + (w % 15 === 14 ? '. ' : ' ');
    bytes += text.length;
    messages.push({ role: turn % 2 === 0 ? 'user' : 'assistant', content: text });
  }
  messages.push({ role: 'user', content: 'So what do we do now?' });
  return { model: MODEL, messages };
}

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** One library request on `raw`: the bytes it would forward, and its ms. */
function libraryOnce(raw: Buffer, toolOutputTrim: boolean): { ms: number; out: Buffer } {
  const started = performance.now();
  const body = JSON.parse(raw.toString('utf8')) as { messages: Message[] };
  const { messages: view } = compressContext(body.messages, { maxContextTokens: WINDOW, counter: createTokenCounter(), toolOutputTrim });
  const same = view.length === body.messages.length && view.every((m, i) => m === body.messages[i]);
  const out = same ? raw : Buffer.from(JSON.stringify({ ...body, messages: view }), 'utf8');
  return { ms: performance.now() - started, out };
}

/** POSTs `raw` to `url`; resolves with the ms to the answer's end and the answer's text. */
function post(url: string, raw: Buffer): Promise<{ ms: number; answer: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': raw.length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ ms: performance.now() - started, answer: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(raw);
  });
}

/** One proxy request on `raw` through a fresh proxy: ms and the SHA-256 of what reached the upstream. */
async function proxyOnce(upstream: string, raw: Buffer, toolOutputTrim: boolean): Promise<{ ms: number; forwarded: string }> {
  const proxy = await startServer({
    upstream, port: 0, store: 'memory', summarizer: null, logLevel: 'silent',
    maxContextTokens: WINDOW, keepLastYields: true, toolOutputTrim, maxBodyBytes: 64 * 1024 * 1024,
  });
  try {
    const { ms, answer } = await post(`${proxy.url}/v1/chat/completions`, raw);
    const content = (JSON.parse(answer) as { choices?: { message?: { content?: string } }[] }).choices?.[0]?.message?.content;
    if (typeof content !== 'string') throw new Error(`the proxy answered ${answer.slice(0, 200)}`);
    return { ms, forwarded: content };
  } finally {
    await proxy.close();
  }
}

/** One row of the run. */
export interface BigBodyRow {
  readonly body: string;
  readonly bytes: number;
  readonly toolOutputTrim: boolean;
  readonly libraryMs: number;
  /** The client's whole wait through the proxy. */
  readonly proxyMs: number;
  /** The same body POSTed straight to the stand-in. */
  readonly directMs: number;
  /** proxy - direct: what the proxy adds. */
  readonly addedMs: number;
  /** addedMs / libraryMs: the goal's figure. */
  readonly ratio: number;
  /** proxyMs / libraryMs. */
  readonly wholeRatio: number;
  readonly verdict: 'PASS' | 'MISS';
}

/** Library and proxy on each body, side by side: one warm-up each, then the median of `RUNS`. */
export async function measureBigBodies(upstream: string): Promise<BigBodyRow[]> {
  const rows: BigBodyRow[] = [];
  const bodies = [
    ['10 MB of one character', () => oneCharBody('x')],
    // A character tiktoken encodes whole (outside the ranges split in JavaScript): for reading.
    ['10 MB of one Thai character', () => oneCharBody('\u0e01')],
    ['30 MB of English text', textBody],
  ] as const;
  for (const [name, make] of bodies) {
    const raw = Buffer.from(JSON.stringify(make()), 'utf8');
    for (const trim of [false, true]) {
      const lib: number[] = [];
      const prox: number[] = [];
      const direct: number[] = [];
      for (let run = 0; run <= RUNS; run++) {
        // The sides take turns, in a new order every run.
        const order = [['library', 'proxy', 'direct'], ['proxy', 'direct', 'library'], ['direct', 'library', 'proxy']][run % 3]!;
        let libraryOut = '';
        let proxyOut = '';
        for (const side of order) {
          if (side === 'library') {
            const { ms, out } = libraryOnce(raw, trim);
            if (run > 0) lib.push(ms);
            libraryOut = sha(out);
          } else if (side === 'direct') {
            const { ms } = await post(`${upstream}/chat/completions`, raw);
            if (run > 0) direct.push(ms);
          } else {
            const { ms, forwarded } = await proxyOnce(upstream, raw, trim);
            if (run > 0) prox.push(ms);
            proxyOut = forwarded;
          }
        }
        if (libraryOut !== proxyOut) throw new Error(`${name}: the proxy forwarded other bytes than the library's view`);
      }
      const libraryMs = median(lib);
      const proxyMs = median(prox);
      const directMs = median(direct);
      const addedMs = proxyMs - directMs;
      const ratio = addedMs / libraryMs;
      rows.push({ body: name, bytes: raw.length, toolOutputTrim: trim, libraryMs, proxyMs, directMs, addedMs, ratio, wholeRatio: proxyMs / libraryMs, verdict: ratio <= GOAL ? 'PASS' : 'MISS' });
    }
  }
  return rows;
}

/** `--stand-in`: the upstream, in its own process; answers each request with the SHA-256 of its body. */
async function runStandIn(): Promise<void> {
  const server = createServer((req, res) => {
    const hash = createHash('sha256');
    req.on('data', (c: Buffer) => hash.update(c));
    req.on('end', () => {
      const answer = JSON.stringify({
        id: 'chatcmpl-big', object: 'chat.completion', created: 0, model: MODEL,
        choices: [{ index: 0, message: { role: 'assistant', content: hash.digest('hex') }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
      res.end(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.stdout.write(`stand-in listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === '--stand-in') {
    await runStandIn();
  } else {
    const child = spawn(process.execPath, [process.argv[1], '--stand-in'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.once('exit', (code) => reject(new Error(`the stand-in exited (code ${code})`)));
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        const match = /stand-in listening on (http:\/\/\S+)/.exec((out += chunk));
        if (match) resolve(match[1]!);
      });
    });
    child.removeAllListeners('exit');
    const before = loadavg().map((x) => x.toFixed(2)).join(' ');
    try {
      for (const r of await measureBigBodies(`${url}/v1`)) {
        console.log(`${r.body} (${(r.bytes / 1e6).toFixed(1)} MB), toolOutputTrim ${r.toolOutputTrim ? 'on ' : 'off'}: library ${r.libraryMs.toFixed(0)} ms; proxy ${r.proxyMs.toFixed(0)} ms (${r.wholeRatio.toFixed(2)}x), direct ${r.directMs.toFixed(0)} ms, added ${r.addedMs.toFixed(0)} ms: ${r.ratio.toFixed(2)}x the library (goal <= ${GOAL}x): ${r.verdict}`);
      }
    } finally {
      child.kill('SIGTERM');
    }
    console.log(`median of ${RUNS} runs each after one warm-up; load average before ${before}, after ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  }
}
