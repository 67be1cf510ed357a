/**
 * Finds, in the bytes of a JSON object, where the items of one of its top-level arrays end,
 * without decoding or parsing anything. It does not validate: it reads well-formed JSON right and
 * gives up (undefined) on anything it does not expect; what it finds is only trusted once
 * `JSON.parse` has accepted the same bytes.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** Where a top-level array lies in a body, and where each of its items ends. */
export interface ListLayout {
  /** Offset of the array's `[`. */
  readonly open: number;
  /** For each item, the offset just past its last byte. */
  readonly ends: number[];
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function skipSpace(b: Uint8Array, i: number): number {
  while (i < b.length && isSpace(b[i]!)) i++;
  return i;
}

/** Offset just past the string whose opening quote is at `i`; -1 when it does not end. */
function skipString(b: Buffer, i: number): number {
  let at = i + 1;
  for (;;) {
    const q = b.indexOf(QUOTE, at);
    if (q < 0) return -1;
    let slashes = 0;
    for (let j = q - 1; j > i && b[j] === BACKSLASH; j--) slashes++;
    if (slashes % 2 === 0) return q + 1;
    at = q + 1;
  }
}

/** Offset just past the value starting at `i` (after spaces); -1 when it cannot be read. */
function skipValue(b: Buffer, i: number): number {
  i = skipSpace(b, i);
  if (i >= b.length) return -1;
  const c = b[i]!;
  if (c === QUOTE) return skipString(b, i);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    let depth = 0;
    for (let j = i; j < b.length; j++) {
      const d = b[j]!;
      if (d === QUOTE) {
        const end = skipString(b, j);
        if (end < 0) return -1;
        j = end - 1;
      } else if (d === OPEN_BRACE || d === OPEN_BRACKET) depth++;
      else if (d === CLOSE_BRACE || d === CLOSE_BRACKET) {
        if (--depth === 0) return j + 1;
      }
    }
    return -1;
  }
  // A number or a literal: up to the next separator.
  let j = i;
  while (j < b.length) {
    const d = b[j]!;
    if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || isSpace(d)) break;
    j++;
  }
  return j > i ? j : -1;
}

/**
 * Reads the items of the array whose `[` or last read item ends just before `from`, to the
 * array's `]`: appends each item's end to `ends` and returns the offset just past the `]`; -1
 * when the bytes are not an array's items.
 */
function readItems(b: Buffer, from: number, ends: number[], first: boolean): number {
  let i = skipSpace(b, from);
  if (first && b[i] === CLOSE_BRACKET) return i + 1;
  if (!first) {
    if (b[i] === CLOSE_BRACKET) return i + 1;
    if (b[i] !== COMMA) return -1;
    i++;
  }
  for (;;) {
    const end = skipValue(b, i);
    if (end < 0) return -1;
    ends.push(end);
    i = skipSpace(b, end);
    if (b[i] === CLOSE_BRACKET) return i + 1;
    if (b[i] !== COMMA) return -1;
    i++;
  }
}

/** True when the key (quotes included) at [start, end) is exactly `name`'s bytes, with no escape. */
function keyIs(b: Buffer, start: number, end: number, name: Uint8Array): boolean {
  if (end - start - 2 !== name.length) return false;
  for (let k = 0; k < name.length; k++) if (b[start + 1 + k] !== name[k]) return false;
  return true;
}

/** True when the key at [start, end) holds an escape (it might spell any name once decoded). */
function keyEscaped(b: Buffer, start: number, end: number): boolean {
  const at = b.indexOf(BACKSLASH, start);
  return at >= 0 && at < end;
}

/**
 * The members after offset `from` (just past a member's value) to the object's `}`: true when
 * none of them is named `name` (or might be, through an escape) and the object ends there.
 */
function restHasNot(b: Buffer, from: number, name: Uint8Array): boolean {
  let i = skipSpace(b, from);
  for (;;) {
    if (b[i] === CLOSE_BRACE) return skipSpace(b, i + 1) === b.length;
    if (b[i] !== COMMA) return false;
    i = skipSpace(b, i + 1);
    if (b[i] !== QUOTE) return false;
    const keyEnd = skipString(b, i);
    if (keyEnd < 0 || keyEscaped(b, i, keyEnd) || keyIs(b, i, keyEnd, name)) return false;
    i = skipSpace(b, keyEnd);
    if (b[i] !== COLON) return false;
    const valueEnd = skipValue(b, i + 1);
    if (valueEnd < 0) return false;
    i = skipSpace(b, valueEnd);
  }
}

/**
 * The layout of the top-level member `name` of the JSON object in `b`, when it is an array and
 * the only member so named (no key before or after it is `name`, or an escaped key that could
 * be); undefined otherwise, or when the bytes cannot be read as JSON.
 */
export function scanList(b: Buffer, name: Uint8Array): ListLayout | undefined {
  let i = skipSpace(b, 0);
  if (b[i] !== OPEN_BRACE) return undefined;
  i = skipSpace(b, i + 1);
  for (;;) {
    if (b[i] !== QUOTE) return undefined;
    const keyEnd = skipString(b, i);
    if (keyEnd < 0 || keyEscaped(b, i, keyEnd)) return undefined;
    const found = keyIs(b, i, keyEnd, name);
    i = skipSpace(b, keyEnd);
    if (b[i] !== COLON) return undefined;
    i = skipSpace(b, i + 1);
    if (found) {
      if (b[i] !== OPEN_BRACKET) return undefined;
      const open = i;
      const ends: number[] = [];
      const close = readItems(b, open + 1, ends, true);
      if (close < 0 || !restHasNot(b, close, name)) return undefined;
      return { open, ends };
    }
    const valueEnd = skipValue(b, i);
    if (valueEnd < 0) return undefined;
    i = skipSpace(b, valueEnd);
    if (b[i] !== COMMA) return undefined;
    i = skipSpace(b, i + 1);
  }
}

/**
 * The layout of `b` given that its bytes before `shared.ends[kept - 1]` are those of the body
 * `shared` was scanned from: the first `kept` items are taken as they were, the rest is read.
 * Undefined when the rest cannot be read as that array's items and the object's last members.
 */
export function scanListAfter(b: Buffer, name: Uint8Array, shared: ListLayout, kept: number): ListLayout | undefined {
  const ends = shared.ends.slice(0, kept);
  const close = readItems(b, ends[kept - 1]!, ends, false);
  if (close < 0 || !restHasNot(b, close, name)) return undefined;
  return { open: shared.open, ends };
}
