import { writeFile } from 'node:fs/promises';
import { validateMessages, type ProfileName } from '../formats/profiles.js';
import { renderPage } from '../inspect/html.js';
import { historyModel, type HistoryModel } from '../inspect/model.js';
import { analyzeContext } from '../runtime/compress.js';
import { compressWithSummary } from '../runtime/one-shot.js';
import { resolveCompressOptions } from '../runtime/options.js';
import { createTokenCounter } from '../tokens/counter.js';
import { INSPECT_SUMMARIZERS, listOr, type CliOptions } from './args.js';
import { atRecord, atRecordAsync, CliError, EXIT, oneLine } from './cli-error.js';
import { compressOptionsOf, summarizerOf } from './compress-command.js';
import { whereOf, type InputRecord } from './input.js';
import type { OpenedInput } from './input-stream.js';
import { checkedReading } from './record-format.js';

/**
 * `ctxfold inspect --html OUT.html`: every record of the input is planned as `compress` plans it
 * (`compressWithSummary` with the extractive summarizer under `--summarizer extractive`, else
 * `compressContext`), and the page shows each history, its groups and what the fold did to them,
 * one section per record. Offline: no summarizer that calls out. A record that is bad input is its
 * own line on standard error and has no section; the page is still written, and the run exits 2.
 */
export async function runInspect(input: OpenedInput, options: CliOptions): Promise<number> {
  if (!INSPECT_SUMMARIZERS.includes(options.summarizer)) {
    throw new CliError(`inspect runs offline: --summarizer must be ${listOr(INSPECT_SUMMARIZERS)}, got ${JSON.stringify(options.summarizer)}`);
  }
  if (options.summarizer !== 'none' && options.compressionThresholdTokens === undefined) {
    throw new CliError(`--summarizer ${options.summarizer} needs --compression-threshold-tokens N (the token count at which to summarize)`);
  }
  const out = options.html!;
  const counter = createTokenCounter({ model: options.model });
  const summarizer = summarizerOf(options.summarizer, counter);
  const base = compressOptionsOf(options);
  const histories: HistoryModel[] = [];
  let bad = 0;
  const say = (line: string) => process.stderr.write(`ctxfold: ${oneLine(line)}\n`);

  const one = async (record: InputRecord): Promise<HistoryModel> => {
    const where = whereOf(record);
    const { format, provider, instructions } = checkedReading(record, options, where);
    const own = { ...base, format, provider, instructions, counter };
    const original = record.messages as unknown[];
    // compressContext, with what it worked on: the (repaired) history, its lens and groups.
    const analysis = atRecord(where, () => analyzeContext(original, resolveCompressOptions(own)));
    let { messages: view, report } = analysis;
    let coveredIds: readonly string[] | undefined;
    if (summarizer) {
      const r = await atRecordAsync(where, () => compressWithSummary(original, { ...own, summarizer }));
      ({ messages: view, report, coveredIds } = r);
    }
    const profile = provider ?? report.format;
    const violations = validateMessages(view, profile as ProfileName);
    return historyModel({
      label: where, original, input: analysis.input, lens: analysis.lens, grouping: analysis.grouping, view, report, coveredIds,
      summarizer: summarizer?.name, profile, violations,
    });
  };

  for await (const item of input.items) {
    if (item.error) {
      bad++;
      say(item.error.message);
      continue;
    }
    try {
      histories.push(await one(item.record));
    } catch (error) {
      if (!(error instanceof CliError)) throw error;
      bad++;
      say(error.message);
    }
  }
  if (histories.length === 0) {
    say('no history could be read: no page written');
    return EXIT.usage;
  }
  const title = histories.length === 1 ? `ctxfold inspect: ${histories[0].label}` : `ctxfold inspect: ${histories.length} histories`;
  const page = renderPage({ title, histories });
  try {
    await writeFile(out, page);
  } catch (error) {
    throw new CliError(`--html ${out}: cannot write the page (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  if (!options.quiet) {
    const groups = histories.reduce((n, h) => n + h.groups.length, 0);
    process.stdout.write(`ctxfold inspect: wrote ${out}: ${histories.length} ${histories.length === 1 ? 'history' : 'histories'}, ${groups} groups, ${Buffer.byteLength(page)} bytes\n`);
  }
  if (bad > 0) {
    if (input.shape() === 'jsonl') say(`${bad} of ${bad + histories.length} records could not be read (each is named above, and has no section)`);
    return EXIT.usage;
  }
  return EXIT.ok;
}
