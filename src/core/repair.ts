import type { OpenAIChatMessage } from '../formats/openai-chat/lens.js';
import { openaiChatLens } from '../formats/openai-chat/lens.js';
import { pairTurn, scanCalls, type PlacedResult } from './turns.js';

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
 * Fixes an incoming OpenAI Chat history so its tool-call structure is valid: a call with no
 * result gets a synthetic error result right after its run, an orphan or duplicate result is
 * removed. Results sent back as `user` messages are not guessed at, only reported. Messages not
 * touched are returned as the same objects, in order; a history with nothing to fix is returned
 * as the same array.
 */
export function repairHistory(messages: readonly OpenAIChatMessage[]): { messages: readonly OpenAIChatMessage[]; actions: RepairAction[] } {
  const lens = openaiChatLens;
  const structure = scanCalls(messages, lens);
  const remove = new Set<number>();
  const insertAfter = new Map<number, OpenAIChatMessage[]>();
  const actions: RepairAction[] = [];
  const byTurn = new Map<number, PlacedResult[]>();
  for (const p of structure.results) {
    if (!p.turn) {
      remove.add(p.index);
      actions.push({ action: 'removed-orphan', index: p.index, id: p.result.id, detail: `tool result ${p.result.id ?? p.result.name ?? ''} answers no preceding call` });
      continue;
    }
    const list = byTurn.get(p.turn.opener);
    if (list) list.push(p);
    else byTurn.set(p.turn.opener, [p]);
  }
  for (const turn of structure.turns) {
    const { answers, strays } = pairTurn(turn, byTurn.get(turn.opener) ?? []);
    for (const p of strays) {
      remove.add(p.index);
      actions.push({ action: 'removed-orphan', index: p.index, id: p.result.id, detail: `tool result ${p.result.id ?? ''} answers no call of messages[${turn.opener}]` });
    }
    const added: OpenAIChatMessage[] = [];
    turn.calls.forEach((call, k) => {
      for (const dup of answers[k].slice(1)) {
        remove.add(dup.index);
        actions.push({ action: 'removed-duplicate', index: dup.index, id: call.id, detail: `second result for ${call.id ?? call.name}; the first one (messages[${answers[k][0].index}]) is kept` });
      }
      if (answers[k].length > 0) return;
      added.push(call.id !== undefined
        ? { role: 'tool', tool_call_id: call.id, content: MISSING_RESULT_TEXT }
        : { role: 'function', name: call.name, content: MISSING_RESULT_TEXT });
      actions.push({ action: 'added-result', index: turn.opener, id: call.id, detail: `call ${call.id ?? call.name} (${call.name}) had no result; a synthetic error result was added` });
      const next = messages[turn.runEnd];
      if (next && next.role === 'user') {
        actions.push({ action: 'reported', index: turn.runEnd, id: call.id, detail: `a user message follows unanswered call ${call.id ?? call.name}; if it carries the tool's result, send it as role 'tool' with tool_call_id` });
      }
    });
    if (added.length > 0) insertAfter.set(turn.runEnd - 1, added);
  }
  // Nothing to fix: the input itself, not a copy (this runs on every request).
  if (remove.size === 0 && insertAfter.size === 0) return { messages, actions };
  const out: OpenAIChatMessage[] = [];
  messages.forEach((m, i) => {
    if (!remove.has(i)) out.push(m);
    const extra = insertAfter.get(i);
    if (extra) out.push(...extra);
  });
  return { messages: out, actions: actions.sort((a, b) => a.index - b.index) };
}
