import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { assertBuilt, overlaps } from './redis-workers.js';

/**
 * Proxy processes for the multi-instance tests: each is `proxy-worker.mjs`, a `startServer` of
 * the built code (dist/) on a shared Redis, driven over HTTP like any proxy and controlled
 * (drain, ready, close) over its stdin.
 */

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const WORKER = join(root, '__tests__', 'helpers', 'proxy-worker.mjs');

/** The sources the proxy workers run, as built files must reflect them. */
function sources(): string[] {
  const server = readdirSync(join(root, 'src', 'server')).filter((f) => f.endsWith('.ts')).map((f) => `src/server/${f}`);
  return [...server, 'src/store/redis-store.ts', 'src/runtime/lease-job.ts', 'src/runtime/compressor.ts', 'src/summarize/llm.ts'];
}

/**
 * Makes sure dist/ holds the proxy: builds it (`npm run build`) only when it is missing (CI builds
 * before jest), and throws when it is older than a source it runs (a stale build would test old code).
 */
export function ensureBuiltProxy(): void {
  if (!existsSync(join(root, 'dist', 'src', 'server', 'index.js'))) {
    const build = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, encoding: 'utf8' });
    if (build.status !== 0) throw new Error(`dist/ was missing and \`npm run build\` failed: ${build.stdout}${build.stderr}`);
  }
  assertBuilt(sources());
}

/** One record a proxy worker made of a leased summary job (see proxy-worker.mjs). */
export interface ProxyJobRecord {
  readonly e: 'start' | 'end' | 'done' | 'stale' | 'commit-failed' | 'skipped';
  /** The scoped chat id (`<tenant>:<chat>`). */
  readonly chat: string;
  readonly pid: number;
  readonly name: string;
  /** `performance.timeOrigin + performance.now()` in the worker: ms on the machine's clock. */
  readonly t: number;
  readonly version?: number;
  readonly fence?: number;
  readonly error?: string;
  /** Set when the record could not be pushed to Redis (it was down). */
  readonly unlogged?: boolean;
}

/** A running proxy process. */
export interface ProxyWorker {
  readonly name: string;
  readonly child: ChildProcess;
  /** `http://127.0.0.1:<port>`: clients use `${url}/v1`. */
  readonly url: string;
  /** Resolves once its store is connected (again, after an outage). */
  ready(): Promise<void>;
  /** Waits for its summary jobs; resolves with every job record it made. */
  drain(): Promise<ProxyJobRecord[]>;
  /** Graceful stop, then waits for the exit (SIGKILL after 3 s). Idempotent; a dead process is left as it is. */
  close(): Promise<void>;
}

/** Starts a proxy process on Redis `redisUrl` / `prefix` forwarding to `upstream`; resolves once it listens. */
export function startProxyWorker(name: string, redisUrl: string, prefix: string, leaseMs: number, upstream: string): Promise<ProxyWorker> {
  const child = spawn(process.execPath, [WORKER, redisUrl, prefix, name, String(leaseMs), upstream], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  let partial = '';
  const waiters: { op: string; resolve: (value: Record<string, unknown>) => void }[] = [];
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk; });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const failure = exited.then(() => { throw new Error(`proxy worker ${name} exited (code ${child.exitCode}, signal ${child.signalCode}): ${stderr}`); });
  failure.catch(() => undefined);
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      const message = JSON.parse(line) as Record<string, unknown>;
      const at = waiters.findIndex((w) => w.op === message.op);
      if (at >= 0) waiters.splice(at, 1)[0]!.resolve(message);
    }
  });
  const expect = (op: string) => Promise.race([new Promise<Record<string, unknown>>((resolve) => waiters.push({ op, resolve })), failure]);
  const send = (message: object) => child.stdin!.write(`${JSON.stringify(message)}\n`);
  const alive = () => child.exitCode === null && child.signalCode === null;
  return expect('up').then((up) => ({
    name,
    child,
    url: up.url as string,
    async ready() {
      const answer = expect('ready');
      send({ op: 'ready' });
      const message = await answer;
      if (message.error) throw new Error(`proxy worker ${name}: ${String(message.error)}`);
    },
    async drain() {
      const answer = expect('drained');
      send({ op: 'drain' });
      return (await answer).records as ProxyJobRecord[];
    },
    async close() {
      if (!alive()) return;
      send({ op: 'close' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    },
  }));
}

/** Per chat, the leased intervals of every worker and the pairs that overlap (`overlaps` of the compressor-level workers). */
export const leaseOverlaps: (records: readonly ProxyJobRecord[]) => { jobs: number; overlapping: string[] } = overlaps;

/**
 * Reads a job log in the order Redis stored it and returns what breaks "one job per chat at a
 * time": a start while another process (or job) holds the chat, an end by a process that does not
 * hold it, and chats still held at the end.
 */
export function outOfTurn(log: readonly ProxyJobRecord[]): string[] {
  const holder = new Map<string, number>();
  const problems: string[] = [];
  for (const r of log) {
    if (r.e === 'start') {
      if (holder.has(r.chat)) problems.push(`${r.chat}: pid ${r.pid} started while pid ${holder.get(r.chat)} held it`);
      holder.set(r.chat, r.pid);
    } else if (r.e === 'end') {
      if (holder.get(r.chat) !== r.pid) problems.push(`${r.chat}: pid ${r.pid} ended a job it did not hold`);
      holder.delete(r.chat);
    }
  }
  for (const [chat, pid] of holder) problems.push(`${chat}: pid ${pid} never ended its job`);
  return problems;
}

/** Per chat, the versions committed (`done`) by any process, sorted. */
export function committedVersions(records: readonly ProxyJobRecord[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const r of records) if (r.e === 'done') out.set(r.chat, [...(out.get(r.chat) ?? []), r.version!]);
  for (const list of out.values()) list.sort((x, y) => x - y);
  return out;
}
