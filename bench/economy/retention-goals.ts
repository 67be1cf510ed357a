/**
 * The economy's goals, checked against one table's rows: the one-shot fold's retention at each F
 * (mean and worst tenth), the background path within 5 points of it, and with recall on every
 * folded view announcing recall and at least 99% of facts reachable. A missed goal says by how
 * much, and why: the values-only ceiling (no view within the budget carries more, values alone)
 * and what the facts it missed would cost in their cheapest attributed form, against the room
 * above the floor.
 */
import type { RetentionRow } from './retention.js';

/** One-shot goals by F: [mean, worst tenth]. */
export const RETENTION_GOALS: ReadonlyMap<number, readonly [number, number]> = new Map([
  [0.1, [0.75, 0.5]],
  [0.25, [0.9, 0.75]],
  [0.5, [0.97, 0.9]],
]);

/** Most points the background path may keep fewer than the one-shot. */
export const BACKGROUND_GAP = 0.05;
/** Least share of facts reachable with recall on. */
export const REACHABLE_GOAL = 0.99;

const ONE_SHOT = 'ctxfold';
const BACKGROUND = 'ctxfold, background (createCompressor)';
const RECALL_BACKGROUND = 'ctxfold + recall, background';

const pct = (x: number) => (Number.isNaN(x) ? '-' : `${(100 * x).toFixed(1)}%`);
const pts = (x: number) => `${(100 * x).toFixed(1)} pts`;

/** The goal lines of one table (markdown list items), one per F and goal. */
export function goalLines(rows: readonly RetentionRow[]): string[] {
  const lines: string[] = [];
  for (const [share, [meanGoal, worstGoal]] of RETENTION_GOALS) {
    const one = rows.find((r) => r.share === share && r.system === ONE_SHOT);
    if (!one) continue;
    const mean = one.meanKeptGood;
    const worst = one.worstTenthGood;
    const met = mean >= meanGoal && worst >= worstGoal;
    let line = `- F = ${share}, one-shot: mean ${pct(mean)} (goal ${pct(meanGoal)}), worst tenth ${pct(worst)} (goal ${pct(worstGoal)}): ${met ? 'met' : `missed by ${[mean < meanGoal ? `${pts(meanGoal - mean)} (mean)` : '', worst < worstGoal ? `${pts(worstGoal - worst)} (worst tenth)` : ''].filter(Boolean).join(' and ')}`}`;
    if (!met) {
      const ceiling = one.ceiling < meanGoal ? `the values-only ceiling is ${pct(one.ceiling)}, under the goal: no view within these budgets carries that many facts, values alone` : `values alone would carry ${pct(one.ceiling)}`;
      line += `; why: ${ceiling}; the facts the view missed would cost a median ${Number.isNaN(one.missedCostMedian) ? '-' : Math.round(one.missedCostMedian).toLocaleString('en-US')} tokens in their cheapest attributed form (one line per message, \`[message n] value; value\`), ${pct(one.missedCostShareMedian)} of the room above the floor`;
    }
    lines.push(`${line}.`);
    const bg = rows.find((r) => r.share === share && r.system === BACKGROUND);
    if (bg) {
      const gap = mean - bg.meanKeptGood;
      lines.push(`- F = ${share}, background: ${pct(bg.meanKeptGood)} against the one-shot's ${pct(mean)} (goal: within ${pts(BACKGROUND_GAP)}): ${gap <= BACKGROUND_GAP ? 'met' : `missed by ${pts(gap - BACKGROUND_GAP)}`}; it sends a median ${Number.isNaN(bg.medianSent) ? '-' : bg.medianSent.toFixed(2)} of the budget (one-shot ${Number.isNaN(one.medianSent) ? '-' : one.medianSent.toFixed(2)}).`);
    }
    const recall = rows.find((r) => r.share === share && r.system === RECALL_BACKGROUND);
    if (recall) {
      const announcedOk = Number.isNaN(recall.recallAnnounced) || recall.recallAnnounced >= 1;
      const reachOk = recall.meanReachable >= REACHABLE_GOAL;
      lines.push(`- F = ${share}, recall (background): announced in ${pct(recall.recallAnnounced)} of folded views (goal 100%), reachable ${pct(recall.meanReachable)} (goal ${pct(REACHABLE_GOAL)}): ${announcedOk && reachOk ? 'met' : 'missed'}.`);
    }
  }
  return lines;
}
