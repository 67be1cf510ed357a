import type { MessageLens, Reading } from './lens.js';
import { scanStructure, type CallTurn, type PlacedResult } from './structure.js';

/**
 * An atomic group: a run of messages that is kept or dropped whole. `start` is inclusive and
 * `end` exclusive; groups tile the history in order with no gaps.
 */
export interface Group {
  /** Ordinal of the group in the history. */
  readonly index: number;
  readonly start: number;
  readonly end: number;
  /** `turn`: opens tool calls (with its results and follow-up); `single`: one message. */
  readonly type: 'turn' | 'single';
  /** True when a single group holds a system/developer message. */
  readonly system: boolean;
  /** True when some message of the group carries text a human typed. */
  readonly userText: boolean;
  /** For a turn: every call it opened is answered inside the group. */
  readonly complete: boolean;
  /** A single message carrying results that answer no call of the turn before it. */
  readonly stray: boolean;
}

/** Groups of a history plus, for each message index, the ordinal of the group holding it. */
export interface Grouping {
  readonly groups: readonly Group[];
  readonly groupOf: Int32Array;
  /** 1 at each message that is a system group of its own (pinned: never summarized or dropped). */
  readonly pinned: Uint8Array;
  /**
   * True when every call is answered inside its turn and no result stands outside one: the
   * history has nothing for `repairHistory` to fix, so callers can skip that pass.
   */
  readonly regular: boolean;
  /** Ordinal of the first incomplete or stray group (`Number.MAX_SAFE_INTEGER` when none). */
  readonly firstIrregular: number;
}

/** An earlier grouping of a history whose first `shared` messages equal this one's. */
export interface GroupingResume {
  readonly grouping: Grouping;
  readonly shared: number;
}

/**
 * Partitions `messages` into atomic groups in one linear pass. A turn is a message that opens
 * calls (plus, where the format splits parallel calls over consecutive assistant messages, those
 * too), every following message that answers one of its calls, and an assistant follow-up that
 * opens no calls. Calls pair with results inside the turn only, never by id across the history,
 * since real logs reuse ids in later turns. With `resume`, the groups already found for a shared
 * prefix are reused and only the rest is scanned; the result equals a fresh pass.
 */
export function buildGroups<M>(messages: readonly M[], lens: MessageLens<M>, resume?: GroupingResume): Grouping {
  const b = resumeFrom(messages.length, lens, resume);
  // Calls and results are paired by the one structure scan; this pass only decides group edges.
  const { turns, results } = scanStructure(messages, lens, b.at);
  const oddResultAt = firstOddResult(messages, lens, turns, results);
  groupFrom(messages, lens, turns, b);
  if (oddResultAt >= 0) {
    b.regular = false;
    b.firstIrregular = Math.min(b.firstIrregular, b.groupOf[oddResultAt]);
  }
  return { groups: b.groups, groupOf: b.groupOf, pinned: b.pinned, regular: b.regular, firstIrregular: b.firstIrregular };
}

/** A grouping being built: the groups so far, the per-message arrays, and the first message not grouped yet (`at`). */
interface Building {
  groups: Group[];
  readonly groupOf: Int32Array;
  readonly pinned: Uint8Array;
  regular: boolean;
  firstIrregular: number;
  at: number;
}

/** Where a pass starts: from scratch, or after the groups of an earlier grouping that a fresh pass would find again. */
function resumeFrom<M>(n: number, lens: MessageLens<M>, resume: GroupingResume | undefined): Building {
  let groups: Group[] = [];
  const groupOf = new Int32Array(n);
  const pinned = new Uint8Array(n);
  let regular = true;
  let firstIrregular = Number.MAX_SAFE_INTEGER;
  let i = 0;
  // A format constraint can join groups across the resume point: those formats are grouped afresh.
  if (resume && !lens.atomicJoins) {
    // A group is decided by its own messages and the one right after it: groups of the earlier
    // grouping that end (with that look-ahead) inside the shared prefix are exactly what a fresh
    // pass would find, so the pass resumes after them. Groups are ordered by end: binary search.
    const old = resume.grouping.groups;
    let lo = 0;
    let hi = old.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (old[mid].end + 1 < resume.shared) lo = mid + 1;
      else hi = mid;
    }
    const k = lo;
    groups = old.slice(0, k);
    if (resume.grouping.firstIrregular < k) {
      regular = false;
      firstIrregular = resume.grouping.firstIrregular;
    }
    i = k > 0 ? old[k - 1].end : 0;
    groupOf.set(resume.grouping.groupOf.subarray(0, i));
    pinned.set(resume.grouping.pinned.subarray(0, i));
  }
  return { groups, groupOf, pinned, regular, firstIrregular, at: i };
}

/**
 * The first message (or a turn's opener) that makes the history irregular although each group
 * looks whole: a result that answers nothing or repeats an answer, a call id used twice in a turn,
 * answers out of call order, results not leading their message, or a run split over messages, each
 * where the format cares; -1 when none.
 */
function firstOddResult<M>(messages: readonly M[], lens: MessageLens<M>, turns: readonly CallTurn[], results: readonly PlacedResult[]): number {
  // A result that answers nothing (or repeats an answer) makes the history irregular even when it
  // shares a message with real answers (formats with several results per message).
  let oddResultAt = -1;
  for (const p of results) {
    if (p.pairing !== 'answer') {
      oddResultAt = p.index;
      break;
    }
  }
  // One call id used twice in a turn: valid pairing in order, but refused by providers (and a
  // result then names two calls): repair gives the later call a fresh id.
  if (!lens.repeatsCallIds) {
    for (const t of turns) if (t.calls.length > 1 && repeatsAnId(t.calls)) oddResultAt = oddResultAt < 0 ? t.opener : Math.min(oddResultAt, t.opener);
  }
  // A format that reads a turn's results by position: answers out of call order need repair.
  if (lens.resultsInCallOrder) {
    for (const t of turns) {
      let previous: PlacedResult | undefined;
      for (const a of t.answers) {
        if (a === undefined) continue;
        if (previous !== undefined && a.index < previous.index) oddResultAt = oddResultAt < 0 ? a.index : Math.min(oddResultAt, a.index);
        previous = a;
      }
    }
  }
  // A format whose results must lead their message: one with other content before them needs repair.
  if (lens.resultsFirst) {
    let last = -1;
    for (const p of results) {
      if (p.index === last) continue;
      last = p.index;
      if (lens.resultsFirst(messages[p.index]) !== undefined) {
        oddResultAt = oddResultAt < 0 ? p.index : Math.min(oddResultAt, p.index);
        break;
      }
    }
  }
  // A format that wants a turn's results in one message: a run split over several needs repair.
  if (lens.mergeResults) {
    for (const t of turns) {
      if (t.runEnd - t.openersEnd < 2) continue;
      let split = true;
      for (let k = t.openersEnd; k < t.runEnd; k++) if (lens.read(messages[k]).kind !== 'result') split = false;
      if (split) {
        oddResultAt = oddResultAt < 0 ? t.openersEnd : Math.min(oddResultAt, t.openersEnd);
        break;
      }
    }
  }
  return oddResultAt;
}

/** Groups messages from `b.at` on, in one linear pass over the turns the scan found. */
function groupFrom<M>(messages: readonly M[], lens: MessageLens<M>, turns: readonly CallTurn[], b: Building): void {
  const n = messages.length;
  const read = lens.read;
  const { groups, groupOf, pinned } = b;
  let { regular, firstIrregular, at: i } = b;
  // The format's own atomic constraints (cut points its rules forbid), intersected with pairing.
  const joins = lens.atomicJoins ? lens.atomicJoins(messages, read) : undefined;
  const joined = (k: number) => joins !== undefined && k < n && joins[k] === 1;
  let t = 0;
  while (i < n) {
    const start = i;
    let userText = false;
    let type: Group['type'] = 'single';
    let complete = true;
    let stray = false;
    let end = i;
    let first: Reading | undefined;
    // A group grows while the next message is joined to it by a format constraint.
    do {
      i = end;
      while (t < turns.length && turns[t].opener < i) t++;
      const turn = t < turns.length && turns[t].opener === i ? turns[t++] : undefined;
      const here = read(messages[i]);
      first ??= here;
      if (here.hasUserText) userText = true;
      end = i + 1;
      if (turn) {
        type = 'turn';
        end = turn.answeredEnd;
        for (let k = turn.openersEnd; k < end; k++) if (read(messages[k]).hasUserText) userText = true;
        if (!turn.complete) complete = false;
        // The follow-up that consumes the results belongs to the turn when it opens nothing itself.
        if (turn.complete && end < n && !joined(end + 1)) {
          const next = read(messages[end]);
          if (next.kind === 'assistant' && next.calls.length === 0) {
            if (next.hasUserText) userText = true;
            end++;
          }
        }
      } else if (here.results.length > 0) {
        stray = true; // answers no call of the turn before it
      }
    } while (joined(end));
    if (!complete || stray) {
      regular = false;
      firstIrregular = Math.min(firstIrregular, groups.length);
    }
    const g: Group = {
      index: groups.length,
      start,
      end,
      type,
      system: type === 'single' && end - start === 1 && first!.kind === 'system',
      userText,
      complete,
      stray,
    };
    groups.push(g);
    groupOf.fill(g.index, start, end);
    if (g.system) pinned[start] = 1;
    i = end;
  }
  b.regular = regular;
  b.firstIrregular = firstIrregular;
  b.at = i;
}

/** True when two of the calls share an id (calls without one aside). Pairwise for the few calls of most turns, a set beyond. */
function repeatsAnId(calls: readonly { readonly id?: string }[]): boolean {
  if (calls.length > 16) {
    const ids = calls.map((c) => c.id).filter((id) => id !== undefined);
    return new Set(ids).size < ids.length;
  }
  for (let a = 1; a < calls.length; a++) {
    const id = calls[a].id;
    if (id === undefined) continue;
    for (let b = 0; b < a; b++) if (calls[b].id === id) return true;
  }
  return false;
}
