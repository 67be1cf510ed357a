/**
 * How deep ctxfold reads JSON values. Messages are walked recursively (fingerprints, equality,
 * argument text); a value nested deeper than this is refused as bad input instead of overflowing
 * the stack. Real messages nest a few levels; tool arguments a few dozen at most.
 */
export const MAX_NESTING = 256;

/**
 * True when `value` has objects or arrays nested more than `limit` levels deep. Recursive, but
 * never deeper than `limit + 1` frames (it stops there), so safe on any input; allocates nothing.
 */
export function nestedDeeperThan(value: unknown, limit: number = MAX_NESTING): boolean {
  return typeof value === 'object' && value !== null && deeperThan(value, 1, limit);
}

/** True when `node` (an object or array at `depth`) reaches past `limit`. */
function deeperThan(node: object, depth: number, limit: number): boolean {
  if (depth > limit) return true;
  if (Array.isArray(node)) {
    for (let k = 0; k < node.length; k++) {
      const child: unknown = node[k];
      if (typeof child === 'object' && child !== null && deeperThan(child, depth + 1, limit)) return true;
    }
    return false;
  }
  for (const key of Object.keys(node)) {
    const child = (node as Record<string, unknown>)[key];
    if (typeof child === 'object' && child !== null && deeperThan(child, depth + 1, limit)) return true;
  }
  return false;
}
