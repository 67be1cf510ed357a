import type { MessageLens } from './lens.js';
import type { RepairAction } from './repair.js';
import { scanStructure } from './structure.js';

/**
 * What a provider asks of call ids: unique across the whole request (`true`: Anthropic, Responses,
 * and Mistral in practice) or within each call turn (`'turn'`: every format with ids, since a
 * result names its call by id), and/or matching a pattern (Mistral: 9 alphanumerics; Bedrock: 1-64
 * of `[a-zA-Z0-9_.:-]`). `mint` makes the n-th fresh id (n from 0) from the original; it must
 * match `pattern`; one already used in the request is skipped.
 */
export interface IdPolicy {
  readonly unique: boolean | 'turn';
  readonly pattern?: RegExp;
  readonly mint: (original: string, n: number) => string;
}

const ALPHANUMERIC = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** A 9-character alphanumeric id for the n-th minted id (Mistral's `^[a-zA-Z0-9]{9}$`), deterministic. */
export function alphanumericId(n: number, length = 9): string {
  // A fixed multiplier coprime to 62 spreads consecutive n over the id space: unique per n below 62^length - 1.
  let x = (BigInt(n) + 1n) * 0x9e3779b97f4a7c15n % (62n ** BigInt(length));
  let out = '';
  for (let k = 0; k < length; k++) {
    out = ALPHANUMERIC[Number(x % 62n)] + out;
    x /= 62n;
  }
  return out;
}

/**
 * Rewrites call ids to meet `policy`, the same way in a call and in every result that pairs with
 * it (as the structure scan pairs them, turn by turn, so a reused id in a later turn becomes a new
 * id there). An id that already meets the policy, and is the first use of it when `unique`, is
 * kept. Messages not touched are the caller's own objects; nothing is added or removed. Returns
 * the input array itself when no id had to change.
 */
export function remapCallIds<M>(messages: readonly M[], lens: MessageLens<M>, policy: IdPolicy): { messages: readonly M[]; actions: RepairAction[] } {
  const structure = scanStructure(messages, lens);
  const used = new Set<string>();
  for (const turn of structure.turns) for (const c of turn.calls) if (c.id !== undefined) used.add(c.id);
  const seen = new Set<string>();
  const replaced = new Map<number, M>();
  const actions: RepairAction[] = [];
  let minted = 0;
  const fresh = (original: string) => {
    for (;;) {
      const id = policy.mint(original, minted++);
      if (!used.has(id)) {
        used.add(id);
        return id;
      }
    }
  };
  const current = (i: number) => replaced.get(i) ?? messages[i];
  for (const turn of structure.turns) {
    if (policy.unique === 'turn') seen.clear();
    // Where each call of the turn sits: its opening message and its slot among that message's calls.
    const place: { index: number; slot: number }[] = [];
    for (let i = turn.opener; i < turn.openersEnd; i++) {
      const n = lens.read(messages[i]).calls.length;
      for (let s = 0; s < n; s++) place.push({ index: i, slot: s });
    }
    turn.calls.forEach((call, k) => {
      if (call.id === undefined) return;
      const fits = policy.pattern === undefined || policy.pattern.test(call.id);
      const repeated = policy.unique !== false && seen.has(call.id);
      seen.add(call.id);
      if (fits && !repeated) return;
      const id = fresh(call.id);
      const at = place[k];
      if (at === undefined) return;
      replaced.set(at.index, lens.rekeyCall(current(at.index), at.slot, id));
      const renamed = { ...call, id };
      for (const p of structure.results) {
        if (p.turn !== turn.ordinal || p.call !== k) continue;
        replaced.set(p.index, lens.rekeyResult(current(p.index), p.slot, renamed));
      }
      const why = !repeated ? "does not fit the provider's id pattern" : policy.unique === 'turn' ? 'is used by an earlier call of the same turn (results pair with them in order)' : 'is used again in this request';
      actions.push({ action: 'renamed-id', index: at.index, id, detail: `call id ${call.id} ${why}; it is ${id} in the call and its results` });
    });
  }
  if (replaced.size === 0) return { messages, actions };
  return { messages: messages.map((m, i) => replaced.get(i) ?? m), actions };
}

/** Call ids unique within each call turn, whatever the provider: a fresh one is the original with a number (`call_a_2`). */
export const IDS_UNIQUE_PER_TURN: IdPolicy = Object.freeze({ unique: 'turn' as const, mint: (original: string, n: number) => `${original}_${n + 2}` });
