import { InputError } from '../errors.js';
import { transcriptOf } from '../core/transcript.js';
import { summarizeRolling } from '../summarize/rolling.js';
import type { Summarizer } from '../summarize/summarizer.js';
import { analyzeContext, type CompressResult } from './compress.js';
import { resolveCompressOptions, type CompressOptions } from './options.js';

/** Options of `compressWithSummary`: `compressContext` options plus who summarizes. */
export interface CompressWithSummaryOptions extends CompressOptions {
  readonly summarizer: Summarizer;
  readonly signal?: AbortSignal;
}

/**
 * Compresses a history and, when it is at or above the threshold, summarizes the groups between
 * the head (or the given summary's end) and the tail right away, then plans the view with that
 * summary. For one-shot use (the CLI); servers use `createCompressor`, which does this in the
 * background. `coveredIds` lists exactly the messages the summary replaced.
 */
export async function compressWithSummary<M>(messages: readonly M[], options: CompressWithSummaryOptions): Promise<CompressResult<M> & { coveredIds: readonly string[] }> {
  const { summarizer, signal, ...rest } = options ?? ({} as CompressWithSummaryOptions);
  if (typeof summarizer?.summarize !== 'function') throw new InputError('options.summarizer', 'must be a Summarizer (an object with summarize())');
  const checked = resolveCompressOptions(rest);
  const resolved = summarizer.shorten ? { ...checked, shortenSummary: (text: string, maxTokens: number) => summarizer.shorten!(text, maxTokens) } : checked;
  const first = analyzeContext(messages, resolved);
  const range = first.report.summarize;
  if (!range || range.end <= range.start) return { messages: first.messages, report: first.report, coveredIds: resolved.summary?.coveredIds ?? [] };
  const { input, lens, counter, idOf } = first;
  const applied = first.report.summary.applied;
  const { summary } = await summarizeRolling(summarizer, {
    previousSummary: applied ? resolved.summary?.text : undefined,
    messages: transcriptOf(input, lens, range.start, range.end),
    signal: signal ?? new AbortController().signal,
    countTokens: counter.text,
    // One view is made: the summary may take all the room the rest of it leaves.
    ...(range.roomTokens === undefined ? {} : { maxTokens: range.roomTokens }),
  });
  const coveredIds = Array.from({ length: range.end - first.report.headEnd }, (_, k) => idOf(first.report.headEnd + k));
  // Plan again on the same (repaired) history, so the covered ids match what is planned.
  const second = analyzeContext(input, { ...resolved, counter, repair: false, summary: { text: summary, coveredIds } });
  return { messages: second.messages, report: { ...second.report, repaired: first.report.repaired }, coveredIds };
}
