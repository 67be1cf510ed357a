import type { PlanDecisions } from './plan.js';

/** A view, message by message: a kept message by its history index, a made one by its JSON text; with the tokens of each. */
export interface ViewTrace {
  readonly keys: readonly (number | string)[];
  readonly tokens: readonly number[];
}

/**
 * What a view is made of, message by message: a kept message by its index in the history, a
 * message the plan made (summary, note, collapsed result) by its JSON text; and its tokens.
 */
export function viewTrace<M>(view: readonly M[], input: readonly M[], d: PlanDecisions, counts: ArrayLike<number>, count: (m: M) => number): ViewTrace {
  const keys: (number | string)[] = [];
  const tokens: number[] = [];
  const collapsed = new Set(d.collapsed.map((c) => c.index));
  let range = 0;
  let k = 0;
  const nextKept = () => {
    for (;;) {
      while (range < d.dropped.length && d.dropped[range].end <= k) range++;
      if (range < d.dropped.length && d.dropped[range].start <= k) k = d.dropped[range].end;
      else return k;
    }
  };
  for (const m of view) {
    const at = nextKept();
    if (at < input.length && m === input[at]) {
      keys.push(at);
      tokens.push(counts[at]);
      k = at + 1;
    } else {
      keys.push(JSON.stringify(m));
      tokens.push(count(m));
      if (at < input.length && collapsed.has(at)) k = at + 1;
    }
  }
  return { keys, tokens };
}

/** Tokens of the leading entries two view traces share; a kept message counts only inside the history prefix known to be unchanged. */
export function sharedPrefixTokens(previous: ViewTrace, current: ViewTrace, unchanged: number): number {
  let n = 0;
  const limit = Math.min(previous.keys.length, current.keys.length);
  for (let e = 0; e < limit; e++) {
    const key = current.keys[e];
    if (key !== previous.keys[e] || (typeof key === 'number' && key >= unchanged)) break;
    n += current.tokens[e];
  }
  return n;
}
