import { fstatSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { CliError } from './cli-error.js';
import { EMPTY_INPUT, firstBadByte, itemOfLine, parseWhole, type InputItem, type InputShape } from './input.js';

/** An input opened for reading, record by record. */
export interface OpenedInput {
  /**
   * The items in input order, read as they are taken (a JSONL input is never held whole). Taking
   * them may throw a `CliError`: an empty, unreadable or non-UTF-8 input, a single document that
   * is not a record, or a text that is neither JSON nor JSONL.
   */
  readonly items: AsyncIterable<InputItem>;
  /**
   * The layout: known before the first item when `eager` is off, else once the line after the
   * first record has been looked for (until then, and for an input never read, `array`).
   */
  shape(): InputShape;
  /** Bytes of the input read so far. */
  bytesRead(): number;
  /** The input's size in bytes when it is a regular file; undefined for a pipe. */
  readonly totalBytes?: number;
}

const READ_FAILURES: Record<string, string> = {
  ENOENT: 'no such file',
  EISDIR: 'is a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
};

const UTF16 = 'input: UTF-16 text (it starts with a UTF-16 byte order mark); convert it to UTF-8, e.g. with iconv -f UTF-16 -t UTF-8';

/** Where a sequence that starts at the end of `bytes` but is cut off begins; `bytes.length` when none is. */
function cutOffAt(bytes: Uint8Array): number {
  for (let k = bytes.length - 1; k >= Math.max(0, bytes.length - 4); k--) {
    const b = bytes[k];
    if ((b & 0xc0) === 0x80) continue; // a continuation byte: look further back for its lead
    const needed = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return k + needed > bytes.length ? k : bytes.length;
  }
  return bytes.length;
}

/**
 * The chunks as UTF-8 text, checked as they come (RFC 3629, no NUL bytes: see `firstBadByte`): a
 * byte that breaks UTF-8 is a `CliError` naming its offset in the whole input, and UTF-16 is named
 * as such; a leading byte order mark is dropped. A sequence split between chunks is decoded whole.
 * `counted` is told every chunk's size as it is read.
 */
async function* checkedText(chunks: AsyncIterable<Uint8Array>, counted: (bytes: number) => void): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8');
  let carry: Uint8Array = new Uint8Array(0);
  let base = 0; // offset of carry[0] in the whole input
  let started = false;
  for await (const chunk of chunks) {
    counted(chunk.length);
    const bytes = carry.length === 0 ? chunk : Buffer.concat([carry, chunk]);
    if (!started) {
      if (bytes.length < 2) {
        carry = Uint8Array.from(bytes);
        continue;
      }
      if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) throw new CliError(UTF16);
      started = true;
    }
    const split = cutOffAt(bytes);
    const whole = bytes.subarray(0, split);
    const bad = firstBadByte(whole);
    if (bad >= 0) throw notUtf8(whole, bad, base);
    carry = Uint8Array.from(bytes.subarray(split));
    base += split;
    if (whole.length > 0) yield decoder.decode(whole, { stream: true });
  }
  if (carry.length > 0) {
    const bad = firstBadByte(carry);
    if (bad >= 0) throw notUtf8(carry, bad, base);
    yield decoder.decode(carry, { stream: true });
  }
  const rest = decoder.decode();
  if (rest !== '') yield rest;
}

function notUtf8(bytes: Uint8Array, bad: number, base: number): CliError {
  const what = bytes[bad] === 0 ? 'a NUL byte (UTF-16 or binary data?)' : `byte 0x${bytes[bad].toString(16).padStart(2, '0')}`;
  return new CliError(`input: not UTF-8 text at byte ${base + bad}: ${what}; convert the file to UTF-8`);
}

/** The text split at each `\n` (a `\r` before it stays, for the parser to trim); the last line may be empty. */
async function* linesOf(texts: AsyncIterable<string>): AsyncGenerator<string> {
  let parts: string[] = [];
  for await (const text of texts) {
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      parts.push(text.slice(start, nl));
      yield parts.length === 1 ? parts[0] : parts.join('');
      parts = [];
      start = nl + 1;
    }
    if (start < text.length) parts.push(start === 0 ? text : text.slice(start));
  }
  yield parts.join('');
}

/** The bytes of the file, or of standard input for `undefined` or `-`, with read errors named. */
async function byteSource(file: string | undefined): Promise<{ chunks: AsyncIterable<Uint8Array>; totalBytes?: number }> {
  if (file === undefined || file === '-') {
    // Standard input redirected from a file (`< chats.jsonl`) has a size, for the progress line's time left.
    let totalBytes: number | undefined;
    try {
      const stat = fstatSync(0);
      if (stat.isFile()) totalBytes = stat.size;
    } catch {
      totalBytes = undefined;
    }
    return { chunks: named(process.stdin, 'standard input'), totalBytes };
  }
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (e) {
    throw readFailure(file, e);
  }
  const stat = await handle.stat();
  if (stat.isDirectory()) {
    await handle.close();
    throw new CliError(`cannot read ${file}: ${READ_FAILURES.EISDIR}`);
  }
  return { chunks: named(handle.createReadStream({ highWaterMark: 256 * 1024 }), file), totalBytes: stat.isFile() ? stat.size : undefined };
}

function readFailure(what: string, e: unknown): CliError {
  const code = (e as NodeJS.ErrnoException).code ?? '';
  return new CliError(`cannot read ${what}: ${READ_FAILURES[code] ?? (e as Error).message}`);
}

/** The stream's chunks as bytes; a read error is a `CliError` naming the source. */
async function* named(stream: AsyncIterable<unknown>, what: string): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of stream) yield typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Uint8Array);
  } catch (e) {
    throw readFailure(what, e);
  }
}

/**
 * Opens the input (FILE, or standard input for `undefined` and `-`; an unreadable file is a
 * `CliError` here) and reads it as `items` is taken. A first line that is JSON on its own is a
 * one-line document when nothing follows it, else the first record of JSONL, which is then read
 * and parsed a line at a time (memory bounded by the longest line). With `eager`, that first
 * record is given out before the next line is looked for (a one-line document and one JSONL
 * record are written alike unless indented), so a pipe that sends one record gets its answer
 * before it sends the next. A first line that is not JSON on its own is a document over several
 * lines (or JSONL broken on line 1): that input is read whole and parsed as before (`parseWhole`).
 */
export async function openInput(file: string | undefined, eager: boolean): Promise<OpenedInput> {
  const source = await byteSource(file);
  let read = 0;
  let shape: InputShape | undefined;
  const lines = linesOf(checkedText(source.chunks, (n) => { read += n; }));
  let number = 0;
  const nextFilled = async (): Promise<{ text: string; number: number } | undefined> => {
    for (;;) {
      const next = await lines.next();
      if (next.done) return undefined;
      number++;
      if (next.value.trim() !== '') return { text: next.value, number };
    }
  };
  async function* items(): AsyncGenerator<InputItem> {
    const first = await nextFilled();
    if (!first) throw new CliError(EMPTY_INPUT);
    try {
      JSON.parse(first.text);
    } catch {
      // Not JSON on its own: a document over several lines, read whole (its blank lines before it kept as line breaks).
      const parts = ['\n'.repeat(first.number - 1), first.text];
      for (let next = await lines.next(); !next.done; next = await lines.next()) parts.push('\n', next.value);
      const whole = parseWhole(parts.join(''));
      shape = whole.shape;
      yield* whole.items;
      return;
    }
    const firstItem = itemOfLine(first.text.trim(), first.number);
    if (eager) yield firstItem;
    const second = await nextFilled();
    if (!second) {
      shape = firstItem.record?.envelope ? 'object' : 'array';
      if (!eager) yield firstItem;
      return;
    }
    shape = 'jsonl';
    if (!eager) yield firstItem;
    yield itemOfLine(second.text.trim(), second.number);
    for (let next = await nextFilled(); next; next = await nextFilled()) yield itemOfLine(next.text.trim(), next.number);
  }
  return { items: items(), shape: () => shape ?? 'array', bytesRead: () => read, totalBytes: source.totalBytes };
}
