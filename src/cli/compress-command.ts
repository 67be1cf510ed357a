import { compressContext } from '../runtime/compress.js';
import type { CompressOptions } from '../runtime/options.js';
import { createTokenCounter, summaryTextCounter } from '../tokens/counter.js';
import { compressWithSummary } from '../runtime/one-shot.js';
import { createExtractiveSummarizer } from '../summarize/extractive.js';
import { createLlmSummarizer } from '../summarize/llm.js';
import type { Summarizer } from '../summarize/summarizer.js';
import { SummarizerError } from '../errors.js';
import type { RepairAction } from '../core/repair.js';
import type { Violation } from '../core/validate/rules.js';
import type { TokenCounter } from '../tokens/counter.js';
import type { CliOptions, SummarizerChoice } from './args.js';
import { atRecord, atRecordAsync, CliError, EXIT } from './cli-error.js';
import { whereOf, type InputRecord } from './input.js';
import { shapeRecord, type RecordCommand, type RecordOutcome } from './output.js';
import { checkedReading } from './record-format.js';

/** The `compressContext` options the flags stand for (no counter yet). */
export function compressOptionsOf(options: CliOptions): CompressOptions {
  return {
    maxContextTokens: options.maxContextTokens,
    keepFirst: options.keepFirst,
    keepLast: options.keepLast,
    ...(options.keepLastYields === undefined ? {} : { keepLastYields: options.keepLastYields }),
    ...(options.lowWaterMark === undefined ? {} : { lowWaterMark: options.lowWaterMark }),
    compressionThresholdTokens: options.compressionThresholdTokens,
    toolOutputTrim: options.toolOutputTrim,
    model: options.model,
    format: options.format,
    repair: options.repair,
  };
}

/** The summarizer `--summarizer` names, built from the environment for `llm`. */
export function summarizerOf(choice: SummarizerChoice, counter: TokenCounter, env: NodeJS.ProcessEnv = process.env): Summarizer | undefined {
  if (choice === 'none') return undefined;
  if (choice === 'extractive') return createExtractiveSummarizer({ countTokens: summaryTextCounter(counter) });
  const baseURL = env.CTXFOLD_LLM_BASE_URL;
  const model = env.CTXFOLD_LLM_MODEL;
  if (!baseURL) throw new CliError('--summarizer llm needs CTXFOLD_LLM_BASE_URL (an OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1)');
  if (!model) throw new CliError('--summarizer llm needs CTXFOLD_LLM_MODEL (the model name to ask for the summary)');
  // A refused connection is not retried here: nothing listens, and every record would wait it out.
  return createLlmSummarizer({ baseURL, model, apiKey: env.CTXFOLD_LLM_API_KEY, retryRefused: false });
}

/** The token-count memo of a CLI run (the library's default is 32 MiB): see `createCompressCommand`. */
export const CLI_COUNT_CACHE_BYTES = 4 * 1024 * 1024;

/**
 * `ctxfold compress`, one record at a time: its messages become the view, and `ctxfold` holds the
 * report. One token counter serves the whole run, so a text seen in one record is never encoded
 * again. With `--summarizer`, a record at or above `--compression-threshold-tokens` is summarized
 * inline and the view carries the summary; `ctxfold.summary.coveredIds` lists the messages it
 * replaced. A record that is bad input is a `CliError` naming its line; a summarizer that cannot be
 * reached is tried once and the rest of the run goes without it, said once at the end.
 */
export function createCompressCommand(options: CliOptions): RecordCommand {
  // A flag that needs another fails before any input is read or the tokenizer is loaded.
  if (options.summarizer !== 'none' && options.compressionThresholdTokens === undefined) {
    throw new CliError(`--summarizer ${options.summarizer} needs --compression-threshold-tokens N (the token count at which to summarize)`);
  }
  const base = compressOptionsOf(options);
  // A command reads one record after another, mostly of different chats: a small memo keeps what
  // repeats across records (a shared system prompt) and keeps memory bounded on a large input.
  const counter = createTokenCounter({ model: options.model, cacheMaxBytes: CLI_COUNT_CACHE_BYTES });
  const summarizer = summarizerOf(options.summarizer, counter);
  /** Set when the summarizer could not be reached: the rest of the run goes without it, said once. */
  let unreachable: string | undefined;
  let skipped = 0;
  /** Records whose view breaks a rule of --provider. */
  let broken = 0;
  const quiet = options.quiet;

  const one = async (record: InputRecord): Promise<RecordOutcome> => {
    const where = whereOf(record);
    const { format, provider, instructions } = checkedReading(record, options, where);
    const own = { ...base, format, provider, instructions, counter };
    const diagnostics: string[] = [];
    /** What repair changed (one line each, not with --quiet) and, said even with --quiet, a view the provider would reject. */
    const tell = (repaired: readonly RepairAction[], violations: readonly Violation[] = []) => {
      if (!quiet) for (const r of repaired) diagnostics.push(`${where}: repaired messages[${r.index}]: ${r.action}: ${r.detail}`);
      if (violations.length > 0) broken++;
      for (const v of violations) diagnostics.push(`${where}: the view breaks ${v.rule}: ${v.message}`);
    };
    const done = (messages: unknown, report: { tokensBefore: number; tokensAfter: number }, ctxfold: unknown): RecordOutcome => ({
      output: shapeRecord(record, messages, ctxfold), diagnostics, tokensIn: report.tokensBefore, tokensOut: report.tokensAfter,
    });
    if (summarizer && unreachable !== undefined) skipped++;
    if (!summarizer || unreachable !== undefined) {
      const { messages, report } = atRecord(where, () => compressContext(record.messages as unknown[], own));
      tell(report.repaired, report.violations);
      return done(messages, report, report);
    }
    try {
      const { messages, report, coveredIds } = await atRecordAsync(where, () => compressWithSummary(record.messages as unknown[], { ...own, summarizer }));
      tell(report.repaired, report.violations);
      return done(messages, report, { ...report, summary: { ...report.summary, summarizer: summarizer.name, coveredIds } });
    } catch (error) {
      if (error instanceof CliError) throw error;
      // A failed summary loses nothing: the record gets the view without one, and the reason.
      const reason = `summarizer ${summarizer.name} failed: ${error instanceof Error ? error.message : String(error)}`;
      if (!quiet) diagnostics.push(`${where}: warning: ${reason}; sent the view without a summary`);
      if (SummarizerError.isInstance(error) && error.failure === 'connection') unreachable = reason;
      const { messages, report } = atRecord(where, () => compressContext(record.messages as unknown[], own));
      tell(report.repaired, report.violations);
      return done(messages, report, { ...report, notes: [...report.notes, reason] });
    }
  };

  const finish = (records: number) => {
    const diagnostics: string[] = [];
    if (skipped > 0 && !quiet) diagnostics.push(`warning: the summarizer could not be reached (${unreachable}); the ${skipped} later record(s) were sent without a summary, without trying it again`);
    if (broken > 0) diagnostics.push(`${broken} of ${records} views break a rule of provider ${options.provider}`);
    return { diagnostics, exitCode: broken > 0 ? EXIT.violations : EXIT.ok };
  };
  return { one, finish };
}
