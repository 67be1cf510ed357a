/**
 * The token counters the peer systems get: tiktoken `o200k_base` with the same per-message
 * accounting as ctxfold's counter, so budgets mean the same for everyone. Each system counts with
 * its own encoder instance, as a process running that one library would: in the benchmark's
 * rotation an instance shared by several peers stays warm in the CPU's caches through the others'
 * work, which no user of one library gets (ctxfold's counter has its own instance too). No cache
 * between requests unless a "+ memo" system adds one: that is what a user of those libraries writes.
 */
import { get_encoding, type Tiktoken } from 'tiktoken';
import { CALL_OVERHEAD_TOKENS, MESSAGE_OVERHEAD_TOKENS, REQUEST_OVERHEAD_TOKENS } from '../src/tokens/accounting.js';

/** Tokens every request costs once (reply priming), added by each peer to its total as ctxfold does. */
export const PEER_REQUEST_OVERHEAD = REQUEST_OVERHEAD_TOKENS;

const encoders = new Map<string, Tiktoken>();
const encoded = new Map<string, number>();

/** The encoder of one system (by name; `raw` for the counting figure), loaded once per process: every name gets its own instance. */
export function peerEncoder(system = 'raw'): Tiktoken {
  let e = encoders.get(system);
  if (!e) encoders.set(system, (e = get_encoding('o200k_base')));
  return e;
}

/** A text counter on `system`'s own encoder. */
export function peerTextCounter(system: string): (text: string) => number {
  return (text) => {
    if (text.length === 0) return 0;
    encoded.set(system, (encoded.get(system) ?? 0) + 1);
    return peerEncoder(system).encode_ordinary(text).length;
  };
}

/** How many texts `system`'s encoder has encoded in this process (only ever grows): what shows whether a memo was hit. */
export function peerTextsEncoded(system: string): number {
  return encoded.get(system) ?? 0;
}

/** Tokens a message costs: role overhead + content, and per call its overhead, name and arguments. */
export function peerMessageTokens(content: string, calls: readonly { name: string; args: string }[], text: (t: string) => number): number {
  let n = MESSAGE_OVERHEAD_TOKENS + 1 + text(content);
  for (const c of calls) n += CALL_OVERHEAD_TOKENS + text(c.name) + text(c.args);
  return n;
}

/**
 * The memo a careful user of a peer library adds in three lines: a Map from text to its token
 * count, kept across the requests of one process (one per workload here; fresh for a cold call).
 * Unbounded, as such a memo usually is.
 */
export function memoizedTextTokens(memo: Map<string, number>, count: (text: string) => number): (text: string) => number {
  return (text) => {
    let n = memo.get(text);
    if (n === undefined) {
      n = count(text);
      memo.set(text, n);
    }
    return n;
  };
}

/** Thrown by a peer's counter when a call runs past the harness deadline. */
export class DeadlineExceeded extends Error {
  constructor(readonly seconds: number) {
    super(`call exceeded the ${seconds} s deadline`);
  }
}
