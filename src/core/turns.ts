import type { CallRef, MessageLens, ResultRef } from '../formats/lens.js';

/**
 * A call turn as a provider sees it: the message(s) that open calls, then the unbroken run of
 * result-carrying messages right after them. Unlike groups, a turn keeps every adjacent result,
 * answering or not, so rules can say what is wrong with it.
 */
export interface CallTurn {
  /** Index of the first message that opens calls. */
  readonly opener: number;
  /** End (exclusive) of the opening messages (more than one where parallel calls are split). */
  readonly openersEnd: number;
  /** End (exclusive) of the run of result-carrying messages after the openers. */
  readonly runEnd: number;
  readonly calls: readonly CallRef[];
}

/** A result as found in the history: which message carries it and which turn it follows, if any. */
export interface PlacedResult {
  readonly index: number;
  readonly result: ResultRef;
  /** The turn whose run holds this result; undefined when no turn directly precedes it. */
  readonly turn?: CallTurn;
}

/** The call structure of a history: turns in order, and every result with its place. */
export interface CallStructure {
  readonly turns: readonly CallTurn[];
  readonly results: readonly PlacedResult[];
}

/**
 * Scans a history once for call turns and results. A result belongs to a turn only when it sits
 * in the unbroken run of result-carrying messages right after the turn's openers; anything else
 * is outside every turn.
 */
export function scanCalls<M>(messages: readonly M[], lens: MessageLens<M>): CallStructure {
  const turns: CallTurn[] = [];
  const results: PlacedResult[] = [];
  const n = messages.length;
  let i = 0;
  while (i < n) {
    const calls = lens.calls(messages[i]);
    if (calls.length === 0) {
      for (const r of lens.results(messages[i])) results.push({ index: i, result: r });
      i++;
      continue;
    }
    let all: CallRef[] = [...calls];
    let j = i + 1;
    if (lens.splitParallelCalls) {
      while (j < n && lens.kind(messages[j]) === 'assistant' && lens.results(messages[j]).length === 0 && lens.calls(messages[j]).length > 0) {
        all = all.concat(lens.calls(messages[j]));
        j++;
      }
    }
    let k = j;
    while (k < n && lens.results(messages[k]).length > 0 && lens.calls(messages[k]).length === 0) k++;
    const turn: CallTurn = { opener: i, openersEnd: j, runEnd: k, calls: all };
    turns.push(turn);
    for (let r = j; r < k; r++) for (const res of lens.results(messages[r])) results.push({ index: r, result: res, turn });
    i = k;
  }
  return { turns, results };
}

/**
 * Pairs the results of one turn's run with its calls: a result with an id answers the call with
 * that id; a result without one (legacy `function` messages, id-less formats) answers the first
 * id-less call not yet answered, or repeats the last id-less call's answer when all are taken.
 * Returns, per call, the results answering it, and the results that answer no call of the turn.
 */
export function pairTurn(turn: CallTurn, placed: readonly PlacedResult[]): { answers: PlacedResult[][]; strays: PlacedResult[] } {
  const answers: PlacedResult[][] = turn.calls.map(() => []);
  const strays: PlacedResult[] = [];
  for (const p of placed) {
    const k = pairResult(turn.calls, answers, p.result.id);
    if (k < 0) strays.push(p);
    else answers[k].push(p);
  }
  return { answers, strays };
}

function pairResult(calls: readonly CallRef[], answers: readonly unknown[][], id: string | undefined): number {
  if (id !== undefined) {
    // The first call with this id still open; a second result for it is a duplicate of the first.
    let seen = -1;
    for (let k = 0; k < calls.length; k++) {
      if (calls[k].id !== id) continue;
      if (answers[k].length === 0) return k;
      if (seen < 0) seen = k;
    }
    return seen;
  }
  let lastIdless = -1;
  for (let k = 0; k < calls.length; k++) {
    if (calls[k].id !== undefined) continue;
    if (answers[k].length === 0) return k;
    lastIdless = k;
  }
  return lastIdless;
}
