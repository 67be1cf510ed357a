import { summaryTextCounter } from '../tokens/counter.js';
import { InputError } from '../errors.js';
import { transcriptOf } from '../core/transcript.js';
import { lastUserGroupStart } from '../core/boundary.js';
import { summarizeRolling } from '../summarize/rolling.js';
import { reportsFacts, type Summarizer } from '../summarize/summarizer.js';
import { analyzeContext, type CompressResult } from './compress.js';
import { widenFold } from './wide-fold.js';
import { resolveCompressOptions, type CompressOptions } from './options.js';

/** Options of `compressWithSummary`: `compressContext` options plus who summarizes. */
export interface CompressWithSummaryOptions extends CompressOptions {
  readonly summarizer: Summarizer;
  readonly signal?: AbortSignal;
}

/**
 * Compresses a history and, when it is at or above the threshold (`compressionThresholdTokens`,
 * default 75% of `maxContextTokens`, as `createCompressor`'s), summarizes the groups between
 * the head (or the given summary's end) and the fold's end (`report.summarize`) right away, then
 * plans the view with that summary. When the summary had to leave facts out for room (its ledger
 * says so) and turns between the fold's end and the kept tail are sent as they are, those turns
 * are folded in too in a second summary with their room, kept if it leaves out no more facts (and
 * the newest of them that fit in the room it left unused are given back word for word, in a third).
 * A wider or narrower attempt that fails leaves the summary made before it in force.
 * For one-shot use (the CLI); servers use `createCompressor`, which folds in the background down
 * to the low-water mark. `coveredIds` lists exactly the messages the summary replaced.
 */
export async function compressWithSummary<M>(messages: readonly M[], options: CompressWithSummaryOptions): Promise<CompressResult<M> & { coveredIds: readonly string[] }> {
  const { summarizer, signal, ...rest } = options ?? ({} as CompressWithSummaryOptions);
  if (typeof summarizer?.summarize !== 'function') throw new InputError('options.summarizer', 'must be a Summarizer (an object with summarize())');
  // The same default as createCompressor: a view over 75% of the window is summarized, not cut.
  const threshold = rest.compressionThresholdTokens
    ?? (typeof rest.maxContextTokens === 'number' && rest.maxContextTokens >= 1 ? Math.floor(rest.maxContextTokens * 0.75) : undefined);
  const checked = resolveCompressOptions(threshold === undefined ? rest : { ...rest, compressionThresholdTokens: threshold });
  const resolved = summarizer.shorten ? { ...checked, shortenSummary: (text: string, maxTokens: number) => summarizer.shorten!(text, maxTokens) } : checked;
  const first = analyzeContext(messages, resolved);
  const range = first.report.summarize;
  if (!range || range.end <= range.start) return { messages: first.messages, report: first.report, coveredIds: resolved.summary?.coveredIds ?? [] };
  const { input, lens, counter, idOf, counts, grouping } = first;
  const applied = first.report.summary.applied;
  const live = signal ?? new AbortController().signal;
  const summarizeTo = (end: number, roomTokens: number | undefined) => summarizeRolling(summarizer, {
    previousSummary: applied ? resolved.summary?.text : undefined,
    messages: transcriptOf(input, lens, range.start, end),
    signal: live,
    countTokens: summaryTextCounter(counter),
    // One view is made: the summary may take all the room the rest of it leaves.
    ...(roomTokens === undefined ? {} : { maxTokens: roomTokens }),
  });
  // A wider attempt that fails leaves the summary already made in force (an abort still rejects);
  // the report's notes say why.
  const failures: string[] = [];
  const attempt = async (end: number, roomTokens: number) => {
    try {
      return await summarizeTo(end, roomTokens);
    } catch (error) {
      if (live.aborted) throw error;
      failures.push(`a wider summary (to message ${end}) failed, the one before it is used: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
  };
  const first0 = await summarizeTo(range.end, range.roomTokens);
  // First up to the kept tail, then (unless `keepLastYields` is false) up to the last user turn,
  // the tail yielding to the summary (`widenFold`).
  const tail = first.report.tailStart;
  const lastTurn = first.report.heldUserTurn?.start ?? lastUserGroupStart(grouping);
  const widths = [tail, ...(resolved.plan.keepLastYields === false ? [] : [lastTurn])].filter((e, k, all) => e > range.end && all.indexOf(e) === k);
  const { folded, end } = await widenFold({ reportsFacts: reportsFacts(summarizer), first: first0, firstRoom: range.roomTokens, range, widths, grouping, counts, countText: counter.text, attempt });
  const coveredIds = Array.from({ length: end - first.report.headEnd }, (_, k) => idOf(first.report.headEnd + k));
  // Plan again on the same (repaired) history, so the covered ids match what is planned.
  const second = analyzeContext(input, { ...resolved, counter, repair: false, summary: { text: folded.summary, coveredIds } });
  const notes = failures.length > 0 ? { notes: [...second.report.notes, ...failures] } : {};
  return { messages: second.messages, report: { ...second.report, repaired: first.report.repaired, ...notes }, coveredIds };
}
