import type { Rule, RuleInput, Violation } from '../../core/validate/rules.js';
import { everyCallAnswered, resultAnswersCall, resultOnce } from '../../core/invariants/index.js';
import type { CallTurn } from '../../core/structure.js';
import { typeOf } from './items.js';
import type { ResponsesItem } from './types.js';

/**
 * The OpenAI Responses API's rules for an `input` list, each a rule unit worded like the API's
 * own 400 errors (collected in the provider notes) where one is known. Violations name the item
 * as `input[i]`, the list the API reads.
 */

const at = (i: number) => `input[${i}]`;

/** Index of the item holding each call of a turn (each call item of a Responses turn opens one call). */
function callItems<M>(input: RuleInput<M>, turn: CallTurn): number[] {
  const out: number[] = [];
  for (let i = turn.opener; i < turn.openersEnd; i++) {
    const n = input.lens.read(input.messages[i]).calls.length;
    for (let s = 0; s < n; s++) out.push(i);
  }
  return out;
}

/** I1: every call is answered by an output in the run of outputs after its turn: "No tool output found for function call X." */
export const outputForEveryCall: Rule<ResponsesItem> = everyCallAnswered.rule(({ turn, missing }, input) => {
  const where = callItems(input, turn);
  return missing.map((k) => {
    const call = turn.calls[k];
    return { index: where[k] ?? turn.opener, id: call.id, message: `${at(where[k] ?? turn.opener)}: No tool output found for function call ${call.id ?? '(no call_id)'}.` };
  });
});

/** I2: every output answers a call of the turn right before it: "No tool call found for function call output with call_id X." */
export const callForEveryOutput: Rule<ResponsesItem> = resultAnswersCall.rule((p) => ({
  index: p.index,
  id: p.result.id,
  message: `${at(p.index)}: No tool call found for function call output with call_id ${p.result.id ?? p.result.idHint ?? '(no call_id)'}.`,
}));

/** I4: one output per call. The API's wording for this is not on record; the text says what to fix. */
export const oneOutputPerCall: Rule<ResponsesItem> = resultOnce.rule(({ result: p, call, first }) => ({
  index: p.index,
  id: call.id,
  message: `${at(p.index)}: a second output for call_id ${call.id ?? '(no call_id)'}, already answered by ${at(first)}; each call takes exactly one output item.`,
}));

/**
 * I4: call ids are unique across the whole request, not only within a turn: the API pairs every
 * output with its call by `call_id` over the whole input, so a `call_id` used by two calls is ambiguous.
 */
export const callIdsUniqueInRequest: Rule<ResponsesItem> = {
  id: 'call-id-duplicate',
  check(input) {
    const out: Violation[] = [];
    const first = new Map<string, number>();
    for (const turn of input.structure.turns) {
      const where = callItems(input, turn);
      turn.calls.forEach((call, k) => {
        if (call.id === undefined) return;
        const index = where[k] ?? turn.opener;
        const earlier = first.get(call.id);
        if (earlier === undefined) {
          first.set(call.id, index);
          return;
        }
        out.push({
          index,
          rule: 'call-id-duplicate',
          id: call.id,
          message: `${at(index)}: call_id ${call.id} is already used by the call in ${at(earlier)}; the Responses API pairs outputs with calls by call_id across the whole input, so every call needs a call_id of its own.`,
        });
      });
    }
    return out;
  },
};

/** I4: every item id appears once: "Duplicate item found with id X. Remove duplicate items from your input and try again." */
export const itemIdsUnique: Rule<ResponsesItem> = {
  id: 'item-id-duplicate',
  check({ messages, lens }) {
    const out: Violation[] = [];
    const seen = new Set<string>();
    messages.forEach((m, index) => {
      const id = lens.read(m).ownId;
      if (id === undefined) return;
      if (seen.has(id)) out.push({ index, rule: 'item-id-duplicate', id, message: `${at(index)}: Duplicate item found with id ${id}. Remove duplicate items from your input and try again.` });
      seen.add(id);
    });
    return out;
  },
};

/**
 * I6: a reasoning item is followed by the item it was produced with (a model item: a message, a
 * call, another reasoning item): "Item 'rs_...' of type 'reasoning' was provided without its
 * required following item." An item of a type this version does not know, or an item reference,
 * may be that item and is not flagged; nothing at all, a user, system or developer message, or an
 * output is. The converse ("Item 'fc_...' of type 'function_call' was provided
 * without its required 'reasoning' item") cannot be checked from the input alone: nothing in an
 * item names the reasoning item it needs, and a model that does not reason sends calls with item
 * ids and no reasoning (a chat may switch models). Views never cause it: a reasoning item is kept
 * or dropped with the rest of its model turn (`responsesJoins`).
 */
export const reasoningFollowed: Rule<ResponsesItem> = {
  id: 'reasoning-unfollowed',
  check({ messages, lens }) {
    const out: Violation[] = [];
    messages.forEach((m, index) => {
      if (typeOf(m) !== 'reasoning') return;
      const next = index + 1 < messages.length ? lens.read(messages[index + 1]) : undefined;
      if (next !== undefined && (next.kind === 'assistant' || next.kind === 'other')) return;
      const id = typeof m.id === 'string' ? m.id : undefined;
      out.push({ index, rule: 'reasoning-unfollowed', id, message: `${at(index)}: Item '${id ?? ''}' of type 'reasoning' was provided without its required following item.` });
    });
    return out;
  },
};
