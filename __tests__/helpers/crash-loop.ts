import type { OriginalsStore } from '../../src/recall/originals.js';
import type { StateStore } from '../../src/store/state.js';
import { mulberry32 } from '../../bench/fixtures/conversation.js';
import { checkChat, type ChatRecord } from './crash-checks.js';
import { killRound, phaseName, type WorkerArgs } from './crash-rounds.js';

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
  /** Covered ids whose commit was never acknowledged and whose originals were not kept. */
  readonly unkeptPastAck: number;
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
  const phases: Record<string, number> = {};
  const problems: string[] = [];
  let duringRequest = 0;
  let duringJob = 0;
  let acks = 0;
  let requests = 0;
  let failedJobs = 0;
  let unkeptPastAck = 0;
  for (let kill = 0; kill < options.kills; kill++) {
    const chat = `crash-${Math.floor(kill / options.killsPerChat)}`;
    const record = chats.get(chat) ?? { chat, acks: [], previous: undefined, turn: 4 };
    chats.set(chat, record);
    const delayMs = Math.floor(random() * options.maxDelayMs);
    const round = await killRound({ ...options, chat, firstTurn: record.turn, seed: Math.floor(random() * 2 ** 31) }, delayMs);
    const name = phaseName(round.phase);
    const where = `kill ${kill} (${chat}, ${delayMs} ms, ${name})`;
    phases[name] = (phases[name] ?? 0) + 1;
    if (round.phase.request) duringRequest++;
    if (round.phase.job !== 'none') duringJob++;
    if (round.signal !== 'SIGKILL') problems.push(`${where}: the worker ended by itself (code ${round.code}, signal ${round.signal})`);
    if (round.stderr !== '') problems.push(`${where}: the worker wrote to stderr: ${round.stderr}`);
    for (const line of round.lines) {
      const [word, , violations] = line.split(' ');
      if (word === 'refused') problems.push(`${where}: a request failed: ${line}`);
      if (word === 'served' && violations !== '0') problems.push(`${where}: a view broke the provider's rules: ${line}`);
      if (word === 'warning') problems.push(`${where}: ${line}`);
      if (word === 'served') requests++;
      if (line.startsWith('end failed')) failedJobs++;
    }
    const lastVersion = record.acks.at(-1)?.version ?? 0;
    for (const [i, ack] of round.acks.entries()) {
      const before = i === 0 ? lastVersion : round.acks[i - 1]!.version;
      if (ack.version <= before) problems.push(`${where}: version ${ack.version} acknowledged after version ${before}`);
    }
    record.acks.push(...round.acks);
    acks += round.acks.length;
    record.turn = Math.max(record.turn, round.lastTurn);
    const check = await checkChat(options.store, options.store, record, record.turn);
    problems.push(...check.problems.map((p) => `${where}: ${p}`));
    unkeptPastAck += check.unkeptPastAck;
    record.previous = check.state;
  }
  return { phases, duringRequest, duringJob, problems, acks, requests, failedJobs, unkeptPastAck };
}
