import { analyzeContext, compressContext, type CompressOptions, type CompressResult } from './compress.js';
import { idsOf } from './fingerprints.js';
import { summarizeRolling } from '../summarize/rolling.js';
import type { Summarizer } from '../summarize/summarizer.js';

/** Options of `compressWithSummary`: `compressContext` options plus who summarizes. */
export interface CompressWithSummaryOptions extends CompressOptions {
  readonly summarizer: Summarizer;
  readonly signal?: AbortSignal;
}

/**
 * Compresses a history and, when it is at or above the threshold, summarizes the groups between
 * the head (or the given summary's end) and the tail right away, then plans the view with that
 * summary. For one-shot use (the CLI); servers use `createCompressor`, which does this in the
 * background. The report's `summary.coveredIds` lists exactly the messages the summary replaced.
 */
export async function compressWithSummary<M>(messages: readonly M[], options: CompressWithSummaryOptions): Promise<CompressResult<M> & { coveredIds: readonly string[] }> {
  const first = analyzeContext(messages, options);
  const range = first.report.summarize;
  if (!range || range.end <= range.start) return { messages: first.messages, report: first.report, coveredIds: options.summary?.coveredIds ?? [] };
  const { input, lens, counter } = first;
  const applied = first.report.summary.applied;
  const { summary } = await summarizeRolling(options.summarizer, {
    previousSummary: applied ? options.summary?.text : undefined,
    messages: input.slice(range.start, range.end).map((m) => lens.transcript(m)),
    signal: options.signal ?? new AbortController().signal,
    countTokens: counter.text,
  });
  const coveredIds = idsOf(input, lens, first.report.headEnd, range.end);
  // Plan again on the same (repaired) history, so the covered ids match what is planned.
  const result = compressContext(input, { ...options, counter, repair: false, summary: { text: summary, coveredIds } });
  return { ...result, report: { ...result.report, repaired: first.report.repaired }, coveredIds };
}
