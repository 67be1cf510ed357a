/**
 * Malformed histories: a valid history with its structure broken in a random place (a field
 * replaced by a value of another kind or deleted, anywhere in a message; a message replaced or
 * one inserted; text with a lone surrogate; a value nested past what ctxfold reads; rarely, no
 * list at all). ctxfold must refuse these with an `InputError` naming the field, or compress them
 * into a valid view; anything else (a `TypeError`, a stack overflow) is a bug.
 */

/** A random number in [0, 1). */
export type Rng = () => number;

/** A random whole number in [0, n). */
export const below = (rng: Rng, n: number): number => Math.floor(rng() * n);

/** One of `items`, at random. */
export const pick = <T>(rng: Rng, items: readonly T[]): T => items[below(rng, items.length)];

/** `value` wrapped in `levels` arrays. */
function nested(levels: number): unknown {
  let v: unknown = 'deep';
  for (let k = 0; k < levels; k++) v = k % 2 === 0 ? [v] : { a: v };
  return v;
}

/** A value of the wrong kind for almost any field. */
function junk(rng: Rng): unknown {
  switch (below(rng, 16)) {
    case 0: return null;
    case 1: return undefined;
    case 2: return 0;
    case 3: return -1;
    case 4: return 1e308;
    case 5: return '';
    case 6: return 'unexpected text';
    case 7: return '\ud800 lone surrogate';
    case 8: return true;
    case 9: return {};
    case 10: return [];
    case 11: return [null];
    case 12: return { role: 'user' };
    case 13: return nested(260 + below(rng, 100));
    case 14: return 'x'.repeat(1000 + below(rng, 20_000));
    default: return Number.NaN;
  }
}

/** What was done to the history, for the failure line. */
export interface Garbled {
  readonly messages: unknown;
  readonly what: string;
}

type Container = Record<string, unknown> | unknown[];
const isContainer = (v: unknown): v is Container => typeof v === 'object' && v !== null;

/** A container inside `root` (maybe `root` itself) and the path to it, reached by a random walk. */
function walk(rng: Rng, root: Container): { at: Container; path: string } {
  let at = root;
  let path = '';
  while (rng() < 0.55) {
    const keys = Object.keys(at).filter((k) => isContainer((at as Record<string, unknown>)[k]));
    if (keys.length === 0) break;
    const key = pick(rng, keys);
    path += Array.isArray(at) ? `[${key}]` : `.${key}`;
    at = (at as Record<string, unknown>)[key] as Container;
  }
  return { at, path };
}

/** `history` (never changed: a broken copy is made) with one structural fault. */
export function garble(rng: Rng, history: readonly unknown[]): Garbled {
  const messages = structuredClone(history) as unknown[];
  if (rng() < 0.01) return { messages: pick(rng, [null, {}, 'messages', 7]), what: 'not a list' };
  if (messages.length === 0 || rng() < 0.15) {
    const at = below(rng, messages.length + 1);
    const value = junk(rng);
    messages.splice(at, 0, value);
    return { messages, what: `inserted ${describe(value)} at [${at}]` };
  }
  const i = below(rng, messages.length);
  if (rng() < 0.15) {
    const value = junk(rng);
    messages[i] = value;
    return { messages, what: `[${i}] replaced by ${describe(value)}` };
  }
  const m = messages[i];
  if (!isContainer(m)) return { messages, what: 'unchanged' };
  const { at, path } = walk(rng, m);
  const keys = Object.keys(at);
  if (keys.length === 0) {
    (at as Record<string, unknown>).extra = junk(rng);
    return { messages, what: `[${i}]${path}.extra added` };
  }
  const key = pick(rng, keys);
  const where = `[${i}]${path}${Array.isArray(at) ? `[${key}]` : `.${key}`}`;
  if (rng() < 0.25) {
    if (Array.isArray(at)) at.splice(Number(key), 1);
    else delete at[key];
    return { messages, what: `${where} deleted` };
  }
  const value = junk(rng);
  (at as Record<string, unknown>)[key] = value;
  return { messages, what: `${where} set to ${describe(value)}` };
}

/** A short description of a junk value. */
function describe(value: unknown): string {
  if (typeof value === 'string') return value.length > 40 ? `a string of ${value.length} characters` : JSON.stringify(value);
  if (Array.isArray(value) || (typeof value === 'object' && value !== null)) {
    let depth = 0;
    for (let v: unknown = value; isContainer(v); v = Array.isArray(v) ? v[0] : Object.values(v)[0]) depth++;
    return depth > 3 ? `a value nested ${depth} levels` : JSON.stringify(value);
  }
  return String(value);
}
