/**
 * Small conversations, the size real chats have: 20, 50, 100 and 300 messages of the shared
 * corpus (real gpt-4o airline conversations; where one is shorter than the size, the next ones
 * follow it in the same chat, their system prompts left out), each request cut before an
 * assistant message. Every request runs three ways against its window:
 *
 * - **under**: a 128,000-token window (gpt-4o's), above every request here;
 * - **at**: a window of exactly the request's tokens (reference counter): it just fits;
 * - **over**: a window of 25% of the request's tokens (at least 1.25 x its floor), so it is cut.
 *
 * cold: each system with fresh state (ctxfold a fresh counter and history cache), as the first
 * request of a chat in a process that has counted other chats. warm: the chat's previous request
 * (the history cut before the assistant message before this one) was served first, untimed, so
 * ctxfold's counter and history cache and each "+ memo" peer's memo know it; then this request
 * is timed. Every system gets the same window; JSON.parse of the same body is its own row.
 */
import { compressContext, createHistoryCache, createTokenCounter, type OpenAIChatMessage } from '../src/index.js';
import { openaiChatLens } from '../src/core/index.js';
import { timedCall, type RequestRecord } from './call.js';
import { modelRequestEnds } from './fixtures/conversation.js';
import { SMALL_SIZES, smallRequests, smallWorkload, WINDOW_CASES, windowOf } from './small-requests.js';
import { requestOrder } from './run-order.js';
import { showPastMessages, type BenchSystem } from './systems.js';
import type { SummaryRow } from './summary.js';

export { SMALL_SIZES, smallWorkload, UNDER_WINDOW_TOKENS, WINDOW_CASES, type WindowCase } from './small-requests.js';

/** The request before `request` in its chat: cut before the assistant message before its end (empty when there is none). */
function previousRequest(request: readonly OpenAIChatMessage[]): OpenAIChatMessage[] {
  const ends = modelRequestEnds(request);
  return request.slice(0, ends.length ? ends[ends.length - 1] : 0);
}

/** Settings of the small-conversation rows. */
export interface SmallSettings {
  readonly systems: readonly BenchSystem[];
  readonly requestsPerSize: number;
  readonly deadlineSeconds: number;
  readonly log: (line: string) => void;
}

const bodyOf = (messages: readonly OpenAIChatMessage[]) => JSON.stringify({ model: 'gpt-4o', messages });

/**
 * Runs every size and window case, cold and warm; returns the records (mode `cold` / `replay`,
 * the warm ones as `replay`, workload `small-<size>/<case>`). A ctxfold record carries
 * `tokenizerUsed`: whether its counter counted or looked up any text during the call.
 */
export async function runSmall(corpus: readonly OpenAIChatMessage[][], s: SmallSettings): Promise<RequestRecord[]> {
  const records: RequestRecord[] = [];
  const systems = s.systems.filter((x) => !x.replayOnly);
  let order = 0;
  for (const size of SMALL_SIZES) {
    const requests = smallRequests(corpus, size, s.requestsPerSize);
    for (const windowCase of WINDOW_CASES) {
      const workload = smallWorkload(size, windowCase);
      for (let h = 0; h < requests.length; h++) {
        const request = requests[h];
        const reference = createTokenCounter();
        const budget = windowOf(request, windowCase, reference);
        const body = bodyOf(request);
        for (const mode of ['cold', 'replay'] as const) {
          for (const system of requestOrder(systems, order++, 0x5a11)) {
            const counter = createTokenCounter();
            const historyCache = createHistoryCache();
            const chatId = `${workload}:${h}`;
            if (mode === 'replay') {
              // The chat's previous request, served as a server would have (untimed).
              const previous = previousRequest(request);
              if (previous.length > 0) compressContext(previous, { maxContextTokens: windowOf(previous, windowCase, reference), counter, historyCache, chatId });
              for (const m of previous) counter.message(m, openaiChatLens);
              showPastMessages(counter, previous);
            }
            const before = counter.stats();
            const record: RequestRecord = { workload, mode, system: system.name, point: `${h}:${request.length}`, messages: request.length, budget };
            await timedCall(system, { record, body, counter, historyCache, chatId, reference, deadlineSeconds: s.deadlineSeconds });
            if (system.name === 'ctxfold') {
              const after = counter.stats();
              record.tokenizerUsed = after.encoded + after.cachedHits > before.encoded + before.cachedHits;
            }
            records.push(record);
          }
        }
      }
      const mine = records.filter((r) => r.workload === workload && r.system === 'ctxfold' && r.mode === 'cold');
      s.log(`  ${workload}: ${requests.length} requests of ${Math.min(...mine.map((r) => r.messages))}-${Math.max(...mine.map((r) => r.messages))} messages; byte bound decided ${mine.filter((r) => r.tokenizerUsed === false).length}/${mine.length} cold calls`);
    }
  }
  return records;
}

/** The peers whose ratio the small-conversation table shows, with their short headers. */
const PEERS: [string, string][] = [
  ['langchain trimMessages', 'trim'], ['langchain trimMessages + memo', 'trim+memo'], ['ai-sdk pruneMessages', 'prune'], ['ai-sdk pruneMessages + memo', 'prune+memo'], ['slice(-N)', 'slice'],
];

/**
 * The small-conversation rows as a table: per size, window case and mode, ctxfold's and
 * JSON.parse's medians, the median over requests of ctxfold / JSON.parse on the same body, the
 * share of ctxfold's calls the byte bound decided, and ctxfold / each peer.
 */
export function formatSmall(rows: readonly SummaryRow[]): string {
  const find = (workload: string, mode: string, system: string) => rows.find((r) => r.workload === workload && r.mode === mode && r.system === system);
  const head = ['size', 'window', 'mode', 'n', 'ctxfold ms', 'JSON.parse ms', 'ctxfold/parse', 'bytes decided', ...PEERS.map(([, h]) => `/${h}`)];
  const body: string[][] = [];
  for (const size of SMALL_SIZES) {
    for (const windowCase of WINDOW_CASES) {
      for (const mode of ['cold', 'replay'] as const) {
        const w = smallWorkload(size, windowCase);
        const c = find(w, mode, 'ctxfold');
        const p = find(w, mode, 'JSON.parse');
        if (!c) continue;
        body.push([
          String(size), windowCase, mode === 'cold' ? 'cold' : 'warm', String(c.requests), c.medianMs.toFixed(3), p ? p.medianMs.toFixed(3) : '-',
          p?.ctxfoldRatio !== undefined ? p.ctxfoldRatio.toFixed(2) : '-', c.byteBoundPct !== undefined ? `${Math.round(c.byteBoundPct)}%` : '-',
          ...PEERS.map(([name]) => { const r = find(w, mode, name)?.ctxfoldRatio; return r === undefined ? '-' : r.toFixed(2); }),
        ]);
      }
    }
  }
  const widths = head.map((h, k) => Math.max(h.length, ...body.map((row) => row[k].length)));
  const line = (cells: string[]) => cells.map((cell, k) => (k < 3 ? cell.padEnd(widths[k]) : cell.padStart(widths[k]))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}
