/**
 * Runs a workload: (a) one cold call per history and system, (b) a replay of the history the way
 * a chat server sees it, each request carrying the whole history so far as a fresh JSON body.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createHistoryCache, createTokenCounter, type HistoryCache, type OpenAIChatMessage, type TokenCounter } from '../src/index.js';
import { openaiChatLens } from '../src/core/index.js';
import { prefixBudgets } from './budget.js';
import { requestOrder } from './run-order.js';
import { timedCall, type CallHooks, type RequestRecord } from './call.js';
import { canMeasureMemory, type MemoryProbe } from './memory.js';
import { showPastMessages, settleCompressors, type BenchSystem } from './systems.js';
import { median } from './stats.js';
import type { Workload } from './workloads.js';

/** Settings shared by every workload run. */
export interface RunSettings {
  readonly systems: readonly BenchSystem[];
  readonly deadlineSeconds: number;
  /**
   * Cold calls per system on each generated history (each with fresh state: counter, history
   * cache, memo), their median reported: one call is one sample of a noisy machine. The corpus's
   * conversations are cold-called once each (they are many).
   */
  readonly coldRepeats: number;
  readonly probe?: MemoryProbe;
  readonly log: (line: string) => void;
}

/** What a cold call of ctxfold leaves behind: its warm counter and the parsed history, for the planning benchmark. */
export interface ColdState {
  readonly messages: OpenAIChatMessage[];
  readonly counter: TokenCounter;
  readonly historyCache: HistoryCache;
  readonly chatId: string;
  readonly budget: number;
}

const MODEL = 'gpt-4o';
const bodyOf = (messages: readonly OpenAIChatMessage[]) => JSON.stringify({ model: MODEL, messages });

function memoryHooks(probe: MemoryProbe): CallHooks {
  return {
    before: () => probe.start(),
    after: (r) => {
      const m = probe.read();
      r.heapDeltaMB = m.heapDeltaMB;
      r.rssPeakDeltaMB = m.rssPeakDeltaMB;
    },
  };
}

/** Memory probe plus an event-loop delay monitor (10 ms resolution, enabled 100 ms before the call). */
function loopHooks(probe: MemoryProbe | undefined): CallHooks {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  const mem = probe ? memoryHooks(probe) : undefined;
  return {
    before: async () => {
      histogram.enable();
      await sleep(100);
      await mem?.before?.();
    },
    after: async (r) => {
      await mem?.after?.(r);
      await sleep(30);
      histogram.disable();
      r.loopDelayP99Ms = histogram.percentile(99) / 1e6;
      r.loopDelayMaxMs = histogram.max / 1e6;
    },
  };
}

function describe(r: RequestRecord): string {
  if (r.timeout) return 'timeout';
  if (r.error) return `error: ${r.error}`;
  return `${r.ms!.toFixed(r.ms! < 10 ? 2 : 0)} ms${r.valid === false ? ' INVALID' : ''}`;
}

/**
 * Cold calls: every system on each whole history, ctxfold with a fresh counter; each generated
 * history `coldRepeats` times, every repetition with fresh state and its own order of systems.
 * Returns the records (a repetition's point carries `#k`, so each is compared with the same
 * repetition of the others), the peers that timed out (not called again, and skipped in the
 * replay), and ctxfold's warm state for the last history.
 */
export async function runCold(w: Workload, s: RunSettings): Promise<{ records: RequestRecord[]; timedOut: Set<string>; state?: ColdState }> {
  const records: RequestRecord[] = [];
  const timedOut = new Set<string>();
  let state: ColdState | undefined;
  const generated = w.kind === 'generated';
  const repeats = generated ? Math.max(1, s.coldRepeats) : 1;
  for (let h = 0; h < w.histories.length; h++) {
    const history = w.histories[h];
    const reference = createTokenCounter();
    const budget = prefixBudgets(history, reference)(history.length);
    const body = bodyOf(history);
    const bySystem = new Map<string, RequestRecord[]>();
    for (let rep = 0; rep < repeats; rep++) {
      for (const system of requestOrder(s.systems, h * repeats + rep, COLD_SEED)) {
        if (system.replayOnly || timedOut.has(system.name)) continue;
        const counter = createTokenCounter();
        const historyCache = createHistoryCache();
        const chatId = `${w.name}:${h}`;
        const point = rep === 0 ? `${h}:${history.length}` : `${h}:${history.length}#${rep}`;
        const record: RequestRecord = { workload: w.name, mode: 'cold', system: system.name, point, messages: history.length, budget };
        const hooks = generated ? (system.name === 'ctxfold' ? loopHooks(s.probe) : s.probe && canMeasureMemory ? memoryHooks(s.probe) : undefined) : undefined;
        const { input } = await timedCall(system, { record, body, counter, historyCache, chatId, reference, deadlineSeconds: s.deadlineSeconds, hooks });
        records.push(record);
        bySystem.set(system.name, [...(bySystem.get(system.name) ?? []), record]);
        if (record.timeout) timedOut.add(system.name);
        if (system.name === 'ctxfold') state = { messages: input as OpenAIChatMessage[], counter, historyCache, chatId, budget };
      }
    }
    if (generated) {
      for (const system of s.systems) {
        const mine = bySystem.get(system.name);
        if (mine) s.log(`  ${w.name} cold  ${system.name.padEnd(30)} ${describeCold(mine)}`);
      }
    }
    if (!generated && (h + 1) % 50 === 0) s.log(`  ${w.name} cold  ${h + 1}/${w.histories.length} conversations`);
  }
  return { records, timedOut, state };
}

/** Seed of the cold calls' orders (the replay's requests use the default one). */
const COLD_SEED = 0xc01d;

/** One system's cold calls on one history: the median and each call, with memory and event-loop figures when measured. */
function describeCold(records: readonly RequestRecord[]): string {
  const timed = records.filter((r) => r.ms !== undefined).map((r) => r.ms!);
  const head = timed.length > 1 ? `median ${median(timed).toFixed(2)} ms of ${timed.length} (${timed.map((t) => t.toFixed(t < 10 ? 2 : 0)).join(', ')})` : describe(records[0]);
  const last = records[records.length - 1];
  const issues = records.filter((r) => r.ms === undefined || r.valid === false).map(describe);
  const memory = last.heapDeltaMB !== undefined ? `, heap ${last.heapDeltaMB >= 0 ? '+' : ''}${last.heapDeltaMB.toFixed(0)} MB, peak rss +${last.rssPeakDeltaMB!.toFixed(0)} MB` : '';
  const loop = last.loopDelayP99Ms !== undefined ? `, event-loop delay p99 ${last.loopDelayP99Ms.toFixed(0)} ms` : '';
  return `${head}${timed.length > 1 && issues.length ? `; ${issues.join(', ')}` : ''}${memory}${loop}`;
}

/**
 * Replay: for each sampled request, the body of the history so far, parsed fresh per system.
 * ctxfold uses one counter and one history cache (a chat per history) for the whole workload,
 * as one server process would; before a sampled request its counter is shown the
 * request right before it (counted, untimed) when that one was not sampled, as a server would
 * have seen it. Peers listed in `skip` are not run.
 */
export async function runReplay(w: Workload, s: RunSettings, skip: ReadonlySet<string>): Promise<RequestRecord[]> {
  const records: RequestRecord[] = [];
  const counter = createTokenCounter();
  const historyCache = createHistoryCache();
  const reference = createTokenCounter();
  const disabled = new Set(skip);
  const total = w.points.reduce((a, p) => a + p.length, 0);
  let done = 0;
  let nextLog = 0;
  for (let h = 0; h < w.histories.length; h++) {
    const history = w.histories[h];
    const budgets = prefixBudgets(history, reference);
    const ends: number[] = [];
    for (let i = 0; i < history.length; i++) if (history[i].role === 'assistant') ends.push(i);
    let warmed = 0;
    for (const end of w.points[h]) {
      const previous = ends[ends.indexOf(end) - 1] ?? 0;
      for (let i = warmed; i < previous; i++) counter.message(history[i], openaiChatLens);
      if (previous > warmed) showPastMessages(counter, history.slice(warmed, previous));
      warmed = Math.max(warmed, end);
      const body = bodyOf(history.slice(0, end));
      const budget = budgets(end);
      const peers = w.peerPoints[h].has(end);
      const line: string[] = [];
      for (const system of requestOrder(s.systems, done)) {
        if (disabled.has(system.name)) continue;
        if (!peers && !system.name.startsWith('ctxfold') && !system.floor) continue;
        const record: RequestRecord = { workload: w.name, mode: 'replay', system: system.name, point: `${h}:${end}`, messages: end, budget };
        await timedCall(system, { record, body, counter, historyCache, chatId: `${w.name}:${h}`, reference, deadlineSeconds: s.deadlineSeconds });
        records.push(record);
        if (record.timeout) {
          disabled.add(system.name);
          s.log(`  ${w.name} replay ${system.name} exceeded ${s.deadlineSeconds} s at ${end} messages: not run on the rest of this workload`);
        }
        line.push(`${system.name} ${describe(record)}`);
      }
      done++;
      if (done >= nextLog || done === total) {
        s.log(`  ${w.name} replay ${String(done).padStart(String(total).length)}/${total}  history ${end} msgs, budget ${budget}: ${line.join(' | ')}`);
        nextLog = done + Math.max(1, Math.floor(total / 8));
      }
    }
  }
  await settleCompressors(counter);
  return records;
}
