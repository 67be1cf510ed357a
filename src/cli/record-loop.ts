import type { CliOptions } from './args.js';
import { CliError, EXIT, oneLine } from './cli-error.js';
import type { OpenedInput } from './input-stream.js';
import { renderOutput, writeChunk, type RecordCommand } from './output.js';
import { createProgress } from './progress.js';
import { createHeapKeeper } from './heap-keeper.js';

/**
 * Runs `command` over the input a record at a time: each output is written (waiting for the
 * reader) before the next record is read, and each record's stderr lines are printed as it is
 * done, so a JSONL run holds one record at a time whatever the input's size. A record that is bad
 * input is its own error line (its input line, the field and the rule) and has no output; the run
 * goes on, and in JSONL ends with a line counting them. Returns the exit code: 2 when a record
 * was bad, else what the command decides.
 */
export async function runRecords(input: OpenedInput, command: RecordCommand, options: Pick<CliOptions, 'pretty' | 'quiet'>): Promise<number> {
  const stderr = process.stderr;
  const progress = createProgress(stderr, options.quiet, input);
  const say = (lines: readonly string[]) => {
    if (lines.length === 0) return;
    progress.clear();
    for (const line of lines) stderr.write(`ctxfold: ${oneLine(line)}\n`);
  };
  let done = 0;
  let bad = 0;
  const keepHeap = createHeapKeeper();
  for await (const item of input.items) {
    keepHeap();
    if (item.error) {
      bad++;
      say([item.error.message]);
      continue;
    }
    let outcome;
    try {
      outcome = await command.one(item.record);
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      bad++;
      say([error.message]);
      continue;
    }
    done++;
    say(outcome.diagnostics);
    await writeChunk(process.stdout, renderOutput(input.shape(), outcome.output, options.pretty));
    progress.record(outcome.tokensIn, outcome.tokensOut);
  }
  progress.done();
  const end = command.finish(done);
  say(end.diagnostics);
  if (bad > 0) {
    // A single document's error is its one line, as any usage error's; JSONL also counts them.
    if (input.shape() === 'jsonl') say([`${bad} of ${bad + done} records could not be read (each is named above, and has no output line)`]);
    return EXIT.usage;
  }
  return end.exitCode;
}
