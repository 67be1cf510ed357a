/**
 * Where a member's value sits in the text of a JSON object, so a call's arguments can be read
 * exactly as written (the text the provider bills and the model wrote), not as re-serialized.
 * Only called on text `JSON.parse` already accepted as an object; iterative, so any depth is safe.
 */

const isSpace = (c: string) => c === ' ' || c === '\t' || c === '\n' || c === '\r';

function skipSpace(s: string, i: number): number {
  while (i < s.length && isSpace(s[i])) i++;
  return i;
}

/** End (exclusive) of the string literal opening at `i`. */
function stringEnd(s: string, i: number): number {
  for (let k = i + 1; k < s.length; k++) {
    if (s[k] === '\\') k++;
    else if (s[k] === '"') return k + 1;
  }
  return s.length;
}

/** End (exclusive) of the JSON value starting at `i`. */
function valueEnd(s: string, i: number): number {
  const c = s[i];
  if (c === '"') return stringEnd(s, i);
  if (c === '{' || c === '[') {
    let depth = 0;
    for (let k = i; k < s.length; k++) {
      const d = s[k];
      if (d === '"') k = stringEnd(s, k) - 1;
      else if (d === '{' || d === '[') depth++;
      else if (d === '}' || d === ']') {
        depth--;
        if (depth === 0) return k + 1;
      }
    }
    return s.length;
  }
  let k = i;
  while (k < s.length && !isSpace(s[k]) && s[k] !== ',' && s[k] !== '}' && s[k] !== ']') k++;
  return k;
}

/**
 * The span [start, end) of the value of the top-level member `key` of the JSON object text `json`
 * (the last one when the key repeats, as `JSON.parse` reads it); undefined when there is none.
 */
export function memberSpan(json: string, key: string): { start: number; end: number } | undefined {
  let i = skipSpace(json, 0);
  if (json[i] !== '{') return undefined;
  i = skipSpace(json, i + 1);
  let found: { start: number; end: number } | undefined;
  while (i < json.length && json[i] === '"') {
    const keyEnd = stringEnd(json, i);
    const name = JSON.parse(json.slice(i, keyEnd)) as string;
    i = skipSpace(json, skipSpace(json, keyEnd) + 1); // past the ':'
    const end = valueEnd(json, i);
    if (name === key) found = { start: i, end };
    i = skipSpace(json, end);
    if (json[i] === ',') i = skipSpace(json, i + 1);
  }
  return found;
}
