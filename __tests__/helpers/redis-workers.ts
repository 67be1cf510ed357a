import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const WORKER = join(root, '__tests__', 'helpers', 'two-process-worker.mjs');

/** Throws unless dist/ holds a build at least as new as `sources` (default: those the compressor workers run). */
export function assertBuilt(sources: readonly string[] = ['src/store/redis-store.ts', 'src/runtime/lease-job.ts', 'src/runtime/compressor.ts']): void {
  for (const source of sources) {
    const built = join(root, 'dist', source.replace(/\.ts$/, '.js'));
    if (!existsSync(built)) throw new Error(`${built} is missing: run \`npm run build\` before this test`);
    if (statSync(built).mtimeMs < statSync(join(root, source)).mtimeMs) throw new Error(`${built} is older than ${source}: run \`npm run build\` before this test`);
  }
}

/** One summary-job record a worker made (see two-process-worker.mjs). */
export interface JobRecord {
  readonly e: 'start' | 'end' | 'done' | 'stale' | 'failed' | 'skipped';
  readonly chat: string;
  readonly pid: number;
  readonly name: string;
  /** `performance.timeOrigin + performance.now()` in the worker: ms on the machine's clock, sub-ms precise. */
  readonly t: number;
  readonly version?: number;
  readonly error?: string;
  /** Set when the record could not be pushed to Redis (it was down). */
  readonly unlogged?: boolean;
}

/** A worker's answer to one request. */
export interface Served {
  readonly id: number;
  readonly ok: boolean;
  readonly violations?: number;
  readonly overBudget?: boolean;
  readonly error?: string;
  readonly ms: number;
}

/** What a worker reports once its summary jobs are drained. */
export interface Drained {
  readonly records: JobRecord[];
  readonly stats: { storeFailures: number; summariesDone: number; summariesFailed: number; summariesStale: number; summariesSkipped?: number };
}

/** A running worker process. */
export interface Worker {
  readonly name: string;
  readonly child: ChildProcess;
  request(chat: number, turns: number): Promise<Served>;
  /** Resolves once its store is connected again (after an outage). */
  ready(): Promise<void>;
  drain(): Promise<Drained>;
  /** Closes its compressor and waits for it to exit (SIGKILL after 3 s). */
  close(): Promise<void>;
}

/** Starts `two-process-worker.mjs` on `url` / `prefix`; resolves once it is connected and serving. */
export function startWorker(name: string, url: string, prefix: string, leaseMs: number, summarizerMs: number): Promise<Worker> {
  const child = spawn(process.execPath, [WORKER, url, prefix, name, String(leaseMs), String(summarizerMs)], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  let partial = '';
  let nextId = 1;
  const pending = new Map<number, (s: Served) => void>();
  const waiters: { op: string; resolve: (value: Record<string, unknown>) => void }[] = [];
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk; });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const failure = exited.then(() => { throw new Error(`worker ${name} exited (code ${child.exitCode}, signal ${child.signalCode}): ${stderr}`); });
  failure.catch(() => undefined);
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      const message = JSON.parse(line) as Record<string, unknown>;
      if (typeof message.op === 'string') {
        const at = waiters.findIndex((w) => w.op === message.op);
        if (at >= 0) waiters.splice(at, 1)[0]!.resolve(message);
      } else {
        pending.get(message.id as number)?.(message as unknown as Served);
        pending.delete(message.id as number);
      }
    }
  });
  const expect = (op: string) => Promise.race([new Promise<Record<string, unknown>>((resolve) => waiters.push({ op, resolve })), failure]);
  const send = (message: object) => child.stdin!.write(`${JSON.stringify(message)}\n`);
  const worker: Worker = {
    name,
    child,
    request(chat, turns) {
      const id = nextId++;
      const answer = new Promise<Served>((resolve) => pending.set(id, resolve));
      send({ op: 'req', id, chat, turns });
      return Promise.race([answer, failure]);
    },
    async ready() {
      const answer = expect('ready');
      send({ op: 'ready' });
      const message = await answer;
      if (message.error) throw new Error(`worker ${name}: ${String(message.error)}`);
    },
    async drain() {
      const answer = expect('drained');
      send({ op: 'drain' });
      return await answer as unknown as Drained;
    },
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      send({ op: 'close' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
  return expect('up').then(() => worker);
}

/**
 * Per chat, the summary jobs of every worker as intervals [start, end] on the machine's clock,
 * sorted by start, and the pairs that overlap (two jobs of one chat at once). A job with no `end`
 * record runs to +Infinity.
 */
export function overlaps(records: readonly { readonly e: string; readonly chat: string; readonly pid: number; readonly t: number }[]): { jobs: number; overlapping: string[] } {
  const byChat = new Map<string, { pid: number; start: number; end: number }[]>();
  const open = new Map<string, { pid: number; start: number; end: number }>();
  for (const r of [...records].sort((a, b) => a.t - b.t)) {
    const key = `${r.pid} ${r.chat}`;
    if (r.e === 'start') {
      const job = { pid: r.pid, start: r.t, end: Infinity };
      open.set(key, job);
      byChat.set(r.chat, [...(byChat.get(r.chat) ?? []), job]);
    } else if (r.e === 'end') {
      const job = open.get(key);
      if (job) job.end = r.t;
      open.delete(key);
    }
  }
  const overlapping: string[] = [];
  let jobs = 0;
  for (const [chat, list] of byChat) {
    list.sort((a, b) => a.start - b.start);
    jobs += list.length;
    // The job still running latest among those started before: every later start must come after its end.
    let last = list[0]!;
    for (let i = 1; i < list.length; i++) {
      const after = list[i]!;
      if (after.start < last.end) overlapping.push(`${chat}: pid ${last.pid} [${last.start.toFixed(3)}, ${last.end.toFixed(3)}] and pid ${after.pid} from ${after.start.toFixed(3)}`);
      if (after.end > last.end) last = after;
    }
  }
  return { jobs, overlapping };
}

/** Per chat, the versions committed (`done`) by any process, sorted. */
export function committed(records: readonly JobRecord[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const r of records) if (r.e === 'done') out.set(r.chat, [...(out.get(r.chat) ?? []), r.version!]);
  for (const list of out.values()) list.sort((x, y) => x - y);
  return out;
}

/** How many records of kind `e`. */
export const count = (records: readonly JobRecord[], e: JobRecord['e']) => records.filter((r) => r.e === e).length;
/** 1..n */
export const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/** The `p` quantile (0..1) of the requests' times, in ms. */
export function percentile(served: readonly Served[], p: number): number {
  const sorted = served.map((s) => s.ms).sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
}
