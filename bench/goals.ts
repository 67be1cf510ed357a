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

/**
 * "Faster than every peer's best configuration on every workload, cold and warm", judged on the
 * same requests: a replay times the peers on a subset of ctxfold's requests, so each peer row's
 * `ctxfoldRatio` (median over the requests both ran of ctxfold's time / the peer's) is compared
 * with 1, for the peer as shipped and with its memo (beating both is beating its best). The
 * medians over each system's own requests are printed beside it.
 */
export function peerGoal(rows: readonly SummaryRow[]): GoalCheck {
  const slower: string[] = [];
  let compared = 0;
  for (const r of rows) {
    if (r.system !== 'ctxfold' || r.requests === 0) continue;
    const peers = rows.filter((x) => x.workload === r.workload && x.mode === r.mode && !x.system.startsWith('ctxfold') && x.system !== 'JSON.parse' && x.system !== 'slice(-N)' && x.requests > 0 && typeof x.ctxfoldRatio === 'number');
    for (const p of peers) {
      compared++;
      if (p.ctxfoldRatio! >= 1) slower.push(`${p.system} ${r.workload}/${r.mode} (ctxfold/peer ${p.ctxfoldRatio!.toFixed(2)} on the same ${p.requests} requests; medians ${r.medianMs.toFixed(2)} vs ${p.medianMs.toFixed(2)} ms)`);
    }
  }
  return {
    goal: "ctxfold faster than every peer's best configuration on every workload, cold and warm (median of ctxfold/peer time on the same requests < 1)",
    measured: compared ? (slower.length ? `not faster than: ${slower.join(', ')}` : `faster in all ${compared} comparisons`) : 'not measured',
    holds: compared ? slower.length === 0 : undefined,
  };
}

/** The process's first call against a later one (`bench/first-call.ts`, a process of its own). */
export interface FirstCallFigure {
  /** What was timed, in words. */
  readonly call: string;
  readonly firstMs: number;
  /** Median of the later calls (each on another request, with fresh state). */
  readonly laterMs: number;
  readonly later: number;
}

/**
 * The small-conversation goals (`bench/small.ts`), per size and mode, from the ratio of ctxfold to
 * JSON.parse of the same body (median over the requests both ran): within the window (the
 * `under` and `at` rows) <= 2x, the byte bound deciding without the tokenizer where it can (each
 * line says on what share of the calls it did; on `at` rows a request's bytes pass its window, so
 * it cannot); over the window <= 10x cold and <= 1x warm. And the first call of a process no more
 * than 1.5x a later one.
 */
export function smallGoals(rows: readonly SummaryRow[], firstCalls: readonly FirstCallFigure[] = []): GoalCheck[] {
  const out: GoalCheck[] = [];
  const workloads = [...new Set(rows.filter((r) => r.workload.startsWith('small-')).map((r) => r.workload))];
  const limits: Record<string, { cold: number; replay: number; what: string }> = {
    under: { cold: 2, replay: 2, what: 'under its window' },
    at: { cold: 2, replay: 2, what: 'within its window (exactly at it)' },
    over: { cold: 10, replay: 1, what: 'over its window (window 25% of its tokens)' },
  };
  for (const windowCase of ['under', 'at', 'over']) {
    for (const mode of ['cold', 'replay'] as const) {
      const limit = limits[windowCase][mode];
      const measured: string[] = [];
      let holds: boolean | undefined;
      for (const w of workloads.filter((x) => x.endsWith(`/${windowCase}`))) {
        const c = row(rows, w, mode, 'ctxfold');
        const ratio = row(rows, w, mode, 'JSON.parse')?.ctxfoldRatio;
        if (!c || ratio === undefined) continue;
        const bytes = c.byteBoundPct === undefined ? '' : `, byte bound decided ${Math.round(c.byteBoundPct)}%`;
        measured.push(`${w.slice('small-'.length).split('/')[0]} msgs ${ratio.toFixed(2)}x (${c.medianMs.toFixed(3)} ms${bytes})`);
        holds = (holds ?? true) && ratio <= limit;
      }
      out.push({
        goal: `small conversations, a request ${limits[windowCase].what}, ${mode === 'cold' ? 'cold' : 'warm'}: ctxfold <= ${limit}x JSON.parse of the same body (median of per-request ratios)`,
        measured: measured.length ? measured.join('; ') : 'not measured',
        holds,
      });
    }
  }
  for (const f of firstCalls) {
    const ratio = f.firstMs / f.laterMs;
    out.push({
      goal: `the first call of a process no more than 1.5x a later one: ${f.call}`,
      measured: `first ${f.firstMs.toFixed(2)} ms, later median ${f.laterMs.toFixed(2)} ms (${f.later} calls), ratio ${ratio.toFixed(2)}`,
      holds: ratio <= 1.5,
    });
  }
  return out;
}

/** Evaluates every goal on this run's figures; `undefined` where the run did not measure it (quick mode). */
export function checkGoals(rows: readonly SummaryRow[], planning: readonly PlanningFigure[], counting: CountingFigure, summary: SummaryLoopFigure | undefined): GoalCheck[] {
  const out: GoalCheck[] = [];
  const gen = [...new Set(rows.filter((r) => r.workload.startsWith('gen-')).map((r) => r.workload))];
  const vsParse = (workload: string, mode: 'cold' | 'replay', limit: number) => {
    const c = row(rows, workload, mode, 'ctxfold');
    const p = row(rows, workload, mode, 'JSON.parse');
    out.push({
      goal: `${workload} ${mode === 'cold' ? 'cold request' : 'warm replay'}: ctxfold <= ${limit}x JSON.parse of the same body`,
      measured: c && p ? `${c.medianMs.toFixed(2)} ms vs ${p.medianMs.toFixed(2)} ms, ratio ${(c.medianMs / p.medianMs).toFixed(2)}` : 'not measured',
      holds: c && p ? c.medianMs <= limit * p.medianMs : undefined,
    });
  };
  for (const w of ['gen-10k', 'gen-100k'].filter((x) => gen.includes(x))) {
    vsParse(w, 'cold', 2);
    vsParse(w, 'replay', 0.3);
  }
  const c2 = row(rows, 'gen-2k', 'replay', 'ctxfold');
  const lcMemo = row(rows, 'gen-2k', 'replay', 'langchain trimMessages + memo');
  out.push({
    goal: 'at 2k messages: ctxfold at least 10x faster per request than trimMessages with a text-count memo',
    measured: c2 && lcMemo ? `${c2.medianMs.toFixed(2)} ms vs ${lcMemo.medianMs.toFixed(2)} ms: ${(lcMemo.medianMs / c2.medianMs).toFixed(1)}x` : 'not measured',
    holds: c2 && lcMemo ? lcMemo.medianMs / c2.medianMs >= 10 : undefined,
  });
  out.push(peerGoal(rows));
  const ctxRows
 = rows.filter((r) => r.system === 'ctxfold' && r.goodPct !== undefined);
  // Over the budget only because keepFirst + keepLast alone are over it counts apart (the issue's own column), not as good.
  const notGood = ctxRows.filter((r) => r.goodPct! + (r.protectedOverPct ?? 0) < 100 - 1e-9);
  const apart = ctxRows.filter((r) => (r.protectedOverPct ?? 0) > 0);
  out.push({
    goal: 'ctxfold: every view good (valid, with the last user message, within budget), or over it only because its protected head and tail alone are (reported apart)',
    measured: `${notGood.length ? `not good: ${notGood.map((r) => `${r.workload}/${r.mode} ${(100 - r.goodPct! - (r.protectedOverPct ?? 0)).toFixed(1)}%`).join(', ')}` : `none bad in ${ctxRows.length} rows`}; good ${ctxRows.map((r) => `${r.workload}/${r.mode} ${r.goodPct!.toFixed(1)}%`).filter((_, i) => ctxRows[i].goodPct! < 100).join(', ') || '100% everywhere'}${apart.length ? `; over only by the protected part: ${apart.map((r) => `${r.workload}/${r.mode} ${r.protectedOverPct!.toFixed(1)}%`).join(', ')}` : ''}`,
    holds: ctxRows.length > 0 && notGood.length === 0,
  });
  const small = planning.find((f) => f.messages === 1000);
  const large = [...planning].sort((a, b) => b.messages - a.messages)[0];
  const ratio = small && large && large !== small ? large.perMessageUs / small.perMessageUs : undefined;
  out.push({
    goal: 'planning time per message flat from 1k to the largest size (within 1.5x)',
    measured: ratio !== undefined ? `${small!.perMessageUs.toFixed(3)} -> ${large.perMessageUs.toFixed(3)} us/message (${large.messages / 1000}k), ratio ${ratio.toFixed(2)}` : 'not measured',
    holds: ratio !== undefined ? ratio <= 1.5 : undefined,
  });
  const validRows = rows.filter((r) => r.system.startsWith('ctxfold') && r.validPct !== undefined);
  const invalidPeers = rows.filter((r) => !r.system.startsWith('ctxfold') && r.validPct !== undefined && r.validPct < 100);
  out.push({
    goal: 'ctxfold: 0 invalid outputs in every workload (peers: their rate reported)',
    measured: `ctxfold valid ${Math.min(...validRows.map((r) => r.validPct!))}% at worst; peers below 100%: ${invalidPeers.map((r) => `${r.system} ${r.workload}/${r.mode} ${r.validPct!.toFixed(0)}%`).join(', ') || 'none'}`,
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
