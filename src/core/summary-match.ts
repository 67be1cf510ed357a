import { alignCut } from './boundary.js';
import type { Grouping } from './groups.js';
import type { ResolvedSummary } from './plan.js';

/** A stored summary as a caller hands it in: its text and the ids of the messages it covers, in order. */
export interface StoredSummary {
  readonly text: string;
  readonly coveredIds: readonly string[];
  /** The size the text is shortened to once its whole no longer fits (`ResolvedSummary.compactTokens`). */
  readonly compactTokens?: number;
}

/**
 * Where a summary's coverage ends: it applies only when the messages right after the head
 * (`start`) are exactly the ones it covers, in order (ids carry content fingerprints, so an edited
 * or regenerated message makes it stale), and the end is a group start. The note says why it does
 * not apply, or that its end snapped back.
 */
export function resolveSummary(
  length: number, idOf: (i: number) => string, grouping: Grouping, start: number, summary: StoredSummary,
): { resolved?: ResolvedSummary; note?: string } {
  const ids = summary.coveredIds;
  if (ids.length === 0 || summary.text.trim() === '') return { note: 'summary not applied: it is empty or covers no message' };
  if (start + ids.length > length) return { note: 'summary not applied: it covers more messages than the history has after the head' };
  for (let k = 0; k < ids.length; k++) {
    if (idOf(start + k) !== ids[k]) {
      return { note: `summary not applied: messages[${start + k}] is not the message it covers (edited, regenerated or a different head)` };
    }
  }
  const end = start + ids.length;
  const aligned = alignCut(grouping, end);
  if (aligned <= start) return { note: 'summary not applied: its coverage ends inside the first group after the head' };
  return { resolved: { text: summary.text, coveredEnd: aligned, ...(summary.compactTokens !== undefined ? { compactTokens: summary.compactTokens } : {}) }, note: aligned < end ? `summary coverage snapped back from ${end} to group start ${aligned}` : undefined };
}
