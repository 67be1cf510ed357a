/**
 * The proxy in front of an upstream that closes idle connections: Node's own `http` server with
 * its default `keepAliveTimeout` (5 s), as most self-hosted OpenAI-compatible servers and gateways
 * written for Node are. Counts what the clients get that is not a 2xx.
 *
 * Set-up: three processes, as in proxy-load.ts: the stand-in upstream (this file with
 * `--stand-in`, keep-alive left at Node's default), the real `ctxfold serve` from dist/ in front of
 * it (`--store memory --summarizer none`), and the clients here. Each run is `clients` clients at
 * once, each sending `perClient` small requests one after the other on its own keep-alive
 * connection (1,000 requests by default: 50 x 20), streamed (`"stream": true`, answered as an event
 * stream in pieces) or not. Between two runs the clients pause for just under the upstream's
 * keep-alive (4.98, 4.95, 4.9 s in turn): the next burst takes every pooled connection at once,
 * some of them idle for about 5 s, while the proxy is busy, which is when a request sent on one
 * races the upstream closing it (before the fix, two of five runs of this script lost 16 and 6
 * requests to a 502; the race is timing-bound, so a run can also pass).
 *
 * Run: `npm run build && node dist/bench/proxy-keep-alive.js [runs] [clients] [perClient]`
 * (default 3 50 20; streamed and not: about 40 s). Prints one line per run and exits 1 when any
 * request was not answered 2xx.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** What one run's clients got. */
export interface KeepAliveRun {
  readonly streamed: boolean;
  readonly requests: number;
  readonly ok: number;
  /** Answers with a status other than 2xx, by status and the proxy's error code when it sent one. */
  readonly non2xx: Readonly<Record<string, number>>;
  /** Requests that failed on the client's side (connection error, a body cut off). */
  readonly errors: number;
  /** Requests not answered within 30 s. */
  readonly timeouts: number;
  readonly seconds: number;
}

const ANSWER = JSON.stringify({
  id: 'chatcmpl-ka', object: 'chat.completion', created: 0, model: 'ka-model',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 20, completion_tokens: 1, total_tokens: 21 },
});
const chunk = (content: string, finish: string | null) => `data: ${JSON.stringify({ id: 'chatcmpl-ka', object: 'chat.completion.chunk', created: 0, model: 'ka-model', choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;
const STREAM = [chunk('o', null), chunk('k', 'stop'), 'data: [DONE]\n\n'];
const CLIENT_TIMEOUT_MS = 30_000;
/** The pauses between runs, in turn. */
const PAUSES_MS = [4_980, 4_950, 4_900];

/** `--stand-in`: the upstream, Node's `http` server with its default keep-alive; prints its URL, stops on SIGTERM. */
async function runStandIn(): Promise<void> {
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const streamed = Buffer.concat(parts).includes('"stream":true');
      if (!streamed) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(ANSWER) });
        res.end(ANSWER);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let i = 0;
      const next = () => {
        if (i === STREAM.length - 1) return res.end(STREAM[i]);
        res.write(STREAM[i++]);
        setImmediate(next);
      };
      next();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.stdout.write(`stand-in listening on http://127.0.0.1:${(server.address() as AddressInfo).port} (keepAliveTimeout ${server.keepAliveTimeout} ms)\n`);
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}

/** Spawns `args` with node; resolves with the child and the URL it prints after `marker`. */
function launch(args: readonly string[], marker: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'ignore'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${args.join(' ')}: no "${marker}" line within 20 s`)); }, 20_000);
    child.once('exit', (code, signal) => { clearTimeout(timer); reject(new Error(`${args.join(' ')} exited (code ${code}, signal ${signal}) before listening: ${out}`)); });
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      out += text;
      const match = new RegExp(`${marker} (http://[^\\s]+)`).exec(out);
      if (match) {
        clearTimeout(timer);
        child.removeAllListeners('exit');
        resolve({ child, url: match[1]! });
      }
    });
  });
}

/** SIGTERM, then SIGKILL after 5 s; resolves once it exited. */
async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

type Outcome = { kind: 'ok' } | { kind: 'status'; label: string } | { kind: 'error' } | { kind: 'timeout' };

/** One request on `agent`: its outcome once its whole answer was read (or it failed). */
function send(agent: Agent, url: URL, body: string): Promise<Outcome> {
  return new Promise((resolve) => {
    let settled = false;
    const settle = (o: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: 'Bearer sk-ka' } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('error', () => settle({ kind: 'error' }));
      res.on('end', () => {
        if (!res.complete) return settle({ kind: 'error' });
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) return settle({ kind: 'ok' });
        let code = '';
        try {
          code = String((JSON.parse(Buffer.concat(parts).toString('utf8')) as { error?: { code?: unknown } }).error?.code ?? '');
        } catch {
          code = '';
        }
        settle({ kind: 'status', label: code === '' ? String(status) : `${status} ${code}` });
      });
    });
    const timer = setTimeout(() => { settle({ kind: 'timeout' }); req.destroy(); }, CLIENT_TIMEOUT_MS);
    req.on('error', () => settle({ kind: 'error' }));
    req.end(body);
  });
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One run: `clients` clients at once, each `perClient` requests in a row on its own connection. */
async function run(proxyUrl: string, streamed: boolean, clients: number, perClient: number, round: number): Promise<KeepAliveRun> {
  const url = new URL(`${proxyUrl}/v1/chat/completions`);
  const started = performance.now();
  const non2xx: Record<string, number> = {};
  let ok = 0;
  let errors = 0;
  let timeouts = 0;
  await Promise.all(Array.from({ length: clients }, async (_, c) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let i = 0; i < perClient; i++) {
        const body = JSON.stringify({ model: 'ka-model', stream: streamed, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: `run ${round}, client ${c}, request ${i}` }] });
        const o = await send(agent, url, body);
        if (o.kind === 'ok') ok++;
        else if (o.kind === 'error') errors++;
        else if (o.kind === 'timeout') timeouts++;
        else non2xx[o.label] = (non2xx[o.label] ?? 0) + 1;
      }
    } finally {
      agent.destroy();
    }
  }));
  return { streamed, requests: clients * perClient, ok, non2xx, errors, timeouts, seconds: (performance.now() - started) / 1000 };
}

/**
 * `runs` runs non-streamed then `runs` streamed, against a stand-in with Node's default keep-alive
 * and a `ctxfold serve` started here from dist/ (`proxyArgs` added to its flags); stops both.
 */
export async function measureKeepAlive(runs = 3, clients = 50, perClient = 20, proxyArgs: readonly string[] = []): Promise<KeepAliveRun[]> {
  const here = fileURLToPath(import.meta.url);
  const cli = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
  let upstream: { child: ChildProcess; url: string } | undefined;
  let proxy: { child: ChildProcess; url: string } | undefined;
  const out: KeepAliveRun[] = [];
  try {
    upstream = await launch([here, '--stand-in'], 'stand-in listening on');
    proxy = await launch([cli, 'serve', '--upstream', `${upstream.url}/v1`, '--port', '0', '--store', 'memory', '--summarizer', 'none', '--max-context-tokens', '100000', '--log-level', 'silent', ...proxyArgs], 'ctxfold serve listening on');
    let round = 0;
    for (const streamed of [false, true]) {
      for (let r = 0; r < runs; r++) {
        // Just under the upstream's 5 s keep-alive: the connections the last burst freed first
        // have then been idle for about 5 s when the next burst takes them again.
        if (round > 0) await pause(PAUSES_MS[(round - 1) % PAUSES_MS.length]!);
        out.push(await run(proxy.url, streamed, clients, perClient, round++));
      }
    }
  } finally {
    await Promise.all([stop(proxy?.child), stop(upstream?.child)]);
  }
  return out;
}

/** One line per run. */
export function formatKeepAlive(runs: readonly KeepAliveRun[]): string[] {
  return runs.map((r) => {
    const statuses = Object.entries(r.non2xx).map(([label, n]) => `${n} x ${label}`).join(', ');
    return `${r.streamed ? 'streamed' : 'whole   '}: ${r.requests} requests in ${r.seconds.toFixed(1)} s: ${r.ok} 2xx, non-2xx ${statuses === '' ? 0 : statuses}, errors ${r.errors}, timeouts ${r.timeouts}`;
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === '--stand-in') {
    await runStandIn();
  } else {
    const [runs, clients, perClient] = process.argv.slice(2, 5).map(Number);
    const results = await measureKeepAlive(runs || 3, clients || 50, perClient || 20, process.argv.slice(5));
    for (const line of formatKeepAlive(results)) console.log(line);
    if (results.some((r) => r.ok !== r.requests)) process.exitCode = 1;
  }
}
