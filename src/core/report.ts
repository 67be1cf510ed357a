/**
 * How the planner records what it left out: one code per message while planning (typed arrays,
 * cheap on long histories), turned into named ranges for the report.
 */

/** Why a message is not sent as it was. */
export type DropReason = 'summarized' | 'budget';

/** The per-message codes the planner writes; `kept` is 0 so a fresh array means "all kept". */
export const DROP = { kept: 0, summarized: 1, budget: 2 } as const;

/** A run of consecutive messages [start, end) left out of the view for one reason. */
export interface DroppedRange {
  readonly start: number;
  readonly end: number;
  readonly reason: DropReason;
}

const REASON_OF: readonly (DropReason | undefined)[] = [undefined, 'summarized', 'budget'];

/** The runs of `codes[from, to)` that are not `kept`, as named ranges in order. */
export function droppedRanges(codes: Uint8Array, from = 0, to = codes.length): DroppedRange[] {
  const out: DroppedRange[] = [];
  let i = from;
  while (i < to) {
    const code = codes[i];
    if (code === DROP.kept) {
      i++;
      continue;
    }
    const start = i;
    while (i < to && codes[i] === code) i++;
    out.push({ start, end: i, reason: REASON_OF[code]! });
  }
  return out;
}

/** Messages left out, by reason. */
export function droppedCounts(ranges: readonly DroppedRange[]): Record<DropReason, number> {
  const counts = { summarized: 0, budget: 0 };
  for (const r of ranges) counts[r.reason] += r.end - r.start;
  return counts;
}
