/**
 * The project's speed and safety goals, checked against the figures of one run. Nothing here is
 * a hard-coded result: each line is computed from the rows and figures the run measured.
 */
import type { CountingFigure } from './counting.js';
import type { PlanningFigure } from './planning.js';
import type { SummaryLoopFigure } from './summary-loop.js';
import type { SummaryRow } from './summary.js';

/** One goal: what it asks, what was measured, and whether it holds. */
export interface GoalCheck {
  readonly goal: string;
  readonly measured: string;
  readonly holds: boolean | undefined;
}

const row = (rows: readonly SummaryRow[], workload: string, mode: string, system: string) =>
  rows.find((r) => r.workload === workload && r.mode === mode && r.system === system);

/** Evaluates every goal on this run's figures; `undefined` where the run did not measure it (quick mode). */
export function checkGoals(rows: readonly SummaryRow[], planning: readonly PlanningFigure[], counting: CountingFigure, summary: SummaryLoopFigure | undefined): GoalCheck[] {
  const out: GoalCheck[] = [];
  const gen = [...new Set(rows.filter((r) => r.workload.startsWith('gen-')).map((r) => r.workload))];
  const replayAt = gen.includes('gen-10k') ? 'gen-10k' : gen[gen.length - 1];
  const c = row(rows, replayAt, 'replay', 'ctxfold');
  const p = row(rows, replayAt, 'replay', 'JSON.parse');
  out.push({
    goal: `${replayAt} warm replay: ctxfold time per request <= JSON.parse of the same body`,
    measured: c && p ? `${c.medianMs.toFixed(2)} ms vs ${p.medianMs.toFixed(2)} ms, ratio ${(c.medianMs / p.medianMs).toFixed(2)}` : 'not measured',
    holds: c && p ? c.medianMs <= p.medianMs : undefined,
  });
  const small = planning.find((f) => f.messages === 1000);
  const large = [...planning].sort((a, b) => b.messages - a.messages)[0];
  const ratio = small && large && large !== small ? large.perMessageUs / small.perMessageUs : undefined;
  out.push({
    goal: 'planning time per message flat from 1k to the largest size (within 1.5x)',
    measured: ratio !== undefined ? `${small!.perMessageUs.toFixed(3)} -> ${large.perMessageUs.toFixed(3)} us/message (${large.messages / 1000}k), ratio ${ratio.toFixed(2)}` : 'not measured',
    holds: ratio !== undefined ? ratio <= 1.5 : undefined,
  });
  const c2 = row(rows, 'gen-2k', 'replay', 'ctxfold');
  const lc = row(rows, 'gen-2k', 'replay', 'langchain trimMessages');
  const peers = rows.filter((r) => r.workload === 'gen-2k' && r.mode === 'replay' && !r.system.startsWith('ctxfold') && r.validPct !== undefined);
  out.push({
    goal: 'at 2k messages: ctxfold at least 50x faster per request than trimMessages',
    measured: c2 && lc ? `${c2.medianMs.toFixed(2)} ms vs ${lc.medianMs.toFixed(2)} ms: ${(lc.medianMs / c2.medianMs).toFixed(0)}x` : 'not measured',
    holds: c2 && lc ? lc.medianMs / c2.medianMs >= 50 : undefined,
  });
  const validRows = rows.filter((r) => r.system.startsWith('ctxfold') && r.validPct !== undefined);
  const invalidPeers = rows.filter((r) => !r.system.startsWith('ctxfold') && r.validPct !== undefined && r.validPct < 100);
  out.push({
    goal: 'ctxfold: 0 invalid outputs in every workload (peers: their rate reported)',
    measured: `ctxfold valid ${Math.min(...validRows.map((r) => r.validPct!))}% at worst; peers below 100%: ${invalidPeers.map((r) => `${r.system} ${r.workload}/${r.mode} ${r.validPct!.toFixed(0)}%`).join(', ') || 'none'}${peers.length ? '' : ''}`,
    holds: validRows.length > 0 && validRows.every((r) => r.validPct === 100),
  });
  out.push({
    goal: 'event-loop p99 delay < 20 ms while a background summary of the largest history runs',
    measured: summary ? `${summary.messages} messages: p99 ${summary.loopDelayP99Ms.toFixed(1)} ms, max ${summary.loopDelayMaxMs.toFixed(1)} ms over a ${(summary.jobMs / 1000).toFixed(1)} s job (${summary.summarizerCalls} summarizer calls)` : 'not measured',
    holds: summary ? summary.loopDelayP99Ms < 20 : undefined,
  });
  out.push({
    goal: 'cold token counting >= 80% of raw tiktoken encode throughput',
    measured: `${counting.ctxfoldMBps.toFixed(2)} vs ${counting.rawMBps.toFixed(2)} MB/s, ratio ${counting.ratio.toFixed(2)}`,
    holds: counting.ratio >= 0.8,
  });
  return out;
}

/** One line per goal for the console. */
export function formatGoals(goals: readonly GoalCheck[]): string {
  return goals.map((g) => `  [${g.holds === undefined ? ' -- ' : g.holds ? 'PASS' : 'MISS'}] ${g.goal}\n         ${g.measured}`).join('\n');
}
