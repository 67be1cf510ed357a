/**
 * How a value is named in an input error ("must be a string, got the string \"x\"" / "got
 * nothing (the field is missing)"): short, and never the whole value.
 */
export function describe(value: unknown): string {
  if (value === undefined) return 'nothing (the field is missing)';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value)}`;
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}
