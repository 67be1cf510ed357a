import { readFile } from 'node:fs/promises';
import { CliError } from './cli-error.js';

/** How the input was laid out; the output takes the same layout. */
export type InputShape = 'array' | 'object' | 'jsonl';

/** One history to work on: a bare array of messages, or an object carrying `messages`. */
export interface InputRecord {
  /** 1-based line of the input where the record starts; errors name it. */
  readonly line: number;
  /** The messages as given; the format's lens checks them before any use. */
  readonly messages: unknown;
  /** The object that carried `messages` (its other fields are kept); absent for a bare array. */
  readonly envelope?: Readonly<Record<string, unknown>>;
}

/** The records of one input, in order, and the layout they came in. */
export interface ParsedInput {
  readonly shape: InputShape;
  readonly records: readonly InputRecord[];
}

/** Where a record is, as error messages name it. */
export const whereOf = (record: InputRecord): string => `input line ${record.line}`;

const READ_FAILURES: Record<string, string> = {
  ENOENT: 'no such file',
  EISDIR: 'is a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
};

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  } catch (e) {
    throw new CliError(`cannot read standard input: ${(e as Error).message}`);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Reads the whole input: the file, or standard input when `file` is absent or `-`. */
export async function readInput(file: string | undefined): Promise<string> {
  if (file === undefined || file === '-') return readStdin();
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? '';
    throw new CliError(`cannot read ${file}: ${READ_FAILURES[code] ?? (e as Error).message}`);
  }
}

function recordOf(value: unknown, line: number): InputRecord {
  if (Array.isArray(value)) return { line, messages: value };
  const where = `input line ${line}`;
  if (value === null || typeof value !== 'object') {
    const got = value === null ? 'null' : typeof value;
    throw new CliError(`${where}: expected an array of messages or an object with "messages", got ${got}`);
  }
  const envelope = value as Record<string, unknown>;
  if (!Object.hasOwn(envelope, 'messages')) throw new CliError(`${where}: missing field "messages" (expected an array of messages)`);
  return { line, messages: envelope.messages, envelope };
}

/** 1-based line of the character at `offset`. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** The line a JSON.parse error points at, when its message gives a position. */
function errorLine(text: string, error: Error): number | undefined {
  const m = /at position (\d+)/.exec(error.message);
  return m ? lineAt(text, Number(m[1])) : undefined;
}

/**
 * Detects the layout and splits the input into records: the whole text as one JSON value first
 * (an array of messages, or an object with `messages`); if it does not parse, JSONL with one
 * such value a line, blank lines skipped. Throws a `CliError` naming the line at fault.
 */
export function parseInput(raw: string): ParsedInput {
  const text = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
  if (text.trim() === '') throw new CliError('input: empty (expected a JSON array of messages, an object with "messages", or JSONL)');
  let whole: unknown;
  let wholeError: Error;
  try {
    whole = JSON.parse(text);
    const line = lineAt(text, text.search(/\S/));
    const record = recordOf(whole, line);
    return { shape: record.envelope ? 'object' : 'array', records: [record] };
  } catch (e) {
    if (e instanceof CliError) throw e;
    wholeError = e as Error;
  }

  const lines = text.split('\n');
  const records: InputRecord[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (e) {
      if (records.length > 0) throw new CliError(`input: not JSON or JSONL (line ${i + 1}: ${(e as Error).message})`);
      // A first line that is not JSON means the text was meant as one JSON document: its own error says where.
      const only = lines.every((l, k) => k === i || l.trim() === '');
      const at = errorLine(text, wholeError) ?? (only ? i + 1 : undefined);
      throw new CliError(`input: not JSON or JSONL (${at === undefined ? '' : `line ${at}: `}${wholeError.message})`);
    }
    records.push(recordOf(value, i + 1));
  }
  return { shape: 'jsonl', records };
}
