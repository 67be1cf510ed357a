import { compressContext, type CompressOptions } from '../compress.js';
import { selectLens } from '../formats/detect.js';
import { createTokenCounter } from '../tokens/counter.js';
import type { CliOptions } from './args.js';
import { atRecord, EXIT } from './cli-error.js';
import { whereOf, type ParsedInput } from './input.js';
import { shapeRecord, type CommandResult } from './output.js';

/** The `compressContext` options the flags stand for (no counter yet). */
export function compressOptionsOf(options: CliOptions): CompressOptions {
  return {
    maxContextTokens: options.maxTokens,
    keepFirst: options.keepFirst,
    keepLast: options.keepLast,
    compressionThresholdTokens: options.threshold,
    toolOutputTrim: options.trimToolOutput,
    model: options.model,
    format: options.format,
    repair: options.repair,
  };
}

/**
 * `ctxfold compress`: every record's messages become the view, and `ctxfold` holds the report.
 * One token counter serves the whole run, so a text seen in one record is never encoded again.
 * Fails on the first malformed record, before any record is compressed.
 */
export function runCompress(input: ParsedInput, options: CliOptions): CommandResult {
  // Check every record first: bad input fails fast, before the tokenizer is loaded or any work is done.
  for (const record of input.records) atRecord(whereOf(record), () => selectLens(record.messages, options.format, 'messages'));
  const base = compressOptionsOf(options);
  const counter = createTokenCounter({ model: options.model });
  const outputs = input.records.map((record) =>
    atRecord(whereOf(record), () => {
      const { messages, report } = compressContext(record.messages as unknown[], { ...base, counter });
      return shapeRecord(record, messages, report);
    }),
  );
  return { outputs, diagnostics: [], exitCode: EXIT.ok };
}
