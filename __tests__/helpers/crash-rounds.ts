import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const WORKER = join(dirname(fileURLToPath(import.meta.url)), 'crash-worker.mjs');

/**
 * Where a summary job stood when its process was killed (from the worker's last job line), in
 * the order a job goes: `acknowledging` is after its commit landed, before `summary:done`.
 */
export type JobPhase = 'none' | 'lease' | 'summarizing' | 'keeping-originals' | 'committing' | 'acknowledging';

/** What the worker was doing when the kill landed. */
export interface KillPhase {
  /** A request had started and not been answered. */
  readonly request: boolean;
  readonly job: JobPhase;
}

/** One acknowledged commit: the worker saw `summary:done` for it. */
export interface Ack {
  readonly version: number;
  readonly count: number;
  readonly hash: string;
}

/** One worker run, from its start to the SIGKILL. */
export interface KillRound {
  readonly delayMs: number;
  readonly lines: readonly string[];
  readonly phase: KillPhase;
  readonly acks: readonly Ack[];
  /** The last turn the worker asked for (the chat's length when it died). */
  readonly lastTurn: number;
  readonly signal: NodeJS.Signals | null;
  readonly code: number | null;
  readonly stderr: string;
}

/** The worker's arguments (see crash-worker.mjs). */
export interface WorkerArgs {
  readonly kind: 'sqlite' | 'redis';
  /** The SQLite file, or the Redis URL. */
  readonly target: string;
  readonly keyPrefix: string;
  readonly leaseMs: number;
}

/** What one worker serves, told it once it is on standby. */
export interface WorkerRun {
  readonly chat: string;
  readonly firstTurn: number;
  readonly seed: number;
}

const JOB_LINES: Record<string, JobPhase> = {
  lease: 'lease', job: 'summarizing', keep: 'keeping-originals', kept: 'keeping-originals', commit: 'committing', committed: 'acknowledging', ack: 'none', end: 'none', released: 'none',
};

/**
 * Where the worker stood after its last line: a request is in flight when its last `req` has no
 * answer; the job's phase is set by its last job line (a commit that lost the compare-and-set
 * ends the job). A kill lands after the last line written, before the next one.
 */
export function phaseOf(lines: readonly string[]): KillPhase {
  let request = false;
  let job: JobPhase = 'none';
  for (const line of lines) {
    const [word, , third] = line.split(' ');
    if (word === 'req') request = true;
    else if (word === 'served' || word === 'refused') request = false;
    else if (word === 'committed' && third === 'false') job = 'none';
    else if (word !== undefined && word in JOB_LINES) job = JOB_LINES[word]!;
  }
  return { request, job };
}

/** The acknowledged commits in a worker's lines, in order. */
export function acksOf(lines: readonly string[]): Ack[] {
  return lines.filter((l) => l.startsWith('ack ')).map((l) => {
    const [, version, count, hash] = l.split(' ');
    return { version: Number(version), count: Number(count), hash: hash! };
  });
}

/** A started worker, its modules loading, its store not open yet. */
export interface Standby {
  /** Resolves once it printed `standby`; rejects when it exits first. */
  readonly loaded: Promise<void>;
  /** Tells it what to serve; resolves once it printed `ready`, rejects when it exits first. */
  go(run: WorkerRun): Promise<void>;
  readonly lines: string[];
  readonly stderr: () => string;
  readonly closed: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(): void;
}

/** Starts crash-worker.mjs; it loads its modules and waits for `go` (so a test starts the next one while the last works). */
export function standby(args: WorkerArgs): Standby {
  const child = spawn(process.execPath, [WORKER, args.kind, args.target, args.keyPrefix, String(args.leaseMs)], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  let partial = '';
  let stderr = '';
  const waiting = new Map<string, () => void>();
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
    for (const [line, resolve] of waiting) if (parts.includes(line)) resolve();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk; });
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('close', (code, signal) => {
    if (partial !== '') lines.push(partial); // a line cut by the kill: kept, so a check sees it
    resolve({ code, signal });
  }));
  // No time limit: a loaded host may take long to start node; a worker that dies says so at once.
  const printed = (line: string) => new Promise<void>((resolve, reject) => {
    if (lines.includes(line)) return resolve();
    waiting.set(line, resolve);
    void closed.then(({ code, signal }) => reject(new Error(`crash-worker exited before printing ${line} (code ${code}, signal ${signal}): ${stderr}`)));
  });
  const loaded = printed('standby');
  loaded.catch(() => undefined);
  return {
    loaded, lines, closed,
    stderr: () => stderr,
    go(run) {
      child.stdin.write(`go ${run.chat} ${run.firstTurn} ${run.seed}\n`);
      return printed('ready');
    },
    kill: () => { child.kill('SIGKILL'); },
  };
}

/** Lets a ready worker work `delayMs`, kills it with SIGKILL, and resolves once it is gone and its output read to the end. */
export async function killRound(worker: Standby, run: WorkerRun, delayMs: number): Promise<KillRound> {
  await worker.go(run);
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  worker.kill();
  const { code, signal } = await worker.closed;
  const { lines } = worker;
  const lastReq = lines.filter((l) => l.startsWith('req ')).at(-1);
  return {
    delayMs, lines, phase: phaseOf(lines), acks: acksOf(lines),
    lastTurn: lastReq === undefined ? run.firstTurn : Number(lastReq.split(' ')[1]),
    signal, code, stderr: worker.stderr(),
  };
}

/** The phase as one word for a tally: `request`, `job:<phase>`, `request+job:<phase>` or `idle`. */
export function phaseName(phase: KillPhase): string {
  const job = phase.job === 'none' ? '' : `job:${phase.job}`;
  if (phase.request && job) return `request+${job}`;
  return phase.request ? 'request' : job || 'idle';
}
