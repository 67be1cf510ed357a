import type { FormatName } from '../formats/lens.js';
import { profileFor } from '../formats/profiles.js';
import { LENSES, selectLens } from '../formats/registry.js';
import type { CliOptions } from './args.js';
import { atRecord, CliError } from './cli-error.js';
import { INSTRUCTION_FIELDS, type InputRecord } from './input.js';

/** How one record is read: its format (or `auto`), the provider it is checked against, and its out-of-list instructions. */
export interface RecordReading {
  readonly format: FormatName | 'auto';
  readonly provider?: string;
  /** The body's `system` / `systemInstruction` / `instructions`, counted into the request. */
  readonly instructions?: unknown;
}

/**
 * Decides how a record is read from the flags and its request body: `--provider` implies its
 * format; a body whose list is `contents` or `input` can only be Gemini or OpenAI Responses; a
 * named format whose bodies keep their list in another field is an error naming both.
 */
export function readingOf(record: InputRecord, options: Pick<CliOptions, 'format' | 'provider'>, where: string): RecordReading {
  let format = options.format;
  if (options.provider !== undefined) {
    const profile = profileFor(options.provider, '--provider');
    if (format === 'auto') format = profile.lens.format;
    else if (format !== profile.lens.format) throw new CliError(`--provider ${options.provider} reads ${profile.lens.format} messages, but --format is ${format}`);
  }
  if (record.envelope) {
    const owners = (Object.values(LENSES) as { format: FormatName; request: { messagesField: string } }[]).filter((l) => l.request.messagesField === record.field);
    if (format === 'auto' && record.field !== 'messages' && owners.length === 1) format = owners[0].format;
    if (format !== 'auto') {
      const lens = LENSES[format];
      if (lens && lens.request.messagesField !== record.field) {
        throw new CliError(`${where}: format ${format} keeps its list in "${lens.request.messagesField}", but this request body has "${record.field}"`);
      }
    }
  }
  const field = record.envelope ? INSTRUCTION_FIELDS.find((f) => Object.hasOwn(record.envelope!, f)) : undefined;
  const instructions: unknown = field === undefined ? undefined : record.envelope![field];
  return { format, provider: options.provider, instructions };
}

/**
 * A record checked before any work, as every command reads one: how it is read (`readingOf`) and
 * that its messages are in that format, any error naming the record (`where`). A bad record
 * costs no tokenizing.
 */
export function checkedReading(record: InputRecord, options: Pick<CliOptions, 'format' | 'provider'>, where: string): RecordReading {
  return atRecord(where, () => {
    const reading = readingOf(record, options, where);
    selectLens(record.messages, reading.format, record.field);
    return reading;
  });
}
