/** Order statistics used by every figure of the benchmark. */

/** The q-quantile (0..1) of `values` by nearest rank; NaN for an empty list. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}

/** The median of `values`. */
export const median = (values: readonly number[]): number => quantile(values, 0.5);

/** `count` indexes spread evenly over [0, length), always including the last one. */
export function evenlySpaced(length: number, count: number): number[] {
  if (count >= length) return Array.from({ length }, (_, i) => i);
  const out: number[] = [];
  for (let k = 1; k <= count; k++) out.push(Math.round((k * length) / count) - 1);
  return [...new Set(out)];
}
