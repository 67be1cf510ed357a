import type { CallRef, MessageLens, ResultRef } from './lens.js';

/**
 * The one place calls and results are paired. Grouping, the validator's rules, repair, the
 * transcript given to summarizers and the token report all read this scan; none pairs on its own.
 *
 * Pairing is block by block, never by id over the whole history (real logs reuse ids in later
 * turns): a result pairs only with the calls of the turn whose run it sits in.
 */

/** How a result relates to the calls of the turn it follows. */
export type Pairing =
  /** The first result for one of the turn's calls. */
  | 'answer'
  /** A further result for a call already answered in this turn. */
  | 'duplicate'
  /** In a turn's run, but it answers none of that turn's calls. */
  | 'stray'
  /** Not in any turn's run: nothing right before it opened calls. */
  | 'outside';

/**
 * A call turn as a provider sees it: the message(s) that open calls, then the unbroken run of
 * messages that carry results and open nothing, right after them.
 */
export interface CallTurn {
  /** Ordinal of the turn in the scan. */
  readonly ordinal: number;
  /** Index of the first message that opens calls. */
  readonly opener: number;
  /** End (exclusive) of the opening messages (more than one where the format splits parallel calls). */
  readonly openersEnd: number;
  /** End (exclusive) of the run of result-carrying messages after the openers. */
  readonly runEnd: number;
  readonly calls: readonly CallRef[];
  /** Per call, the first result that answers it; undefined where none in the run does. */
  readonly answers: readonly (PlacedResult | undefined)[];
  /**
   * Per call, true when it needs no answer in the history: it is `optional`, or it is `settledBy`
   * another call of the turn that is answered by the history's last message (the runtime runs it
   * next). Such a call does not make the turn incomplete and is never repaired.
   */
  readonly excused: readonly boolean[];
  /**
   * End (exclusive) of the results that belong to the turn as a unit: the run up to the first
   * message that answers no call not yet answered, and no further once every call is answered.
   */
  readonly answeredEnd: number;
  /** Every call is answered by a message before `answeredEnd`. */
  readonly complete: boolean;
}

/** One result where it stands: the message, its place among that message's results, and what it pairs with. */
export interface PlacedResult {
  /** Index of the message carrying the result. */
  readonly index: number;
  /** Position of the result among the message's results. */
  readonly slot: number;
  readonly result: ResultRef;
  readonly pairing: Pairing;
  /** Ordinal of the turn whose run holds the result; -1 when `outside`. */
  readonly turn: number;
  /** Index in that turn's `calls` of the call it answers or repeats; -1 for `stray` and `outside`. */
  readonly call: number;
}

/** The call structure of messages[from, to): turns in order, and every result with its place. */
export interface CallStructure {
  readonly from: number;
  readonly to: number;
  readonly turns: readonly CallTurn[];
  readonly results: readonly PlacedResult[];
}

/**
 * The call of `calls` a result pairs with, and how: the first call with its id (or, for a
 * result without an id, the first call without one) that is still unanswered; failing that the
 * call it repeats (for an id, the first with it; without an id, the last id-less call). A result
 * without an id but with a name pairs only with id-less calls of that name, in call order.
 */
function pairResult(calls: readonly CallRef[], answered: Uint8Array, id: string | undefined, name: string | undefined, strictNames: boolean): { call: number; pairing: Pairing } {
  let repeat = -1;
  for (let k = 0; k < calls.length; k++) {
    if (calls[k].id !== id) continue;
    // Where the provider checks names too (Gemini), a result with the call's id but another name answers nothing.
    if (strictNames && id !== undefined && name !== undefined && calls[k].name !== name) continue;
    // Without ids, pairing is by position among the calls of the same name (Gemini checks names).
    if (id === undefined && name !== undefined && calls[k].name !== name) continue;
    if (!answered[k]) return { call: k, pairing: 'answer' };
    if (id !== undefined ? repeat < 0 : true) repeat = k;
  }
  return repeat < 0 ? { call: -1, pairing: 'stray' } : { call: repeat, pairing: 'duplicate' };
}

const KEYLESS = Object.freeze({ call: -1, pairing: 'stray' as Pairing });

/**
 * Scans messages[from, to) once for call turns and pairs every result. `from` must not fall
 * inside a turn (a group start is always safe). Linear in the messages and their calls.
 */
export function scanStructure<M>(messages: readonly M[], lens: MessageLens<M>, from = 0, to = messages.length): CallStructure {
  const turns: CallTurn[] = [];
  const results: PlacedResult[] = [];
  const read = lens.read;
  const strictNames = lens.namesMustMatch === true;
  let i = from;
  while (i < to) {
    const here = read(messages[i]);
    const opened = here.calls;
    if (opened.length === 0) {
      here.results.forEach((result, slot) => results.push({ index: i, slot, result, pairing: 'outside', turn: -1, call: -1 }));
      i++;
      continue;
    }
    let calls: readonly CallRef[] = opened;
    let j = i + 1;
    if (lens.splitParallelCalls) {
      // One model response split over items: the calls of every assistant item up to the last
      // one that opens calls (reasoning or text items between parallel calls belong to it too).
      for (let k = j; k < to; k++) {
        const r = read(messages[k]);
        if (r.kind !== 'assistant' || r.results.length > 0) break;
        if (r.calls.length > 0) {
          calls = calls.concat(r.calls);
          j = k + 1;
        }
      }
    }
    const ordinal = turns.length;
    const answered = new Uint8Array(calls.length);
    const answers: (PlacedResult | undefined)[] = new Array(calls.length).fill(undefined);
    let open = calls.length;
    let answeredEnd = j;
    let unitOpen = true; // still inside the results that belong to the turn as a unit
    let k = j;
    for (; k < to; k++) {
      const r = read(messages[k]);
      const carried = r.results;
      if (carried.length === 0 || r.calls.length > 0) break;
      let fresh = 0;
      carried.forEach((result, slot) => {
        // A result without the key its format pairs on answers nothing as sent (`keyless`).
        const { call, pairing } = result.keyless ? KEYLESS : pairResult(calls, answered, result.id, result.name, strictNames);
        const placed: PlacedResult = { index: k, slot, result, pairing, turn: ordinal, call };
        if (pairing === 'answer') {
          answered[call] = 1;
          answers[call] = placed;
          open--;
          fresh++;
        }
        results.push(placed);
      });
      if (unitOpen && fresh > 0) answeredEnd = k + 1;
      // The unit ends at the first message that answers nothing new, or once all is answered.
      if (fresh === 0 || open === 0) unitOpen = false;
    }
    const excused = calls.map((c, x) => answers[x] === undefined && (c.optional === true
      || (c.settledBy !== undefined && k === to && calls.some((o, y) => o.id === c.settledBy && answers[y] !== undefined && answers[y]!.index === to - 1))));
    let complete = true;
    for (let c = 0; c < calls.length; c++) if (!excused[c] && (!answers[c] || answers[c]!.index >= answeredEnd)) complete = false;
    turns.push({ ordinal, opener: i, openersEnd: j, runEnd: k, calls, answers, excused, answeredEnd, complete });
    i = k;
  }
  return { from, to, turns, results };
}

/** The results of one turn, in history order. */
export function resultsOfTurn(structure: CallStructure, turn: CallTurn): PlacedResult[] {
  return structure.results.filter((p) => p.turn === turn.ordinal);
}

/** The call a placed result answers or repeats, if any. */
export function callOf(structure: CallStructure, placed: PlacedResult): CallRef | undefined {
  return placed.turn < 0 || placed.call < 0 ? undefined : structure.turns[placed.turn].calls[placed.call];
}
