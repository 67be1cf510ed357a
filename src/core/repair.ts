import type { MessageLens } from '../formats/lens.js';
import { scanStructure } from './structure.js';

/** One change `repairHistory` made, or a problem it saw and left alone. */
export interface RepairAction {
  readonly action: 'added-result' | 'removed-orphan' | 'removed-duplicate' | 'reported';
  /** Index in the input history. */
  readonly index: number;
  readonly id?: string;
  readonly detail: string;
}

/** Text of the result added for a call that never got one. */
export const MISSING_RESULT_TEXT = 'Error: this tool call produced no result (the result was missing from the history).';

/**
 * Fixes an incoming history so its tool-call structure is valid: a call with no result gets a
 * synthetic error result (in the format's own shape) right after its run, an orphan or duplicate
 * result is removed. Results sent back as `user` messages are not guessed at, only reported.
 * Messages not touched are returned as the same objects, in order; a history with nothing to fix
 * is returned as the same array.
 */
export function repairWithLens<M>(messages: readonly M[], lens: MessageLens<M>): { messages: readonly M[]; actions: RepairAction[] } {
  const structure = scanStructure(messages, lens);
  const remove = new Set<number>();
  const insertAfter = new Map<number, M[]>();
  const actions: RepairAction[] = [];
  for (const p of structure.results) {
    if (p.pairing === 'outside') {
      remove.add(p.index);
      actions.push({ action: 'removed-orphan', index: p.index, id: p.result.id, detail: `tool result ${p.result.id ?? p.result.name ?? ''} answers no preceding call` });
    } else if (p.pairing === 'stray') {
      remove.add(p.index);
      actions.push({ action: 'removed-orphan', index: p.index, id: p.result.id, detail: `tool result ${p.result.id ?? ''} answers no call of messages[${structure.turns[p.turn].opener}]` });
    } else if (p.pairing === 'duplicate') {
      const turn = structure.turns[p.turn];
      const call = turn.calls[p.call];
      remove.add(p.index);
      actions.push({ action: 'removed-duplicate', index: p.index, id: call.id, detail: `second result for ${call.id ?? call.name}; the first one (messages[${turn.answers[p.call]!.index}]) is kept` });
    }
  }
  for (const turn of structure.turns) {
    const added: M[] = [];
    turn.calls.forEach((call, k) => {
      if (turn.answers[k] !== undefined) return;
      added.push(lens.missingResult(call, MISSING_RESULT_TEXT));
      actions.push({ action: 'added-result', index: turn.opener, id: call.id, detail: `call ${call.id ?? call.name} (${call.name}) had no result; a synthetic error result was added` });
      const next = messages[turn.runEnd];
      if (next !== undefined && lens.kind(next) === 'user') {
        actions.push({ action: 'reported', index: turn.runEnd, id: call.id, detail: `a user message follows unanswered call ${call.id ?? call.name}; if it carries the tool's result, send it as a tool result answering that call` });
      }
    });
    if (added.length > 0) insertAfter.set(turn.runEnd - 1, added);
  }
  // Nothing to fix: the input itself, not a copy (this runs on every request).
  if (remove.size === 0 && insertAfter.size === 0) return { messages, actions };
  const out: M[] = [];
  messages.forEach((m, i) => {
    if (!remove.has(i)) out.push(m);
    const extra = insertAfter.get(i);
    if (extra) out.push(...extra);
  });
  return { messages: out, actions: actions.sort((a, b) => a.index - b.index) };
}
