import { compressContext } from '../runtime/compress.js';
import type { CompressOptions } from '../runtime/options.js';
import { selectLens } from '../formats/registry.js';
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
import { whereOf, type ParsedInput } from './input.js';
import { shapeRecord, type CommandResult } from './output.js';
import { readingOf } from './record-format.js';

/** The `compressContext` options the flags stand for (no counter yet). */
export function compressOptionsOf(options: CliOptions): CompressOptions {
  return {
    maxContextTokens: options.maxTokens,
    keepFirst: options.keepFirst,
    keepLast: options.keepLast,
    ...(options.keepLastYields === undefined ? {} : { keepLastYields: options.keepLastYields }),
    ...(options.lowWaterMark === undefined ? {} : { lowWaterMark: options.lowWaterMark }),
    compressionThresholdTokens: options.threshold,
    toolOutputTrim: options.trimToolOutput,
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

/**
 * `ctxfold compress`: every record's messages become the view, and `ctxfold` holds the report.
 * One token counter serves the whole run, so a text seen in one record is never encoded again.
 * With `--summarizer`, a record at or above `--threshold` is summarized inline and the view
 * carries the summary; `ctxfold.summary.coveredIds` lists the messages it replaced.
 * Fails on the first malformed record, before any record is compressed.
 */
export async function runCompress(input: ParsedInput, options: CliOptions): Promise<CommandResult> {
  // Check every record first: bad input fails fast, before the tokenizer is loaded or any work is done.
  const readings = input.records.map((record) => atRecord(whereOf(record), () => {
    const reading = readingOf(record, options, whereOf(record));
    selectLens(record.messages, reading.format, record.field);
    return reading;
  }));
  const base = compressOptionsOf(options);
  const counter = createTokenCounter({ model: options.model });
  const summarizer = summarizerOf(options.summarizer, counter);
  if (summarizer && options.threshold === undefined) {
    throw new CliError(`--summarizer ${options.summarizer} needs --threshold N (the token count at which to summarize)`);
  }
  const outputs = [];
  const diagnostics: string[] = [];
  /** Set when the summarizer could not be reached: the rest of the run goes without it, said once. */
  let unreachable: string | undefined;
  /** What repair changed in a record, one stderr line each (the report in the output has it too). */
  const tellRepairs = (where: string, repaired: readonly RepairAction[], violations: readonly Violation[] = []) => {
    for (const r of repaired) diagnostics.push(`${where}: repaired messages[${r.index}]: ${r.action}: ${r.detail}`);
    if (violations.length > 0) broken++;
    // A view the provider would reject is an error, said even with --quiet.
    for (const v of violations) errors.push(`${where}: the view breaks ${v.rule}: ${v.message}`);
  };
  /** Records whose view breaks a rule of --provider, and those lines. */
  let broken = 0;
  const errors: string[] = [];
  let skipped = 0;
  for (const [r, record] of input.records.entries()) {
    const where = whereOf(record);
    const { format, provider, instructions } = readings[r];
    const own = { ...base, format, provider, instructions, counter };
    if (summarizer && unreachable !== undefined) skipped++;
    if (!summarizer || unreachable !== undefined) {
      outputs.push(atRecord(where, () => {
        const { messages, report } = compressContext(record.messages as unknown[], own);
        tellRepairs(where, report.repaired, report.violations);
        return shapeRecord(record, messages, report);
      }));
      continue;
    }
    try {
      const { messages, report, coveredIds } = await atRecordAsync(where, () => compressWithSummary(record.messages as unknown[], { ...own, summarizer }));
      tellRepairs(where, report.repaired, report.violations);
      outputs.push(shapeRecord(record, messages, { ...report, summary: { ...report.summary, summarizer: summarizer.name, coveredIds } }));
    } catch (error) {
      if (error instanceof CliError) throw error;
      // A failed summary loses nothing: the record gets the view without one, and the reason.
      const reason = `summarizer ${summarizer.name} failed: ${error instanceof Error ? error.message : String(error)}`;
      diagnostics.push(`${where}: warning: ${reason}; sent the view without a summary`);
      if (SummarizerError.isInstance(error) && error.failure === 'connection') unreachable = reason;
      const { messages, report } = compressContext(record.messages as unknown[], own);
      tellRepairs(where, report.repaired, report.violations);
      outputs.push(shapeRecord(record, messages, { ...report, notes: [...report.notes, reason] }));
    }
  }
  if (options.quiet) diagnostics.length = 0;
  if (skipped > 0 && !options.quiet) diagnostics.push(`warning: the summarizer could not be reached (${unreachable}); the ${skipped} later record(s) were sent without a summary, without trying it again`);
  diagnostics.push(...errors);
  if (broken > 0) diagnostics.push(`${broken} of ${input.records.length} views break a rule of provider ${options.provider}`);
  return { outputs, diagnostics, exitCode: broken > 0 ? EXIT.violations : EXIT.ok };
}
