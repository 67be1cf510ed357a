import { blocksOf, IN_PLACE_CALL_TYPES, isInPlaceResultType } from './blocks.js';
import type { AnthropicMessage } from './types.js';

/**
 * Where each server tool call (`server_tool_use`, `mcp_tool_use`) is answered. The provider runs
 * these itself and puts the `*_tool_result` block right after the call in the same assistant
 * message. Two documented cases leave a call without its result in that message: a turn paused
 * (`stop_reason: "pause_turn"`) and a turn that also calls a client tool, where the API runs the
 * server tool only when the client's `tool_result` comes back, so the result arrives in a later
 * assistant message. The scan pairs by `tool_use_id`, each result with the latest call before it.
 */

/** A server tool call where it stands, and the message answering it (-1 when none does). */
export interface ServerCallPlace {
  readonly index: number;
  /** Position of the call block in the message's content. */
  readonly block: number;
  readonly id: string;
  readonly name: string;
  readonly type: string;
  answeredAt: number;
}

/** A server tool result where it stands, and the message holding its call (-1 when none). */
export interface ServerResultPlace {
  readonly index: number;
  readonly block: number;
  readonly id: string;
  readonly type: string;
  readonly callAt: number;
}

/** Every server tool call and result of a history, paired. Linear in the blocks. */
export function scanServerTools(messages: readonly AnthropicMessage[]): { calls: ServerCallPlace[]; results: ServerResultPlace[] } {
  const calls: ServerCallPlace[] = [];
  const results: ServerResultPlace[] = [];
  const open = new Map<string, ServerCallPlace>();
  messages.forEach((m, index) => {
    if (m?.role !== 'assistant') return;
    blocksOf(m).forEach((b, block) => {
      if (IN_PLACE_CALL_TYPES.includes(b.type)) {
        const id = typeof b.id === 'string' ? b.id : '';
        const place: ServerCallPlace = { index, block, id, name: typeof b.name === 'string' ? b.name : '', type: b.type, answeredAt: -1 };
        calls.push(place);
        open.set(id, place);
      } else if (isInPlaceResultType(b.type)) {
        const id = typeof b.tool_use_id === 'string' ? b.tool_use_id : '';
        const call = open.get(id);
        if (call) {
          call.answeredAt = index;
          open.delete(id);
        }
        results.push({ index, block, id, type: b.type, callAt: call ? call.index : -1 });
      }
    });
  });
  return { calls, results };
}

/**
 * Marks in `joins` every message between a server tool call and a result that answers it in a
 * later message (a turn continued after a client tool): a cut there would leave the result
 * without its call. `joins[i] = 1` joins messages[i] to messages[i-1]. Linear.
 */
export function serverToolJoins(messages: readonly AnthropicMessage[], joins: Uint8Array): boolean {
  const n = messages.length;
  const reach = new Int32Array(n).fill(n);
  let any = false;
  for (const r of scanServerTools(messages).results) {
    if (r.callAt >= 0 && r.callAt < r.index) {
      reach[r.index] = Math.min(reach[r.index], r.callAt);
      any = true;
    }
  }
  if (!any) return false;
  // joins[i] = 1 when some result at j >= i reaches back to a call before i.
  let low = n;
  for (let i = n - 1; i > 0; i--) {
    low = Math.min(low, reach[i]);
    if (low < i) joins[i] = 1;
  }
  return true;
}
