import { CtxfoldError, InputError, type CtxfoldErrorCode } from '../errors.js';

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
 * with `exitCode`, never with a stack trace. A `CtxfoldError`, as every error ctxfold throws.
 */
export class CliError extends CtxfoldError {
  static override readonly kind: string = 'CliError';
  static override readonly code: CtxfoldErrorCode = 'CTXFOLD_CLI';
  readonly exitCode: number;
  constructor(message: string, exitCode: number = EXIT.usage) {
    super(message);
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

/**
 * Error text made safe for a terminal: one line (JSON.parse messages quote input, newlines
 * included), control characters written as escapes (input may be binary), at most 400 characters.
 */
export function oneLine(text: string): string {
  const flat = text.replace(/\s*[\r\n]+\s*/g, ' ').trim()
    .replace(/[\u0000-\u001f\u007f-\u009f\ufffd]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return flat.length > 400 ? `${flat.slice(0, 400)}...` : flat;
}

/**
 * What the CLI says about a failure: a `CliError` or an `InputError` is the user's to fix (its own
 * line, exit 2 or its code); anything else is an internal error (exit 70), one line, with the
 * stack trace only when `debug` (CTXFOLD_DEBUG=1).
 */
export function describeFailure(error: unknown, debug: boolean): { line: string; stack?: string; exitCode: number } {
  if (error instanceof CliError) return { line: error.message, exitCode: error.exitCode };
  if (error instanceof InputError) return { line: error.message, exitCode: EXIT.usage };
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return {
    line: `internal error: ${message}${debug ? '' : ' (set CTXFOLD_DEBUG=1 for the stack trace)'}`,
    stack: debug && error instanceof Error ? error.stack : undefined,
    exitCode: EXIT.internal,
  };
}
