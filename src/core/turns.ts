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
 * Pairs the results of one turn's run with its calls: by id where both carry one, otherwise by
 * position. Returns, per call, the indexes of the results answering it, and the results that
 * answer no call of the turn.
 */
export function pairTurn(turn: CallTurn, placed: readonly PlacedResult[]): { answers: PlacedResult[][]; strays: PlacedResult[] } {
  const answers: PlacedResult[][] = turn.calls.map(() => []);
  const strays: PlacedResult[] = [];
  let nextPositional = 0;
  for (const p of placed) {
    const id = p.result.id;
    let k = -1;
    if (id !== undefined) {
      k = turn.calls.findIndex((c) => c.id === id);
      if (k < 0) {
        // A result with an id can still answer an id-less call by position (mixed legacy logs).
        while (nextPositional < turn.calls.length && (turn.calls[nextPositional].id !== undefined || answers[nextPositional].length > 0)) nextPositional++;
        if (nextPositional < turn.calls.length) k = nextPositional;
      }
    } else {
      while (nextPositional < turn.calls.length && answers[nextPositional].length > 0) nextPositional++;
      if (nextPositional < turn.calls.length) k = nextPositional;
      else {
        // More id-less results than calls: the extra one duplicates the last call's answer.
        k = turn.calls.length > 0 ? turn.calls.length - 1 : -1;
        if (k >= 0 && turn.calls[k].id !== undefined) k = -1;
      }
    }
    if (k < 0) strays.push(p);
    else answers[k].push(p);
  }
  return { answers, strays };
}
