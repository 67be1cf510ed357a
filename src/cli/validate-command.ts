import type { Violation } from '../core/validate/rules.js';
import { checkProfile, type Profile } from '../core/validate/validate.js';
import type { FormatName } from '../formats/lens.js';
import { PROFILES, profileFor } from '../formats/profiles.js';
import { readingOf } from './record-format.js';
import { selectLens } from '../formats/registry.js';
import type { CliOptions } from './args.js';
import { atRecord, CliError, EXIT } from './cli-error.js';
import { whereOf, type ParsedInput } from './input.js';
import { shapeRecord, type CommandResult } from './output.js';

/** The provider profile each shipped format is validated against by default. */
const PROFILE_OF_FORMAT: Partial<Record<FormatName, Profile<any>>> = PROFILES;

/** What `validate` puts in a record's `ctxfold` field. */
export interface ValidationOutcome {
  readonly valid: boolean;
  readonly violations: readonly Violation[];
}

/**
 * `ctxfold validate`: checks every record against its format's provider profile and leaves the
 * messages as they are. Exit 1 when any record breaks a rule; each violation is also a stderr line
 * naming its record. A record that is not messages at all is bad input (exit 2), not a violation.
 */
export function runValidate(input: ParsedInput, options: CliOptions): CommandResult {
  const outputs: unknown[] = [];
  const diagnostics: string[] = [];
  let broken = 0;
  for (const record of input.records) {
    const where = whereOf(record);
    const violations = atRecord(where, () => {
      const reading = readingOf(record, options, where);
      const lens = selectLens(record.messages, reading.format, record.field);
      const profile = reading.provider !== undefined ? profileFor(reading.provider, '--provider') : PROFILE_OF_FORMAT[lens.format];
      if (!profile) throw new CliError(`${where}: no validation profile for format ${lens.format}`);
      return checkProfile(record.messages as unknown[], profile);
    });
    if (violations.length > 0) broken++;
    for (const v of violations) diagnostics.push(`${where}: ${v.rule}: ${v.message}`);
    const outcome: ValidationOutcome = { valid: violations.length === 0, violations };
    outputs.push(shapeRecord(record, record.messages, outcome));
  }
  if (broken > 0) diagnostics.push(`${broken} of ${input.records.length} histories break a provider rule`);
  return { outputs, diagnostics, exitCode: broken > 0 ? EXIT.violations : EXIT.ok };
}
