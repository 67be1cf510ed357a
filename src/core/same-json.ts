import { MAX_NESTING } from './nesting.js';

/**
 * Deep equality of two JSON values (what `JSON.parse` produces): same type, same array items in
 * order, same object keys with equal values. Equal strings compare by content, which is much
 * cheaper than hashing them, and no allocation is made.
 */
export function sameJson(a: unknown, b: unknown, depth = 0): boolean {
  if (a === b) return true;
  // Past the nesting ctxfold reads, two values count as different (the message is then checked, and refused).
  if (depth > MAX_NESTING) return false;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i], depth + 1)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let keys = 0;
  for (const k in x) {
    if (!Object.prototype.hasOwnProperty.call(x, k)) continue;
    keys++;
    const v = x[k];
    if (v === undefined ? y[k] !== undefined || !Object.prototype.hasOwnProperty.call(y, k) : !sameJson(v, y[k], depth + 1)) return false;
  }
  for (const k in y) if (Object.prototype.hasOwnProperty.call(y, k)) keys--;
  return keys === 0;
}
