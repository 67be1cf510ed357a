import type { Reading } from '../lens.js';
import { inModelTurn } from './model-turn.js';
import { typeOf } from './items.js';
import type { ResponsesItem } from './types.js';

/** True when the MCP approval response `next` answers the approval request `item`. */
function answersApproval(item: ResponsesItem, next: ResponsesItem): boolean {
  return typeOf(next) === 'mcp_approval_response' && typeof item.id === 'string' && next.approval_request_id === item.id;
}

/**
 * The cut points a Responses input must not have (`joins[i] = 1`: none between items i-1 and i;
 * undefined when there are none). A reasoning item is joined to the item right after it ("Item
 * 'rs_...' of type 'reasoning' was provided without its required following item") and to every
 * item after that in its model turn (see `inModelTurn`): the messages and calls produced with it
 * need it ("Item 'fc_...' of type 'function_call' was provided without its required 'reasoning'
 * item"), also when a preamble message, an in-place call or more reasoning stands between. The
 * turn's outputs are not joined; pairing keeps them with their calls. An MCP approval response is
 * joined to the request right before it.
 */
export function responsesJoins(messages: readonly ResponsesItem[], read: (message: ResponsesItem) => Reading): Uint8Array | undefined {
  let joins: Uint8Array | undefined;
  let reasoned = false; // a reasoning item stands earlier in the current model turn
  // Each item is read once: whether it is in a model turn is carried to the next step.
  let inTurn = messages.length > 0 && inModelTurn(read(messages[0]));
  for (let i = 0; i + 1 < messages.length; i++) {
    const item = messages[i];
    const type = typeOf(item);
    if (type === 'reasoning') reasoned = true;
    else if (!inTurn) reasoned = false;
    const next = messages[i + 1];
    inTurn = inModelTurn(read(next));
    if (type === 'reasoning' || (reasoned && inTurn) || (type === 'mcp_approval_request' && answersApproval(item, next))) {
      joins ??= new Uint8Array(messages.length);
      joins[i + 1] = 1;
    }
  }
  return joins;
}
