import type { Violation } from '../core/validate/rules.js';
import { checkProfile, type Profile } from '../core/validate/validate.js';
import { evidenceAgainst } from '../formats/disagreement.js';
import type { FormatName } from '../formats/lens.js';
import { PROFILES, profileFor } from '../formats/profiles.js';
import { readingOf } from './record-format.js';
import { selectLens } from '../formats/registry.js';
import type { CliOptions } from './args.js';
import { atRecord, CliError, EXIT } from './cli-error.js';
import { whereOf, type InputRecord } from './input.js';
import { shapeRecord, type RecordCommand, type RecordOutcome } from './output.js';

/** The provider profile each shipped format is validated against by default. */
const PROFILE_OF_FORMAT: Partial<Record<FormatName, Profile<any>>> = PROFILES;

/** What `validate` puts in a record's `ctxfold` field. */
export interface ValidationOutcome {
  readonly valid: boolean;
  readonly violations: readonly Violation[];
}

/**
 * The warning for messages read as `format` (named by `--format`, or implied by `--provider`)
 * whose evidence points to another format, naming it and what was seen; undefined when nothing
 * contradicts the named format.
 */
export function formatWarning(messages: readonly unknown[], format: FormatName, options: Pick<CliOptions, 'format' | 'provider'>): string | undefined {
  const against = evidenceAgainst(messages, format);
  if (against.length === 0) return undefined;
  const named = options.format !== 'auto' ? `--format ${format}` : `--provider ${options.provider} (${format} messages)`;
  const seen = against.map((pieces) => `${pieces[0].format} (${pieces.map((p) => `${p.what} at messages[${p.index}]`).join(', ')})`);
  return `warning: ${named}, but the messages look like ${seen.join(' or ')}`;
}

/**
 * `ctxfold validate`, one record at a time: checks it against its format's provider profile and
 * leaves the messages as they are. Exit 1 when any record breaks a rule; each violation is also a
 * stderr line naming its record. A record that is not messages at all is bad input (a `CliError`),
 * not a violation. When `--format` (or `--provider`) names a format the messages' evidence
 * contradicts, a warning says which format they look like and why (not with `--quiet`); the exit
 * code stays what validation decides.
 */
export function createValidateCommand(options: CliOptions): RecordCommand {
  let broken = 0;
  const named = options.format !== 'auto' || options.provider !== undefined;
  const one = async (record: InputRecord): Promise<RecordOutcome> => {
    const where = whereOf(record);
    const diagnostics: string[] = [];
    const violations = atRecord(where, () => {
      const reading = readingOf(record, options, where);
      const lens = selectLens(record.messages, reading.format, record.field);
      const profile = reading.provider !== undefined ? profileFor(reading.provider, '--provider') : PROFILE_OF_FORMAT[lens.format];
      if (!profile) throw new CliError(`${where}: no validation profile for format ${lens.format}`);
      if (named && !options.quiet) {
        const warning = formatWarning(record.messages as unknown[], lens.format, options);
        if (warning) diagnostics.push(`${where}: ${warning}`);
      }
      return checkProfile(record.messages as unknown[], profile);
    });
    if (violations.length > 0) broken++;
    for (const v of violations) diagnostics.push(`${where}: ${v.rule}: ${v.message}`);
    const outcome: ValidationOutcome = { valid: violations.length === 0, violations };
    return { output: shapeRecord(record, record.messages, outcome), diagnostics };
  };
  const finish = (records: number) => ({
    diagnostics: broken > 0 ? [`${broken} of ${records} histories break a provider rule`] : [],
    exitCode: broken > 0 ? EXIT.violations : EXIT.ok,
  });
  return { one, finish };
}
