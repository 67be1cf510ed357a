import { InputError } from '../errors.js';

/** The exit codes of `ctxfold`, as the help text states them. */
export const EXIT = {
  ok: 0,
  violations: 1,
  usage: 2,
  internal: 70,
} as const;

/**
 * A failure the user can act on (bad flag, unreadable file, malformed input). Its message is one
 * line that already names where the problem is; the CLI prints it after `ctxfold: ` and exits
 * with `exitCode`, never with a stack trace.
 */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number = EXIT.usage) {
    super(message);
    this.name = 'CliError';
    this.exitCode = exitCode;
  }
}

/**
 * Runs `work` for one input record and turns a library `InputError` into a `CliError`
 * prefixed with `where` (`input line 3`), so the user learns the record as well as the field.
 */
export function atRecord<T>(where: string, work: () => T): T {
  try {
    return work();
  } catch (e) {
    if (e instanceof InputError) throw new CliError(`${where}: ${e.message}`);
    throw e;
  }
}

/** `atRecord` for async work. */
export async function atRecordAsync<T>(where: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (e instanceof InputError) throw new CliError(`${where}: ${e.message}`);
    throw e;
  }
}
