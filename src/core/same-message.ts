import { sameJson } from './same-json.js';

/**
 * How many leading messages two histories share: each pair the same object or equal in content,
 * as `sameJson` decides it for what `JSON.parse` makes. A re-parsed request body repeats every
 * earlier message as new objects, so a chat's next request is compared with its last one message
 * by message; walking each generic object (every key read by a name found at run time, each
 * object's own keys checked) was most of a warm call. Here the keys chat messages carry (`role`,
 * `content`, `tool_calls`, `tool_call_id`; a call's `id`, `type`, `function`, its `name` and
 * `arguments`) are read by name, and only the other keys go through `sameJson`.
 *
 * At the message, call and function level the keys compared are those `for...in` lists (own and
 * inherited enumerable): for plain objects the same as `sameJson`'s own keys, and for any other
 * object what a read by name sees, which is how ctxfold reads a message.
 *
 * Given `unread`, the messages it names are equal when all but their text is (see `TextUnread`):
 * the text a plan never read costs nothing to compare, however long the history.
 */
export function sharedMessages(a: readonly unknown[], b: readonly unknown[], unread?: TextUnread): number {
  const limit = Math.min(a.length, b.length);
  let n = 0;
  const exactTo = unread ? Math.min(limit, unread.from) : limit;
  while (n < exactTo && (a[n] === b[n] || sameMessage(a[n], b[n], false))) n++;
  if (!unread || n < exactTo) return n;
  const looseTo = Math.min(limit, unread.to);
  const pinned = unread.pinned;
  while (n < looseTo && (a[n] === b[n] || sameMessage(a[n], b[n], pinned[n] !== 1))) n++;
  if (n < looseTo) return n;
  while (n < limit && (a[n] === b[n] || sameMessage(a[n], b[n], false))) n++;
  return n;
}

/**
 * Messages of a remembered history whose text its plan never read: `[from, to)` except those
 * `pinned` (1). `sharedMessages` compares their string `content` and a call's string
 * `function.arguments` only as strings, empty or not (`sameMessage`'s `looseText`); all else
 * exactly. Whoever passes it must not reuse anything computed from that text (counts, ids).
 */
export interface TextUnread {
  readonly from: number;
  readonly to: number;
  readonly pinned: Uint8Array;
}

type Fields = Record<string, unknown>;

/**
 * Two messages equal (see `sharedMessages`); arrays and non-objects compare by `sameJson`. With
 * `looseText`, a string `content` (and a call's string `function.arguments`) equals any string
 * that is empty exactly when it is.
 */
function sameMessage(a: unknown, b: unknown, looseText: boolean): boolean {
  if (!fields(a) || !fields(b)) return sameJson(a, b);
  if (!sameValue(a.role, b.role, 1) || !sameText(a.content, b.content, 1, looseText) || !sameValue(a.tool_call_id, b.tool_call_id, 1)) return false;
  const calls = a.tool_calls;
  const other = b.tool_calls;
  if (calls !== other) {
    if (Array.isArray(calls) && Array.isArray(other)) {
      if (calls.length !== other.length) return false;
      for (let i = 0; i < calls.length; i++) if (!sameCall(calls[i], other[i], looseText)) return false;
    } else if (!sameJson(calls, other, 1)) return false;
  }
  return sameKeys(a, b, MESSAGE, 0);
}

/** One tool call, compared like a message (its `function` one level further). */
function sameCall(a: unknown, b: unknown, looseText: boolean): boolean {
  if (a === b) return true;
  if (!fields(a) || !fields(b)) return sameJson(a, b, 2);
  if (!sameValue(a.id, b.id, 3) || !sameValue(a.type, b.type, 3)) return false;
  const f = a.function;
  const g = b.function;
  if (f !== g) {
    if (fields(f) && fields(g)) {
      if (!sameValue(f.name, g.name, 4) || !sameText(f.arguments, g.arguments, 4, looseText) || !sameKeys(f, g, FUNCTION, 3)) return false;
    } else if (!sameJson(f, g, 3)) return false;
  }
  return sameKeys(a, b, CALL, 2);
}

/** `sameValue`, except that with `loose` two strings, empty or not alike, are the same (text unread). */
function sameText(x: unknown, y: unknown, depth: number, loose: boolean): boolean {
  if (loose && typeof x === 'string' && typeof y === 'string') return (x.length === 0) === (y.length === 0);
  return sameValue(x, y, depth);
}

/** An object that is not an array. */
function fields(v: unknown): v is Fields {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `sameJson` of two values at `depth`, after the cheap identity check (equal strings included). */
function sameValue(x: unknown, y: unknown, depth: number): boolean {
  return x === y || sameJson(x, y, depth);
}

/** Which keys a level has already compared by name. */
const MESSAGE = 0;
const CALL = 1;
const FUNCTION = 2;

/** True for a key the level (`MESSAGE`, `CALL`, `FUNCTION`) compares by name; keys from `for...in` are interned, so `===` is cheap. */
function comparedByName(level: number, k: string): boolean {
  if (level === MESSAGE) return k === 'role' || k === 'content' || k === 'tool_calls' || k === 'tool_call_id';
  if (level === CALL) return k === 'id' || k === 'type' || k === 'function';
  return k === 'name' || k === 'arguments';
}

/**
 * Given that the keys the level compares by name are equal where `a` defines them: true when `a`
 * and `b` list the same keys and the other values are equal (`sameJson` at `depth + 1`). A key
 * whose value is undefined must be present on both sides.
 */
function sameKeys(a: Fields, b: Fields, level: number, depth: number): boolean {
  let keys = 0;
  for (const k in a) {
    keys++;
    const v = a[k];
    if (v === undefined) {
      if (b[k] !== undefined || !(k in b)) return false;
    } else if (!comparedByName(level, k) && !sameJson(v, b[k], depth + 1)) return false;
  }
  for (const _ in b) keys--;
  return keys === 0;
}
