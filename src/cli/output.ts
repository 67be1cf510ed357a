import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { InputRecord, InputShape } from './input.js';

/** What a command made of the whole input: one output value per record, stderr lines, exit code. */
export interface CommandResult {
  /** One value per input record, in input order. */
  readonly outputs: readonly unknown[];
  /** Lines for stderr (without the `ctxfold: ` prefix). */
  readonly diagnostics: readonly string[];
  readonly exitCode: number;
}

/**
 * The output value for one record, in the record's own shape: the envelope with its list
 * (`messages`, `contents` or `input`) replaced and `ctxfold` set (other fields and their order kept), or, for a bare array (which
 * cannot carry a report), a new object `{ messages, ctxfold }`.
 */
export function shapeRecord(record: InputRecord, messages: unknown, ctxfold: unknown): Record<string, unknown> {
  return record.envelope ? { ...record.envelope, [record.field]: messages, ctxfold } : { messages, ctxfold };
}

/**
 * Serializes the outputs in the input's layout: JSONL gives one compact line per record, in
 * order; a single JSON document gives one value (indented with `pretty`). Every chunk ends in a newline.
 */
export function renderOutputs(shape: InputShape, outputs: readonly unknown[], pretty: boolean): string[] {
  if (shape === 'jsonl') return outputs.map((o) => `${JSON.stringify(o)}\n`);
  return outputs.map((o) => `${JSON.stringify(o, null, pretty ? 2 : undefined)}\n`);
}

/** Writes the chunks in order, waiting for `drain` whenever the stream's buffer is full. */
export async function writeChunks(stream: Writable, chunks: readonly string[]): Promise<void> {
  for (const chunk of chunks) {
    if (!stream.write(chunk)) await once(stream, 'drain');
  }
}
