/**
 * The token counter the peer systems get: tiktoken `o200k_base` (its own encoder instance) with
 * the same per-message accounting as ctxfold's counter, so budgets mean the same for everyone.
 * It keeps no cache between requests: that is what a user of those libraries writes.
 */
import { get_encoding, type Tiktoken } from 'tiktoken';
import { CALL_OVERHEAD_TOKENS, MESSAGE_OVERHEAD_TOKENS, REQUEST_OVERHEAD_TOKENS } from '../src/tokens/accounting.js';

/** Tokens every request costs once (reply priming), added by each peer to its total as ctxfold does. */
export const PEER_REQUEST_OVERHEAD = REQUEST_OVERHEAD_TOKENS;

let encoder: Tiktoken | undefined;
let encoded = 0;

/** The peers' encoder, loaded once per process. */
export function peerEncoder(): Tiktoken {
  return (encoder ??= get_encoding('o200k_base'));
}

/** Tokens of one text with the peers' encoder. */
export function peerTextTokens(text: string): number {
  if (text.length === 0) return 0;
  encoded++;
  return peerEncoder().encode_ordinary(text).length;
}

/** How many texts the peers' encoder has encoded in this process (only ever grows): what shows whether a memo was hit. */
export function peerTextsEncoded(): number {
  return encoded;
}

/** Tokens a message costs: role overhead + content, and per call its overhead, name and arguments. */
export function peerMessageTokens(content: string, calls: readonly { name: string; args: string }[] = [], text: (t: string) => number = peerTextTokens): number {
  let n = MESSAGE_OVERHEAD_TOKENS + 1 + text(content);
  for (const c of calls) n += CALL_OVERHEAD_TOKENS + text(c.name) + text(c.args);
  return n;
}

/**
 * The memo a careful user of a peer library adds in three lines: a Map from text to its token
 * count, kept across the requests of one process (one per workload here; fresh for a cold call).
 * Unbounded, as such a memo usually is.
 */
export function memoizedTextTokens(memo: Map<string, number>): (text: string) => number {
  return (text) => {
    let n = memo.get(text);
    if (n === undefined) {
      n = peerTextTokens(text);
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
