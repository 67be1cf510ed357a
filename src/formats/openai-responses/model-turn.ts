import type { Reading } from '../lens.js';

/**
 * True for an item that may belong to a model turn: the items one model response is split over
 * (an assistant message, a reasoning item, a call, an in-place call: kind `assistant`) and items
 * this version cannot read (kind `other`: an item reference may stand for any of them). A user,
 * system or developer message, an output, a compaction item or an approval answer ends the turn.
 */
export function inModelTurn(r: Reading): boolean {
  return r.kind === 'assistant' || r.kind === 'other';
}
