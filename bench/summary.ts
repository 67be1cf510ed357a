/** Per-(workload, mode, system) figures from the request records, and the ratios ctxfold / peer. */
import type { RequestRecord } from './call.js';
import { median, quantile } from './stats.js';

/** One row of the results table. */
export interface SummaryRow {
  readonly workload: string;
  readonly mode: 'cold' | 'replay';
  readonly system: string;
  /** Requests timed to completion. */
  readonly requests: number;
  readonly timeouts: number;
  readonly errors: number;
  readonly medianMs: number;
  readonly p95Ms: number;
  /** Median over requests of time / messages in the request, in microseconds. */
  readonly usPerMessage: number;
  /** Largest heap growth and peak RSS growth over the measured calls (cold generated calls only). */
  readonly heapDeltaMB?: number;
  readonly rssPeakDeltaMB?: number;
  /** Median over requests of tokens sent / budget. */
  readonly sentToBudget?: number;
  /** Share of requests whose view is over the budget, in %. */
  readonly overBudgetPct?: number;
  /** Share of outputs with no `openaiProfile` violation, in %. */
  readonly validPct?: number;
  /**
   * Share of requests whose view is good (`isGood`): valid, still holding the last user message,
   * and within budget unless the request's floor alone is over it.
   */
  readonly goodPct?: number;
  /** Share of requests whose floor alone is over the budget (no view can be within it). */
  readonly floorOverPct?: number;
  /**
   * For a system that always sends a head and a tail (ctxfold's keepFirst / keepLast): share of
   * views over the budget only because that protected part alone is over it (valid, with the last
   * user message). Not counted as good; the issue's "reported as its own column".
   */
  readonly protectedOverPct?: number;
  /** Share of views that still carry the request's last user message / its system prompt, in %. */
  readonly askKeptPct?: number;
  readonly systemKeptPct?: number;
  /** Median over the requests both ran of ctxfold time / this system's time. */
  readonly ctxfoldRatio?: number;
  readonly loopDelayP99Ms?: number;
  /** ctxfold, small-conversation rows: share of requests planned without the tokenizer (the byte bound decided), in %. */
  readonly byteBoundPct?: number;
}

const pct = (part: number, whole: number) => (whole === 0 ? Number.NaN : (100 * part) / whole);

/** Share in % of the records where `flag` is true, among those where it is set; undefined when none set it. */
function share(records: readonly RequestRecord[], flag: (r: RequestRecord) => boolean | undefined): number | undefined {
  const set = records.filter((r) => flag(r) !== undefined);
  return set.length ? pct(set.filter((r) => flag(r)).length, set.length) : undefined;
}

/**
 * A good view: the provider accepts it, it still holds the request's last user message, and it is
 * within the budget, unless the request's floor alone is over the budget (then no view can be).
 */
export function isGood(r: RequestRecord): boolean {
  if (!r.valid || r.askKept === false || r.tokensSent === undefined) return false;
  return r.tokensSent <= r.budget || (r.floorTokens !== undefined && r.floorTokens > r.budget);
}

/** True when a view is valid, keeps the last user message, and is over the budget only because the system's protected part alone is (see `protectedFloor`). */
export function isProtectedOver(r: RequestRecord): boolean {
  return !isGood(r) && r.valid === true && r.askKept !== false && r.protectedTokens !== undefined && r.protectedTokens > r.budget;
}

/** Groups records and computes every figure; row order follows first appearance. */
export function summarize(records: readonly RequestRecord[]): SummaryRow[] {
  const groups = new Map<string, RequestRecord[]>();
  for (const r of records) {
    const key = `${r.workload}\u0000${r.mode}\u0000${r.system}`;
    const list = groups.get(key);
    if (list) list.push(r);
    else groups.set(key, [r]);
  }
  const ctxfoldMs = new Map<string, number>();
  for (const r of records) if (r.system === 'ctxfold' && r.ms !== undefined) ctxfoldMs.set(`${r.workload}\u0000${r.mode}\u0000${r.point}`, r.ms);
  const rows: SummaryRow[] = [];
  for (const list of groups.values()) {
    const first = list[0];
    const ok = list.filter((r) => r.ms !== undefined);
    const ms = ok.map((r) => r.ms!);
    const checked = ok.filter((r) => r.valid !== undefined);
    const withView = ok.filter((r) => r.tokensSent !== undefined);
    const ratios: number[] = [];
    if (first.system !== 'ctxfold') {
      for (const r of ok) {
        const c = ctxfoldMs.get(`${r.workload}\u0000${r.mode}\u0000${r.point}`);
        if (c !== undefined && r.ms! > 0) ratios.push(c / r.ms!);
      }
    }
    const heap = ok.filter((r) => r.heapDeltaMB !== undefined).map((r) => r.heapDeltaMB!);
    const rss = ok.filter((r) => r.rssPeakDeltaMB !== undefined).map((r) => r.rssPeakDeltaMB!);
    const loop = ok.filter((r) => r.loopDelayP99Ms !== undefined).map((r) => r.loopDelayP99Ms!);
    rows.push({
      workload: first.workload,
      mode: first.mode,
      system: first.system,
      requests: ok.length,
      timeouts: list.filter((r) => r.timeout).length,
      errors: list.filter((r) => r.error).length,
      medianMs: median(ms),
      p95Ms: quantile(ms, 0.95),
      usPerMessage: median(ok.map((r) => (r.ms! * 1000) / Math.max(1, r.messages))),
      heapDeltaMB: heap.length ? Math.max(...heap) : undefined,
      rssPeakDeltaMB: rss.length ? Math.max(...rss) : undefined,
      sentToBudget: withView.length ? median(withView.map((r) => r.tokensSent! / r.budget)) : undefined,
      overBudgetPct: withView.length ? pct(withView.filter((r) => r.tokensSent! > r.budget).length, withView.length) : undefined,
      validPct: checked.length ? pct(checked.filter((r) => r.valid).length, checked.length) : undefined,
      goodPct: withView.length ? pct(withView.filter(isGood).length, withView.length) : undefined,
      floorOverPct: withView.length ? pct(withView.filter((r) => r.floorTokens !== undefined && r.floorTokens > r.budget).length, withView.length) : undefined,
      protectedOverPct: withView.length && withView.every((r) => r.protectedTokens !== undefined) ? pct(withView.filter(isProtectedOver).length, withView.length) : undefined,
      askKeptPct: share(ok, (r) => r.askKept),
      systemKeptPct: share(ok, (r) => r.systemKept),
      ctxfoldRatio: ratios.length ? median(ratios) : undefined,
      loopDelayP99Ms: loop.length ? Math.max(...loop) : undefined,
      byteBoundPct: share(ok, (r) => (r.tokenizerUsed === undefined ? undefined : !r.tokenizerUsed)),
    });
  }
  return rows;
}

function fmt(v: number | undefined, digits: number): string {
  if (v === undefined || Number.isNaN(v)) return '-';
  if (Math.abs(v) >= 1000) return Math.round(v).toLocaleString('en-US');
  return v.toFixed(digits);
}

/** The rows as a fixed-width text table. */
export function formatTable(rows: readonly SummaryRow[]): string {
  const head = ['workload', 'mode', 'system', 'n', 'median ms', 'p95 ms', 'us/msg', 'heap MB', 'rss MB', 'sent/budget', 'over %', 'valid %', 'good %', 'floor>budget %', 'kept>budget %', 'ask %', 'sys %', 'ctxfold/x'];
  const body = rows.map((r) => [
    r.workload, r.mode, r.system,
    `${r.requests}${r.timeouts ? ` (+${r.timeouts} t/o)` : ''}${r.errors ? ` (+${r.errors} err)` : ''}`,
    fmt(r.medianMs, 2), fmt(r.p95Ms, 2), fmt(r.usPerMessage, 2),
    fmt(r.heapDeltaMB, 0), fmt(r.rssPeakDeltaMB, 0),
    fmt(r.sentToBudget, 2), fmt(r.overBudgetPct, 0), fmt(r.validPct, 0), fmt(r.goodPct, 0), fmt(r.floorOverPct, 0), fmt(r.protectedOverPct, 0), fmt(r.askKeptPct, 0), fmt(r.systemKeptPct, 0), fmt(r.ctxfoldRatio, 3),
  ]);
  const widths = head.map((h, c) => Math.max(h.length, ...body.map((row) => row[c].length)));
  const line = (cells: string[]) => cells.map((cell, c) => (c < 3 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}
