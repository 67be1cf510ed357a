/**
 * How deep ctxfold reads JSON values. Messages are walked recursively (fingerprints, equality,
 * argument text); a value nested deeper than this is refused as bad input instead of overflowing
 * the stack. Real messages nest a few levels; tool arguments a few dozen at most.
 */
export const MAX_NESTING = 256;

/** True when `value` has objects or arrays nested more than `limit` levels deep. Iterative: safe on any depth. */
export function nestedDeeperThan(value: unknown, limit: number = MAX_NESTING): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (depth > limit) return true;
    const children = Array.isArray(v) ? v : Object.values(v as object);
    for (const child of children) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}
