import { InputError } from '../errors.js';
import type { CallRef, MessageLens, ResultRef } from './lens.js';
import { IDS_UNIQUE_PER_TURN, remapCallIds } from './remap-ids.js';
import { buildGroups } from './groups.js';
import { scanStructure, type CallStructure, type CallTurn, type PlacedResult } from './structure.js';
import { everyCallAnswered, type UnansweredCalls } from './invariants/every-call-answered.js';
import { isOrphan, resultAnswersCall } from './invariants/result-answers-call.js';
import { resultOnce } from './invariants/result-once.js';

/** One change `repairHistory` made, or a problem it saw and left alone. */
export interface RepairAction {
  readonly action: 'moved-result' | 'rekeyed-result' | 'added-result' | 'removed-orphan' | 'removed-duplicate' | 'renamed-id' | 'merged-results' | 'fixed-shape' | 'reported';
  /** Index in the input history. */
  readonly index: number;
  readonly id?: string;
  readonly detail: string;
}

/** Text of the result added for a call that never got one. */
export const MISSING_RESULT_TEXT = 'Error: this tool call produced no result (the result was missing from the history).';

/** The one call of `open` that `result` can only be meant for, or -1 when none or more than one fit. */
function onlyCallFor(result: ResultRef, calls: readonly CallRef[], open: readonly number[], inRun: boolean, namesMustMatch = false): number {
  let fits: number[];
  // Where the provider pairs on names too (Gemini), a result is moved only to a call of its name.
  if (result.id !== undefined) fits = open.filter((k) => calls[k].id === result.id && (inRun || !namesMustMatch || result.name === undefined || calls[k].name === result.name));
  else if (result.idHint !== undefined) fits = open.filter((k) => calls[k].id === result.idHint);
  else if (!inRun) fits = []; // a result is moved only on its id, never on a name or on position
  else if (result.name !== undefined) fits = open.filter((k) => calls[k].name === result.name);
  else fits = [...open];
  // An id on a result that names no function says nothing against an id-less call of its run (a
  // legacy function_call answered by a tool message): the one such open call is the one it answers.
  if (fits.length === 0 && inRun && result.name === undefined && (result.id !== undefined || result.idHint !== undefined)) fits = open.filter((k) => calls[k].id === undefined);
  return fits.length === 1 ? fits[0] : -1;
}

/**
 * Applies the lens's shape rules (`lens.shapeRules`) to every message: a fault the rule can fix
 * without losing anything is fixed in place; one it cannot fix is an `InputError` naming the
 * message's field, the rule, and what to do. Indexes stay the input's; the input itself comes back
 * when nothing was wrong.
 */
export function repairShapes<M>(messages: readonly M[], lens: MessageLens<M>): { messages: readonly M[]; actions: RepairAction[] } {
  const rules = lens.shapeRules;
  const actions: RepairAction[] = [];
  if (!rules || rules.length === 0) return { messages, actions };
  let out: M[] | undefined;
  messages.forEach((given, i) => {
    let m = given;
    for (const rule of rules) {
      const f = rule.fault(m);
      if (!f || !rule.repair) continue;
      if (!('fix' in rule.repair)) throw new InputError(`messages[${i}]${f.field}`, `${f.message} (rule ${rule.id}); ${rule.repair.advice}`);
      m = rule.repair.fix(m);
      actions.push({ action: 'fixed-shape', index: i, detail: `messages[${i}]${f.field}: ${f.message} (rule ${rule.id}); ${rule.repair.done}` });
    }
    if (m !== given) (out ??= messages.slice())[i] = m;
  });
  return { messages: out ?? messages, actions };
}

/** Every message whose result blocks must lead it (`lens.resultsFirst`) with them moved first; the same array when none had to move. */
function resultsLeading<M>(messages: readonly M[], lens: MessageLens<M>): { messages: readonly M[]; actions: RepairAction[] } {
  const actions: RepairAction[] = [];
  let out: M[] | undefined;
  messages.forEach((m, i) => {
    if (lens.read(m).results.length === 0) return;
    const moved = lens.resultsFirst!(m);
    if (moved === undefined) return;
    (out ??= messages.slice())[i] = moved;
    actions.push({ action: 'moved-result', index: i, detail: `tool results in messages[${i}] moved before the other content they followed (results must come first in their message)` });
  });
  return { messages: out ?? messages, actions };
}

/**
 * True when `results`, neither they nor the turn's calls carrying ids, answer every call of `turn`
 * by position: none answered yet (`open` holds them all), as many results as calls, and each
 * result names its call, in order, where it names one.
 */
function answersByPosition(turn: CallTurn, open: readonly number[], results: readonly ResultRef[]): boolean {
  return turn.calls.every((c) => c.id === undefined) && results.every((r) => r.id === undefined)
    && open.length === turn.calls.length && results.length === turn.calls.length
    && results.every((r, j) => r.name === undefined || r.name === turn.calls[j].name);
}

/** What `reattach` keeps while it works, shared with `joinAcrossUser`. */
interface ReattachState<M> {
  readonly take: (turn: number, call: number) => void;
  readonly replaced: Map<number, M>;
  readonly movedFrom: Set<number>;
  readonly actions: RepairAction[];
  readonly bystander: (i: number) => boolean;
}

/**
 * Formats whose results travel in a user turn (`lens.joinResults`): where a user message came
 * right after a call turn with no result of its own, and a later message holding only results
 * answers open calls of that turn (each by its id, each call once, across messages with no call
 * and no result; where neither calls nor results carry ids, as in Hermes, by position: exactly as
 * many results as the turn made calls, none answered yet, right after that user message), those
 * results go first into that user message, before the user's words; the message they came in is
 * dropped. Anything else is left for the other rules.
 */
function joinAcrossUser<M>(messages: readonly M[], lens: MessageLens<M>, structure: ReturnType<typeof scanStructure>, open: number[][], state: ReattachState<M>): void {
  const read = lens.read;
  for (const turn of structure.turns) {
    const host = turn.runEnd;
    if (host !== turn.openersEnd || host >= messages.length) continue;
    const h = read(messages[host]);
    if (h.kind !== 'user' || h.results.length > 0 || h.calls.length > 0) continue;
    let at = host + 1;
    while (at < messages.length && state.bystander(at) && !state.movedFrom.has(at)) at++;
    if (at >= messages.length || state.movedFrom.has(at)) continue;
    const r = read(messages[at]);
    if (r.results.length === 0 || r.calls.length > 0) continue;
    const ids = r.results.map((x) => x.id);
    // Formats that pair by position alone (Hermes: no ids on either side) pair a message holding
    // exactly as many results as the turn made calls, none answered yet, with them in order, when
    // it comes right after the user message.
    const byPosition = at === host + 1 && answersByPosition(turn, open[turn.ordinal], r.results);
    const calls = byPosition ? [...open[turn.ordinal]] : ids.map((id) => (id === undefined ? -1 : open[turn.ordinal].find((k) => turn.calls[k].id === id) ?? -1));
    if (calls.some((k) => k < 0) || new Set(calls).size !== calls.length) continue;
    const joined = lens.joinResults!(state.replaced.get(host) ?? messages[host], messages[at]);
    if (joined === undefined) continue;
    for (const k of calls) state.take(turn.ordinal, k);
    state.replaced.set(host, joined);
    state.movedFrom.add(at);
    const named = byPosition ? r.results.map((_, j) => `${j + 1} of ${r.results.length}`) : ids;
    state.actions.push({ action: 'moved-result', index: at, id: ids[0], detail: `tool result${ids.length > 1 ? 's' : ''} ${named.join(', ')} moved from messages[${at}] into messages[${host}], before the user's words, to answer ${ids.length > 1 ? 'their calls' : 'its call'} in messages[${turn.opener}]` });
  }
}

/**
 * Re-attaches real results that are misplaced or mis-keyed, where only one call can be meant:
 * - in a call's run, a result with no id, a numeric id, or the legacy `function` role naming one
 *   of the calls, when exactly one call the run leaves open fits: re-keyed to it;
 * - a result separated from its call only by messages with no call and no result (assistant
 *   text, system messages; user messages too where results are not user turns): moved back to the
 *   end of the call's results (on its id only); a message of several results moves whole when
 *   each answers a different open call of that turn on its id;
 * - a result placed right before its call: moved after it (on its id only);
 * - where neither calls nor results carry ids, the messages of only results right after the one
 *   user message that followed a call turn, holding as many results as its calls, none answered,
 *   names in order where named: moved back after the turn (by position, the only pairing such
 *   formats have).
 * Returns the history (the input itself when nothing moved), the input index of each position,
 * and what was done. Results that fit no call, or several, are left for the ordinary repair.
 */
function reattach<M>(messages: readonly M[], lens: MessageLens<M>): { messages: readonly M[]; origin: readonly number[]; actions: RepairAction[] } {
  const structure = scanStructure(messages, lens);
  const r = reattaching(messages, lens, structure);
  if (lens.joinResults) joinAcrossUser(messages, lens, structure, r.open, { take: r.take, replaced: r.replaced, movedFrom: r.movedFrom, actions: r.actions, bystander: (i) => r.bystander(i, true) });
  for (const p of structure.results) {
    if (r.movedFrom.has(p.index)) continue;
    const positional = p.slot === 0 && p.pairing === 'outside' ? r.answeredByPosition(p.index) : undefined;
    if (positional) movePositional(r, positional);
    else if (lens.read(messages[p.index]).results.length !== 1) moveWhole(r, p);
    else if (p.pairing === 'stray') rekeyStray(r, p);
    else if (p.pairing === 'outside') moveOutside(r, p);
  }
  if (r.actions.length === 0) return { messages, origin: messages.map((_, i) => i), actions: r.actions };
  const out: M[] = [];
  const origin: number[] = [];
  const emit = (i: number) => { out.push(r.replaced.get(i) ?? messages[i]); origin.push(i); };
  for (let i = 0; i <= messages.length; i++) {
    for (const j of r.insertBefore.get(i) ?? []) emit(j);
    if (i < messages.length && !r.movedFrom.has(i)) emit(i);
  }
  return { messages: out, origin, actions: r.actions };
}

/** Results answering a turn by position (no ids on either side), and the messages they stand in. */
interface PositionalRun {
  readonly turn: CallTurn;
  readonly run: readonly { readonly index: number; readonly results: readonly ResultRef[] }[];
}

/** What `reattach` keeps while it works, and the questions its moves ask of the history. */
interface Reattaching<M> {
  readonly messages: readonly M[];
  readonly lens: MessageLens<M>;
  readonly structure: CallStructure;
  /** Per turn, the calls it leaves open. */
  readonly open: number[][];
  readonly take: (turn: number, call: number) => void;
  readonly replaced: Map<number, M>;
  readonly movedFrom: Set<number>;
  /** Messages written before message `at` (the key), in order. */
  readonly insertBefore: Map<number, number[]>;
  readonly actions: RepairAction[];
  /**
   * What a result may be moved back across: messages with no call and no result (assistant text,
   * system messages), or one moved already; user messages too (`acrossUser`: a user who wrote
   * while the tools ran) except where a result is a user turn that may not meet another
   * (`resultsInUserTurn`: Anthropic, Hermes), which would put two user turns in a row.
   */
  readonly bystander: (i: number, acrossUser: boolean) => boolean;
  readonly between: (from: number, to: number, ok: (i: number) => boolean) => boolean;
  /** The last call turn whose run ends at or before message `index`, when only messages a result may cross lie between. */
  readonly turnBehind: (index: number) => CallTurn | undefined;
  /** Message `index` leaves its place and is written before message `at`. */
  readonly moveBefore: (at: number, index: number) => void;
  /**
   * Where neither calls nor results carry ids (Gemini without ids, Qwen-Agent without
   * `function_id`): the call turn that the messages of only results starting at `index` answer by
   * position, and those messages, when they come right after the one user message that followed
   * the turn's calls, hold as many results as the turn made calls (none answered yet; Qwen-Agent
   * writes one message per result), and each result names its call, in order, where it names one.
   */
  readonly answeredByPosition: (index: number) => PositionalRun | undefined;
}

function reattaching<M>(messages: readonly M[], lens: MessageLens<M>, structure: CallStructure): Reattaching<M> {
  const open = structure.turns.map((t) => t.calls.map((_, k) => k).filter((k) => t.answers[k] === undefined && !t.excused[k]));
  const movedFrom = new Set<number>();
  const insertBefore = new Map<number, number[]>();
  const read = lens.read;
  const acrossUser = !lens.resultsInUserTurn;
  const between = (from: number, to: number, ok: (i: number) => boolean) => {
    for (let i = from; i < to; i++) if (!ok(i)) return false;
    return true;
  };
  const bystander = (i: number, across: boolean) => {
    const r = read(messages[i]);
    return movedFrom.has(i) || (r.calls.length === 0 && r.results.length === 0 && (r.kind === 'assistant' || r.kind === 'system' || (across && r.kind === 'user')));
  };
  const byRunEnd = new Map<number, CallTurn>();
  for (const t of structure.turns) if (t.openersEnd === t.runEnd) byRunEnd.set(t.runEnd, t);
  return {
    messages, lens, structure, open, movedFrom, insertBefore, bystander, between,
    take: (t, k) => { open[t] = open[t].filter((c) => c !== k); },
    replaced: new Map(),
    actions: [],
    turnBehind(index) {
      let turn: CallTurn | undefined;
      for (let t = structure.turns.length - 1; t >= 0 && !turn; t--) if (structure.turns[t].runEnd <= index) turn = structure.turns[t];
      return turn && between(turn.runEnd, index, (i) => bystander(i, acrossUser)) ? turn : undefined;
    },
    moveBefore(at, index) {
      movedFrom.add(index);
      const list = insertBefore.get(at);
      if (list) list.push(index);
      else insertBefore.set(at, [index]);
    },
    answeredByPosition(index) {
      if (!acrossUser || index < 2) return undefined;
      const before = read(messages[index - 1]);
      if (movedFrom.has(index - 1) || before.kind !== 'user' || before.calls.length > 0 || before.results.length > 0) return undefined;
      const turn = byRunEnd.get(index - 1);
      if (!turn) return undefined;
      const run: { index: number; results: readonly ResultRef[] }[] = [];
      const results: ResultRef[] = [];
      for (let j = index; j < messages.length && results.length < turn.calls.length; j++) {
        const r = read(messages[j]);
        if (movedFrom.has(j) || r.calls.length > 0 || r.results.length === 0) break;
        run.push({ index: j, results: r.results });
        results.push(...r.results);
      }
      return answersByPosition(turn, open[turn.ordinal], results) ? { turn, run } : undefined;
    },
  };
}

const idText = (r: ResultRef) => r.id ?? r.idHint ?? r.name ?? '(no id)';

/** Results paired by position move back after their turn; a result without its key (a nameless function message) gets its call's. */
function movePositional<M>(r: Reattaching<M>, { turn, run }: PositionalRun): void {
  for (const k of [...r.open[turn.ordinal]]) r.take(turn.ordinal, k);
  let nth = 0;
  for (const { index: j, results: moved } of run) {
    moved.forEach((res, slot) => {
      if (res.keyless) r.replaced.set(j, r.lens.rekeyResult(r.replaced.get(j) ?? r.messages[j], slot, turn.calls[nth]));
      nth++;
    });
    r.moveBefore(turn.runEnd, j);
    r.actions.push({ action: 'moved-result', index: j, detail: `tool result${moved.length > 1 ? 's' : ''} ${moved.map(idText).join(', ')} moved from messages[${j}] to follow ${turn.calls.length > 1 ? 'their calls' : 'its call'} in messages[${turn.opener}] (by position: no ids)` });
  }
}

/**
 * A message of several results (Gemini: one content per call turn) is moved whole, back after its
 * call turn across messages with no call and no result, when each of its results answers a
 * different call that turn left open, on its id.
 */
function moveWhole<M>(r: Reattaching<M>, p: PlacedResult): void {
  const held = r.lens.read(r.messages[p.index]);
  if (p.slot !== 0 || p.pairing !== 'outside' || held.calls.length > 0) return;
  const turn = r.turnBehind(p.index);
  if (!turn) return;
  const ks = held.results.map((res) => (res.id === undefined ? -1 : onlyCallFor(res, turn.calls, r.open[turn.ordinal], false, r.lens.namesMustMatch)));
  if (ks.some((k) => k < 0) || new Set(ks).size !== ks.length) return;
  for (const k of ks) r.take(turn.ordinal, k);
  r.moveBefore(turn.runEnd, p.index);
  r.actions.push({ action: 'moved-result', index: p.index, id: held.results[0].id, detail: `tool results ${held.results.map(idText).join(', ')} moved from messages[${p.index}] to follow their calls in messages[${turn.opener}]` });
}

/** A result in a call's run answering none of its calls is re-keyed to the one open call it fits. */
function rekeyStray<M>(r: Reattaching<M>, p: PlacedResult): void {
  const turn = r.structure.turns[p.turn];
  const k = onlyCallFor(p.result, turn.calls, r.open[p.turn], true);
  if (k < 0) return;
  r.take(p.turn, k);
  r.replaced.set(p.index, r.lens.rekeyResult(r.messages[p.index], p.slot, turn.calls[k]));
  r.actions.push({ action: 'rekeyed-result', index: p.index, id: turn.calls[k].id, detail: `tool result ${idText(p.result)} answers call ${turn.calls[k].id ?? turn.calls[k].name} (${turn.calls[k].name}), the only open call it fits; re-keyed` });
}

/** A result outside every run moves to its call: after it across messages a result may cross, or from right before it (on its id only). */
function moveOutside<M>(r: Reattaching<M>, p: PlacedResult): void {
  const { messages, lens, structure } = r;
  let target: { turn: CallTurn; at: number } | undefined;
  let k = -1;
  const before = r.turnBehind(p.index);
  if (before) {
    k = onlyCallFor(p.result, before.calls, r.open[before.ordinal], false, lens.namesMustMatch);
    if (k >= 0) target = { turn: before, at: before.runEnd };
  }
  // Right before its call, with only other results in between.
  const after = structure.turns.find((t) => t.opener > p.index);
  if (!target && after && r.between(p.index + 1, after.opener, (i) => lens.read(messages[i]).results.length > 0 && lens.read(messages[i]).calls.length === 0)) {
    k = onlyCallFor(p.result, after.calls, r.open[after.ordinal], false, lens.namesMustMatch);
    if (k >= 0) target = { turn: after, at: after.openersEnd };
  }
  if (!target) return;
  const call = target.turn.calls[k];
  r.take(target.turn.ordinal, k);
  r.moveBefore(target.at, p.index);
  if (p.result.id !== call.id) r.replaced.set(p.index, lens.rekeyResult(messages[p.index], p.slot, call));
  r.actions.push({ action: 'moved-result', index: p.index, id: call.id, detail: `tool result ${idText(p.result)} moved from messages[${p.index}] to follow its call in messages[${target.turn.opener}]` });
}

/**
 * Fixes an incoming history so its tool-call structure is valid. First each message's own shape
 * (`repairShapes`): fixed where a fix loses nothing, refused with an `InputError` naming the field
 * where none does (calls on a role that cannot make them). Then real results are re-attached
 * where only one call can be meant (re-keyed or moved, see `reattach`); then a call still without
 * a result gets a synthetic error result (in the format's own shape) right after its run, and an
 * orphan or duplicate result is removed. Results sent back as `user` messages are not
 * guessed at, only reported. Action indexes refer to the input. Messages not touched are returned
 * as the same objects, in order; a history with nothing to fix is returned as the same array.
 * `inputIndex(k)` is the input message at position `k` of the result (for a message repair made,
 * the input message it follows).
 */
export function repairWithLens<M>(given: readonly M[], lens: MessageLens<M>): { messages: readonly M[]; actions: RepairAction[]; inputIndex: (k: number) => number } {
  let r = repairOnce(given, lens);
  // A round can leave what only the next one sees (a stray block removed from a user message
  // that then carries no result, so the results after it no longer follow their call): rounds
  // go on while they change something and the history is still irregular, up to a bound.
  for (let round = 1; round < MAX_ROUNDS && r.actions.length > 0 && !buildGroups(r.messages, lens).regular; round++) {
    const next = repairOnce(r.messages, lens);
    if (next.actions.length === 0) break;
    const back = (k: number) => inputIndex(r.origin, k);
    r = {
      messages: next.messages,
      origin: next.origin.map((k) => (k < 0 ? -1 : back(k))),
      actions: [...r.actions, ...next.actions.map((a) => ({ ...a, index: back(a.index) }))].sort((a, b) => a.index - b.index),
    };
  }
  const origin = r.origin;
  return { messages: r.messages, actions: r.actions, inputIndex: (k) => inputIndex(origin, k) };
}

/** Rounds of repair on one history at most: each fixes what the one before left; the bound keeps a history repair cannot settle from looping. */
const MAX_ROUNDS = 3;

/** The input index of position `k` (-1 for a message repair made: the nearest input message before it). */
function inputIndex(origin: readonly number[], k: number): number {
  for (let j = Math.min(k, origin.length - 1); j >= 0; j--) if (origin[j] >= 0) return origin[j];
  return 0;
}

/** One round of `repairWithLens`, with the input index of each output position (-1 for a message it made). */
function repairOnce<M>(given: readonly M[], lens: MessageLens<M>): { messages: readonly M[]; origin: readonly number[]; actions: RepairAction[] } {
  // In place first (nothing added or removed, so indexes stay the input's): each message's own
  // shape (fixed, or refused); results that must lead their message go before the user's words; a
  // call id used twice in a turn becomes two ids (results pair with its calls in order), so every
  // later pass and the provider tell them apart.
  const shaped = repairShapes(given, lens);
  const leading = lens.resultsFirst ? resultsLeading(shaped.messages, lens) : { messages: shaped.messages, actions: [] };
  const renamed = lens.repeatsCallIds ? leading : remapCallIds(leading.messages, lens, IDS_UNIQUE_PER_TURN);
  const inPlace = [...shaped.actions, ...leading.actions, ...(leading === renamed ? [] : renamed.actions)];
  const input = renamed.messages;
  const first = reattach(input, lens);
  const rest = completeAndPrune(first.messages, lens);
  const ordered = lens.resultsInCallOrder ? inCallOrder(rest.messages, lens) : { messages: rest.messages, actions: [] };
  const merged: { messages: readonly M[]; origin?: readonly number[]; actions: RepairAction[] } = lens.mergeResults ? mergeRuns(ordered.messages, lens) : { messages: ordered.messages, actions: [] };
  // Indexes of later passes are mapped back to the input where the earlier ones moved messages.
  const restActions = first.actions.length === 0 ? rest.actions : rest.actions.map((a) => ({ ...a, index: first.origin[a.index] ?? a.index }));
  const at = (list: readonly number[] | undefined, k: number) => (list === undefined || k < 0 ? k : list[k]);
  const origin = merged.messages.map((_, k) => at(first.origin, at(rest.origin, at(ordered.origin, at(merged.origin, k)))));
  if (inPlace.length === 0 && first.actions.length === 0 && ordered.actions.length === 0 && merged.actions.length === 0) return { messages: rest.messages, origin, actions: rest.actions };
  const actions = [...inPlace, ...first.actions, ...restActions, ...ordered.actions, ...merged.actions];
  return { messages: merged.messages, origin, actions: actions.sort((a, b) => a.index - b.index) };
}

/**
 * For formats that read a turn's results by position (`lens.resultsInCallOrder`): a run of
 * result messages, one result each and each answering a call of the turn, that is not in the
 * order of the calls is put in it (a result moved back, or kept while another was removed, can
 * land out of place). Action indexes refer to the history this pass was given.
 */
function inCallOrder<M>(messages: readonly M[], lens: MessageLens<M>): { messages: readonly M[]; origin?: readonly number[]; actions: RepairAction[] } {
  const structure = scanStructure(messages, lens);
  const actions: RepairAction[] = [];
  let origin: number[] | undefined;
  const runs: PlacedResult[][] = structure.turns.map(() => []);
  for (const p of structure.results) if (p.turn >= 0) runs[p.turn].push(p);
  for (const turn of structure.turns) {
    const start = turn.openersEnd;
    const run = runs[turn.ordinal];
    // Only a run of answers, one per message, is reordered; anything else is left as it is.
    const plain = run.length === turn.runEnd - start && run.every((p, j) => p.index === start + j && p.slot === 0 && p.pairing === 'answer');
    if (!plain || run.every((p, j) => j === 0 || run[j - 1].call < p.call)) continue;
    origin ??= messages.map((_, i) => i);
    const sorted = [...run].sort((a, b) => a.call - b.call);
    sorted.forEach((p, j) => { origin![start + j] = p.index; });
    actions.push({ action: 'moved-result', index: start, detail: `the results of the call turn at messages[${turn.opener}] (messages[${start}..${turn.runEnd - 1}]) were put in the order of its calls, which is how they are read` });
  }
  if (!origin) return { messages, actions };
  return { messages: origin.map((i) => messages[i]), origin, actions };
}

/**
 * For formats that want a turn's results in one message (`lens.mergeResults`): a run of several
 * result-only messages after one call turn becomes one message. Runs that carry user text are left
 * alone. Action indexes refer to the history this pass was given (already repaired).
 */
function mergeRuns<M>(messages: readonly M[], lens: MessageLens<M>): { messages: readonly M[]; origin?: readonly number[]; actions: RepairAction[] } {
  const structure = scanStructure(messages, lens);
  const actions: RepairAction[] = [];
  const merges = new Map<number, { end: number; message: M }>();
  for (const turn of structure.turns) {
    const start = turn.openersEnd;
    const end = turn.runEnd;
    if (end - start < 2) continue;
    let resultsOnly = true;
    for (let i = start; i < end; i++) if (lens.read(messages[i]).kind !== 'result') resultsOnly = false;
    if (!resultsOnly) continue;
    merges.set(start, { end, message: lens.mergeResults!(messages.slice(start, end)) });
    actions.push({ action: 'merged-results', index: start, detail: `the results of the call turn at messages[${turn.opener}] were split over messages[${start}..${end - 1}]; merged into one message` });
  }
  if (merges.size === 0) return { messages, actions };
  const out: M[] = [];
  const origin: number[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = merges.get(i);
    origin.push(i);
    if (m) {
      out.push(m.message);
      i = m.end - 1;
    } else out.push(messages[i]);
  }
  return { messages: out, origin, actions };
}

/**
 * Adds synthetic results for calls without one and removes orphan and duplicate results: one
 * result block at a time where a message carries several or also carries the user's text, the
 * whole message where nothing else would be left.
 */
function completeAndPrune<M>(messages: readonly M[], lens: MessageLens<M>): { messages: readonly M[]; origin?: readonly number[]; actions: RepairAction[] } {
  const structure = scanStructure(messages, lens);
  const edits: Edits<M> = { dropped: new Set(), replaced: new Map(), insertBefore: new Map(), insertAfter: new Map(), actions: [] };
  pruneResults(messages, lens, structure, edits);
  for (const unanswered of everyCallAnswered.find(structure)) completeCalls(messages, lens, structure, unanswered, edits);
  const { dropped, replaced, insertBefore, insertAfter, actions } = edits;
  // Nothing to fix: the input itself, not a copy (this runs on every request).
  if (dropped.size === 0 && replaced.size === 0 && insertAfter.size === 0 && insertBefore.size === 0) return { messages, actions };
  const out: M[] = [];
  const origin: number[] = [];
  const added = (list: readonly M[] | undefined) => {
    if (!list) return;
    out.push(...list);
    for (const _ of list) origin.push(-1);
  };
  messages.forEach((m, i) => {
    added(insertBefore.get(i));
    if (!dropped.has(i)) {
      out.push(replaced.get(i) ?? m);
      origin.push(i);
    }
    added(insertAfter.get(i));
  });
  return { messages: out, origin, actions: actions.sort((a, b) => a.index - b.index) };
}

/** What `completeAndPrune` changes, by input index: messages dropped, replaced, and made before or after one; and what it did. */
interface Edits<M> {
  readonly dropped: Set<number>;
  readonly replaced: Map<number, M>;
  readonly insertBefore: Map<number, M[]>;
  readonly insertAfter: Map<number, M[]>;
  readonly actions: RepairAction[];
}

/** The invariants' own repairs: an orphan or a repeated result goes (in scan order, one pass); a message left with nothing is dropped. */
function pruneResults<M>(messages: readonly M[], lens: MessageLens<M>, structure: CallStructure, edits: Edits<M>): void {
  const removeSlots = new Map<number, number[]>();
  const remove = (index: number, slot: number) => {
    const list = removeSlots.get(index) ?? [];
    list.push(slot);
    removeSlots.set(index, list);
  };
  const repeated = new Map(resultOnce.find(structure).map((f) => [f.result, f]));
  for (const p of structure.results) {
    if (isOrphan(p)) {
      remove(p.index, p.slot);
      edits.actions.push({ action: resultAnswersCall.repair.action, index: p.index, id: p.result.id, detail: resultAnswersCall.repair.detail(p, structure) });
    } else if (p.pairing === 'duplicate') {
      const f = repeated.get(p)!;
      remove(p.index, p.slot);
      edits.actions.push({ action: resultOnce.repair.action, index: p.index, id: f.call.id, detail: resultOnce.repair.detail(f, structure) });
    }
  }
  for (const [index, slots] of removeSlots) {
    let m: M | undefined = messages[index];
    // Highest slot first, so the slots still to remove keep their positions.
    for (const slot of slots.sort((a, b) => b - a)) {
      m = lens.removeResult(m, slot);
      if (m === undefined) break;
    }
    if (m === undefined) edits.dropped.add(index);
    else edits.replaced.set(index, m);
  }
}

/**
 * A synthetic error result for each call of a turn without one: where the format wants every
 * result of a turn in one message, joined to the run's last message (or the user message right
 * after the calls); otherwise in messages of their own after the run. A user message right after
 * unanswered calls is reported: it may carry the result.
 */
function completeCalls<M>(messages: readonly M[], lens: MessageLens<M>, structure: CallStructure, { turn, calls: missing }: UnansweredCalls, edits: Edits<M>): void {
  const { dropped, replaced, insertAfter, actions } = edits;
  for (const call of missing) {
    actions.push({ action: everyCallAnswered.repair.action, index: turn.opener, id: call.id, detail: everyCallAnswered.repair.detail(call, structure) });
  }
  const next = messages[turn.runEnd];
  const nextReading = next === undefined ? undefined : lens.read(next);
  let host = -1;
  for (let k = turn.runEnd - 1; k >= turn.openersEnd && host < 0; k--) if (!dropped.has(k)) host = k;
  if (host < 0 && turn.runEnd === turn.openersEnd && nextReading?.kind === 'user') host = turn.runEnd;
  const hostMessage = host >= 0 ? (replaced.get(host) ?? messages[host]) : undefined;
  const merged = hostMessage !== undefined && lens.addResults ? lens.addResults(hostMessage, missing, MISSING_RESULT_TEXT) : undefined;
  const after = host >= 0 && host < turn.runEnd ? host : turn.runEnd - 1;
  if (merged !== undefined) replaced.set(host, merged);
  else {
    const made = lens.missingResults(missing, MISSING_RESULT_TEXT);
    if (!lens.splitParallelCalls || made.length !== missing.length) insertAfter.set(after, [...(insertAfter.get(after) ?? []), ...made]);
    else placeByCall(turn, missing, made, after, edits);
  }
  if (nextReading?.kind === 'user' && nextReading.results.length === 0) {
    for (const call of missing) {
      actions.push({ action: 'reported', index: turn.runEnd, id: call.id, detail: `a user message follows unanswered call ${call.id ?? call.name}; if it carries the tool's result, send it as a tool result answering that call` });
    }
  }
}

/**
 * Formats that pair one result message per call by position (Qwen-Agent) get each error result
 * where its call's result belongs: before the first kept result of a later call, else after `after`.
 */
function placeByCall<M>(turn: CallTurn, missing: readonly CallRef[], made: readonly M[], after: number, edits: Edits<M>): void {
  missing.forEach((call, m) => {
    const k = turn.calls.indexOf(call);
    let before = -1;
    for (let c = k + 1; c < turn.calls.length && before < 0; c++) {
      const a = turn.answers[c];
      if (a !== undefined && !edits.dropped.has(a.index)) before = a.index;
    }
    const at = before >= 0 ? edits.insertBefore : edits.insertAfter;
    const key = before >= 0 ? before : after;
    at.set(key, [...(at.get(key) ?? []), made[m]]);
  });
}
