import type { OriginalsStore } from '../../src/store/originals.js';
import type { StateStore } from '../../src/store/state.js';
import { mulberry32 } from '../../bench/fixtures/conversation.js';
import { checkChat, type ChatRecord } from './crash-checks.js';
import { killRound, phaseName, standby, type KillRound, type WorkerArgs } from './crash-rounds.js';

/** Options of `killLoop`. */
export interface KillLoopOptions extends Pick<WorkerArgs, 'kind' | 'target' | 'keyPrefix' | 'leaseMs'> {
  /** The store the checks read through (the test's own connection to the same data). */
  readonly store: StateStore & OriginalsStore;
  readonly kills: number;
  readonly seed: number;
  /** A new chat every this many kills, so no chat grows without bound. */
  readonly killsPerChat: number;
  /** Each kill lands 0..maxDelayMs after the worker is ready. */
  readonly maxDelayMs: number;
}

/** What `killLoop` saw. */
export interface KillLoopResult {
  /** Kills per phase (`phaseName`). */
  readonly phases: Record<string, number>;
  readonly duringRequest: number;
  readonly duringJob: number;
  /** Rules broken, each naming its kill; empty when every state read back was valid. */
  readonly problems: string[];
  readonly acks: number;
  readonly requests: number;
  /** Jobs that ended failed (a lease lost on a slow host, say): they commit nothing, and are no problem. */
  readonly failedJobs: number;
}

/**
 * Runs crash-worker.mjs `kills` times in sequence, each killed with SIGKILL at a seeded random
 * delay while it serves its chat (which keeps growing from where the last worker stopped), and
 * after each kill checks the chat's stored state (`checkChat`), that the worker served every
 * request it answered with a valid view, and that no version was acknowledged twice.
 */
export async function killLoop(options: KillLoopOptions): Promise<KillLoopResult> {
  const random = mulberry32(options.seed);
  const chats = new Map<string, ChatRecord & { turn: number }>();
  const result = { phases: {} as Record<string, number>, duringRequest: 0, duringJob: 0, problems: [] as string[], acks: 0, requests: 0, failedJobs: 0 };
  const args: WorkerArgs = { kind: options.kind, target: options.target, keyPrefix: options.keyPrefix, leaseMs: options.leaseMs };
  let next = standby(args);
  try {
    for (let kill = 0; kill < options.kills; kill++) {
      const chat = `crash-${Math.floor(kill / options.killsPerChat)}`;
      const record = chats.get(chat) ?? { chat, acks: [], previous: undefined, turn: 4 };
      chats.set(chat, record);
      const delayMs = Math.floor(random() * options.maxDelayMs);
      const worker = next;
      await worker.loaded;
      next = standby(args); // loads its modules while this one works
      const round = await killRound(worker, { chat, firstTurn: record.turn, seed: Math.floor(random() * 2 ** 31) }, delayMs);
      const name = phaseName(round.phase);
      const where = `kill ${kill} (${chat}, ${delayMs} ms, ${name})`;
      result.phases[name] = (result.phases[name] ?? 0) + 1;
      if (round.phase.request) result.duringRequest++;
      if (round.phase.job !== 'none') result.duringJob++;
      result.problems.push(...roundProblems(round, record.acks.at(-1)?.version ?? 0).map((p) => `${where}: ${p}`));
      result.requests += round.lines.filter((l) => l.startsWith('served ')).length;
      result.failedJobs += round.lines.filter((l) => l.startsWith('end failed')).length;
      record.acks.push(...round.acks);
      result.acks += round.acks.length;
      record.turn = Math.max(record.turn, round.lastTurn);
      const check = await checkChat(options.store, options.store, record, record.turn);
      result.problems.push(...check.problems.map((p) => `${where}: ${p}`));
      record.previous = check.state;
    }
  } finally {
    next.kill();
    await next.closed;
  }
  return result;
}

/**
 * What a killed worker's own output shows wrong: it ended by itself, wrote to stderr, failed a
 * request, served a view that breaks the provider's rules, warned, or acknowledged a version
 * not above the one acknowledged before it (`lastVersion`: the chat's last before this worker).
 */
function roundProblems(round: KillRound, lastVersion: number): string[] {
  const problems: string[] = [];
  if (round.signal !== 'SIGKILL') problems.push(`the worker ended by itself (code ${round.code}, signal ${round.signal})`);
  if (round.stderr !== '') problems.push(`the worker wrote to stderr: ${round.stderr}`);
  for (const line of round.lines) {
    const [word, , violations] = line.split(' ');
    if (word === 'refused') problems.push(`a request failed: ${line}`);
    if (word === 'served' && violations !== '0') problems.push(`a view broke the provider's rules: ${line}`);
    if (word === 'warning') problems.push(line);
  }
  let before = lastVersion;
  for (const ack of round.acks) {
    if (ack.version <= before) problems.push(`version ${ack.version} acknowledged after version ${before}`);
    before = ack.version;
  }
  return problems;
}
