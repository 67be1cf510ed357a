import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { InputRecord, InputShape } from './input.js';

/** What a command made of one record: its output value, its stderr lines, and its tokens (compress). */
export interface RecordOutcome {
  readonly output: unknown;
  /** Lines for stderr about this record (without the `ctxfold: ` prefix), `--quiet` already applied. */
  readonly diagnostics: readonly string[];
  readonly tokensIn?: number;
  readonly tokensOut?: number;
}

/**
 * A command as the record loop runs it: `one` works on one record (a `CliError` when the record is
 * bad input: the loop reports it and goes on), `finish` gives the closing stderr lines and the
 * exit code of the `done` records that were read.
 */
export interface RecordCommand {
  one(record: InputRecord): Promise<RecordOutcome>;
  finish(done: number): { readonly diagnostics: readonly string[]; readonly exitCode: number };
}

/**
 * The output value for one record, in the record's own shape: the envelope with its list
 * (`messages`, `contents` or `input`) replaced and `ctxfold` set (other fields and their order kept), or, for a bare array (which
 * cannot carry a report), a new object `{ messages, ctxfold }`.
 */
export function shapeRecord(record: InputRecord, messages: unknown, ctxfold: unknown): Record<string, unknown> {
  return record.envelope ? { ...record.envelope, [record.field]: messages, ctxfold } : { messages, ctxfold };
}

/** One output value as written: a compact line for JSONL; a single document indented with `pretty`. Ends in a newline. */
export function renderOutput(shape: InputShape, output: unknown, pretty: boolean): string {
  return `${JSON.stringify(output, null, shape !== 'jsonl' && pretty ? 2 : undefined)}\n`;
}

/** Writes the chunk, waiting for `drain` when the stream's buffer is full (so a slow reader holds the run back, not memory). */
export async function writeChunk(stream: Writable, chunk: string): Promise<void> {
  if (!stream.write(chunk)) await once(stream, 'drain');
}
