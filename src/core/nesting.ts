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

/** One step into a JSON value: an array index or an object key. */
export type PathStep = number | string;

/**
 * The steps from `value` down to the first object or array that lies more than `limit` levels
 * deep (`limit` steps), or `undefined` when none does: `nestedDeeperThan` that also says where.
 * Never more than `limit + 1` frames deep, so safe on any input.
 */
export function pathDeeperThan(value: unknown, limit: number = MAX_NESTING): PathStep[] | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const steps: PathStep[] = [];
  return descend(value, 1, limit, steps) ? steps : undefined;
}

/** True when `node` (at `depth`) reaches past `limit`; `steps` then holds the way down, else is left as it was. */
function descend(node: object, depth: number, limit: number, steps: PathStep[]): boolean {
  if (depth > limit) return true;
  const keys: readonly PathStep[] = Array.isArray(node) ? node.map((_, k) => k) : Object.keys(node);
  for (const key of keys) {
    const child: unknown = (node as Record<PathStep, unknown>)[key];
    if (typeof child !== 'object' || child === null) continue;
    steps.push(key);
    if (descend(child, depth + 1, limit, steps)) return true;
    steps.pop();
  }
  return false;
}

/**
 * `steps` written after `base` as a field path (`messages[3].content[0].input`), at most `shown`
 * steps, then `...` for the rest: a path hundreds of steps long is named by where it starts.
 */
export function pathText(base: string, steps: readonly PathStep[], shown = 8): string {
  let text = base;
  for (const step of steps.slice(0, shown)) {
    if (typeof step === 'number') text += `[${step}]`;
    else text += /^[A-Za-z_$][\w$]*$/.test(step) ? (text === '' ? step : `.${step}`) : `[${JSON.stringify(step)}]`;
  }
  return steps.length > shown ? `${text}...` : text;
}
