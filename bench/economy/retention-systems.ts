/**
 * The systems whose views `measureRetention` checks by default:
 *
 * - **ctxfold**: `compressWithSummary(messages, { maxContextTokens: budget,
 *   compressionThresholdTokens: floor(0.75 x budget), keepFirst: 1, keepLast: 6,
 *   toolOutputTrim: { minChars: 500 }, summarizer: createExtractiveSummarizer(), counter })`: the
 *   dropped middle is summarized right away by the extractive summarizer (default options);
 * - the peers exactly as `bench/systems.ts` configures and converts them (its `SYSTEMS` entries
 *   are run through their own `prepare` / `run` / `view`, with no deadline): LangChain
 *   `trimMessages`, AI SDK `pruneMessages` + cut, `slice(-N)`.
 *
 * `CTXFOLD_NO_SUMMARY` (the same call without a summary, `compressContext`) is the reference that
 * shows what the summary adds; it is not in the default list.
 */
import { compressContext, compressWithSummary, createExtractiveSummarizer, createHistoryCache, createTokenCounter, type OpenAIChatMessage, type TokenCounter } from '../../src/index.js';
import { openaiChatLens } from '../../src/core/index.js';
import { SYSTEMS, type BenchSystem, type RunContext } from '../systems.js';
import { compressorSystem } from './compressor-system.js';
import type { RetentionSystem } from './retention.js';

/** One counter for every ctxfold call of the process (a server keeps one). */
let sharedCounter: TokenCounter | undefined;
function counter(): TokenCounter {
  return (sharedCounter ??= createTokenCounter());
}

/** ctxfold's planning options at a budget (the summary variant adds its summarizer). */
function planning(budget: number) {
  return {
    maxContextTokens: budget,
    keepFirst: 1,
    keepLast: 6,
    toolOutputTrim: { minChars: 500 },
    counter: counter(),
  };
}

const summarizer = createExtractiveSummarizer();

/** ctxfold with the extractive summary of what it drops. */
export const CTXFOLD: RetentionSystem = {
  name: 'ctxfold',
  announcesRecall: false,
  run: async (messages, budget) => (await compressWithSummary(messages, { ...planning(budget), summarizer })).messages as OpenAIChatMessage[],
};

/**
 * ctxfold with the extractive summary and recall: the same view as `CTXFOLD`, plus the original
 * messages its summary replaced (those `createCompressor({ recall: true })` keeps in its store and
 * answers `ctxfold_recall` calls with), and the tool results the view cleared (which it keeps as it
 * clears them). Messages dropped without being summarized are not recallable.
 */
export const CTXFOLD_RECALL: RetentionSystem = {
  name: 'ctxfold + recall',
  // A one-shot view has no store to answer a recall call: it does not announce one.
  announcesRecall: false,
  run: async (messages, budget) => {
    const result = await compressWithSummary(messages, { ...planning(budget), summarizer });
    // What the summary covers (`coveredIds`, from the head on) is what a compressor with recall
    // stores once it commits that summary, whether or not the summary fits this view.
    // The tool results the view cleared (`report.collapsed`) are kept too, before the view goes out.
    const head = result.report.headEnd;
    const recallable = [...messages.slice(head, head + result.coveredIds.length), ...result.report.collapsed.map((c) => messages[c.index])];
    return { view: result.messages as OpenAIChatMessage[], recallable };
  },
};

/**
 * ctxfold as a server runs it (`compressorSystem`: `createCompressor` with the same planning
 * options and the extractive summarizer), fed every request of the conversation in turn (each history that ends
 * right before an assistant message, the last one being the measured request), each reported with
 * `afterResponse` and its background summary awaited (`drain`) before the next; the view measured
 * is that of the last request sent again once its own job settled (rolling summaries included).
 * This row shows what a chat served through the compressor, the adapters or the proxy keeps.
 */
export const CTXFOLD_BACKGROUND: RetentionSystem = {
  name: 'ctxfold, background (createCompressor)',
  announcesRecall: false,
  run: async (messages, budget) => {
    const { counter: _own, maxContextTokens: _budget, ...options } = planning(budget);
    const system = compressorSystem('ctxfold, background (createCompressor)', options);
    try {
      for (let end = 1; end <= messages.length; end++) {
        if (end < messages.length && messages[end].role !== 'assistant') continue;
        if (messages[end - 1].role === 'assistant') continue;
        await system.viewOf(messages.slice(0, end), budget, 'retention');
      }
      // The measured request once more, its own job settled: what the chat's next call sends.
      return await system.viewOf(messages, budget, 'retention');
    } finally {
      await system.close();
    }
  },
};

/**
 * `CTXFOLD_BACKGROUND` with recall on (`createCompressor({ recall: true })`): the same replay;
 * its views name the recall tool wherever they summarize or clear, and what its summaries replaced
 * is kept in its store (reachable: the originals of every message before the view's tail).
 */
export const CTXFOLD_RECALL_BACKGROUND: RetentionSystem = {
  name: 'ctxfold + recall, background',
  run: async (messages, budget) => {
    const { counter: _own, maxContextTokens: _budget, ...options } = planning(budget);
    const system = compressorSystem('ctxfold + recall, background', { ...options, recall: true });
    try {
      for (let end = 1; end <= messages.length; end++) {
        if (end < messages.length && messages[end].role !== 'assistant') continue;
        if (messages[end - 1].role === 'assistant') continue;
        await system.viewOf(messages.slice(0, end), budget, 'retention');
      }
      const view = await system.viewOf(messages, budget, 'retention');
      const sent = new Set(view);
      // What recall can give back: the messages the view does not send that a summary covers
      // (the store keeps them) or that it cleared; read from the view's own summary count.
      const summary = view.find((m) => typeof m.content === 'string' && m.content.startsWith('[Summary of'));
      const covered = summary ? Number(/^\[Summary of (\d+)/.exec(String(summary.content))?.[1] ?? 0) : 0;
      // And the tool results the view cleared: the store keeps each as it clears it, and the
      // placeholder names its recall id. Matched to the original by the call id it answers.
      const cleared = new Set(view.filter((m) => m.role === 'tool' && typeof m.content === 'string' && m.content.startsWith('[tool result cleared')).map((m) => (m as { tool_call_id?: string }).tool_call_id));
      const recallable = messages.filter((m, i) => !sent.has(m) && ((i >= 1 && i < 1 + covered) || (m.role === 'tool' && cleared.has((m as { tool_call_id?: string }).tool_call_id))));
      return { view, recallable };
    } finally {
      await system.close();
    }
  },
};

/** The same planning without any summary: what ctxfold keeps by cutting alone. */
export const CTXFOLD_NO_SUMMARY: RetentionSystem = {
  name: 'ctxfold, no summary',
  announcesRecall: false,
  run: (messages, budget) => compressContext(messages, planning(budget)).messages as OpenAIChatMessage[],
};

/** A `bench/systems.ts` system as a retention system: prepare, run (no deadline), view. */
function fromBench(name: string): RetentionSystem {
  const system = SYSTEMS.find((s) => s.name === name) as BenchSystem | undefined;
  if (!system) throw new Error(`bench/systems.ts has no system named ${JSON.stringify(name)} (has: ${SYSTEMS.map((s) => s.name).join(', ')})`);
  return {
    name,
    run: async (messages, budget) => {
      const ctx: RunContext = { budget, deadline: Number.POSITIVE_INFINITY, deadlineSeconds: Number.POSITIVE_INFINITY, counter: counter(), historyCache: createHistoryCache(), chatId: 'retention' };
      const output = await system.run(system.prepare('', messages), ctx);
      return system.view(output) ?? [];
    },
  };
}

/** The peers, as configured in bench/systems.ts. */
export const PEERS: readonly RetentionSystem[] = [fromBench('langchain trimMessages'), fromBench('ai-sdk pruneMessages'), fromBench('slice(-N)')];

/** ctxfold first, then the peers. */
export const RETENTION_SYSTEMS: readonly RetentionSystem[] = [CTXFOLD, ...PEERS];

/**
 * The naive newest-groups cut, written apart from ctxfold: the system messages, then whole
 * exchanges from the newest back while they fit the budget (an exchange: an assistant message and
 * the tool results after it, or one other message). What a careful hand-written trimmer sends.
 */
export const NAIVE_CUT: RetentionSystem = {
  name: 'naive newest-groups cut',
  run: (messages, budget) => {
    const c = counter();
    const system = messages.filter((m) => m.role === 'system' || m.role === 'developer');
    let used = c.requestOverhead + system.reduce((t, m) => t + c.message(m, openaiChatLens), 0);
    const kept: OpenAIChatMessage[][] = [];
    for (let end = messages.length; end > 0;) {
      let start = end - 1;
      while (start > 0 && messages[start].role === 'tool') start--;
      const exchange = messages.slice(start, end).filter((m) => m.role !== 'system' && m.role !== 'developer');
      const cost = exchange.reduce((t, m) => t + c.message(m, openaiChatLens), 0);
      if (used + cost > budget) break;
      used += cost;
      kept.unshift(exchange);
      end = start;
    }
    return [...system, ...kept.flat()];
  },
};
