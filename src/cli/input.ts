import { CliError } from './cli-error.js';
import { refuseDeepValues } from './deep-values.js';

/** How the input was laid out; the output takes the same layout. */
export type InputShape = 'array' | 'object' | 'jsonl';

/**
 * The fields a provider's request body keeps its message list in: `messages` (OpenAI Chat,
 * Anthropic, AI SDK, Qwen-Agent, Hermes), `contents` (Gemini), `input` (OpenAI Responses).
 */
export const LIST_FIELDS: readonly string[] = ['messages', 'contents', 'input'];

/** Fields of a request body that hold instructions outside the list (counted, never dropped). */
export const INSTRUCTION_FIELDS: readonly string[] = ['system', 'systemInstruction', 'instructions'];

/** One history to work on: a bare array of messages, or a request body carrying its list. */
export interface InputRecord {
  /** 1-based line of the input where the record starts; errors name it. */
  readonly line: number;
  /** The messages as given; the format's lens checks them before any use. */
  readonly messages: unknown;
  /** The field of the envelope that holds them (`messages`, `contents` or `input`). */
  readonly field: string;
  /** The object that carried the list (its other fields are kept); absent for a bare array. */
  readonly envelope?: Readonly<Record<string, unknown>>;
}

/** Where a record is, as error messages name it. */
export const whereOf = (record: InputRecord): string => `input line ${record.line}`;

/** Offset of the first byte that breaks UTF-8 (RFC 3629: no overlongs, no surrogates, up to U+10FFFF) or is a NUL; -1 when none does. */
export function firstBadByte(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    if (b === 0) return i;
    if (b < 0x80) {
      i++;
      continue;
    }
    let extra: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) extra = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      extra = 2;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      extra = 3;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return i;
    if (i + extra > bytes.length - 1) return i; // cut off at the end
    if (bytes[i + 1] < lo || bytes[i + 1] > hi) return i;
    for (let k = 2; k <= extra; k++) if ((bytes[i + k] & 0xc0) !== 0x80) return i;
    i += extra + 1;
  }
  return -1;
}

/** The record a parsed JSON value on `line` stands for; a `CliError` naming the line when it is not one. */
export function recordOf(value: unknown, line: number): InputRecord {
  const where = `input line ${line}`;
  if (Array.isArray(value)) {
    refuseDeepValues(value, where);
    return { line, messages: value, field: 'messages' };
  }
  if (value === null || typeof value !== 'object') {
    const got = value === null ? 'null' : typeof value;
    throw new CliError(`${where}: expected an array of messages or a request body with "messages", "contents" or "input", got ${got}`);
  }
  const envelope = value as Record<string, unknown>;
  const fields = LIST_FIELDS.filter((f) => Object.hasOwn(envelope, f));
  if (fields.length === 0) throw new CliError(`${where}: missing field "messages" (or "contents" for Gemini, "input" for OpenAI Responses): expected a list of messages`);
  if (fields.length > 1) throw new CliError(`${where}: the object has ${fields.map((f) => `"${f}"`).join(' and ')}; a request body has one message list`);
  const field = fields[0];
  if (field === 'input' && typeof envelope.input === 'string') {
    throw new CliError(`${where}: "input" is a string (one user message); give the list of input items to compress or validate`);
  }
  refuseDeepValues(envelope, where);
  return { line, messages: envelope[field], field, envelope };
}

/** 1-based line of the character at `offset`. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** True when `line` is a record on its own: a JSON array of messages, or an object with `messages`. */
function isRecordLine(line: string): boolean {
  if (line.trim() === '') return false;
  try {
    const v = JSON.parse(line) as unknown;
    return Array.isArray(v) || (typeof v === 'object' && v !== null && LIST_FIELDS.some((f) => Object.hasOwn(v, f)));
  } catch {
    return false;
  }
}

/** A JSON.parse message with its character position within one line written as a column. */
export function atColumn(message: string): string {
  return message.replace(/ in JSON at position (\d+)(?: \(line \d+ column \d+\))?/, (_, p: string) => ` at column ${Number(p) + 1}`);
}

/** A JSON.parse message about the whole text, its position written as line and column. */
function placed(text: string, error: Error): string {
  return error.message.replace(/ in JSON at position (\d+)(?: \(line \d+ column \d+\))?/, (_, p: string) => {
    const at = Number(p);
    const line = lineAt(text, at);
    const column = at - (text.lastIndexOf('\n', at - 1) + 1) + 1;
    return ` at line ${line}, column ${column}`;
  });
}

/** One item of the input: a record, or the error that keeps a line from being one (the run goes on with the next). */
export type InputItem =
  | { readonly record: InputRecord; readonly error?: undefined }
  | { readonly line: number; readonly error: CliError; readonly record?: undefined };

/** One JSONL line as an item: its record, or the error naming the line and the rule it breaks. */
export function itemOfLine(text: string, line: number): InputItem {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { line, error: new CliError(`input line ${line}: not valid JSON (${atColumn((e as Error).message)})`) };
  }
  try {
    return { record: recordOf(value, line) };
  } catch (e) {
    if (e instanceof CliError) return { line, error: e };
    throw e;
  }
}

/**
 * The layout and items of a whole input text: the text as one JSON value first (an array of
 * messages, or an object with `messages`); if it does not parse, JSONL with one such value a line,
 * blank lines skipped, each line that is not a record an error item naming it. Throws a `CliError`
 * when the text is empty, when one document is not a record, or when it is neither JSON nor JSONL.
 * The streaming reader hands a text here only when its first line is not JSON on its own.
 */
export function parseWhole(raw: string): { readonly shape: InputShape; readonly items: readonly InputItem[] } {
  const text = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
  if (text.trim() === '') throw new CliError(EMPTY_INPUT);
  let whole: unknown;
  let wholeError: Error;
  try {
    whole = JSON.parse(text);
    const line = lineAt(text, text.search(/\S/));
    const record = recordOf(whole, line);
    return { shape: record.envelope ? 'object' : 'array', items: [{ record }] };
  } catch (e) {
    if (e instanceof CliError) throw e;
    wholeError = e as Error;
  }

  const lines = text.split('\n');
  const items: InputItem[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    const item = itemOfLine(line, i + 1);
    // JSONL when an earlier line was a record, or a later line is one on its own: this line's
    // own error, at its own column. Otherwise the text was one JSON document: its error, placed.
    if (item.error && items.length === 0 && !lines.slice(i + 1).some((l) => isRecordLine(l))) {
      throw new CliError(`input: not valid JSON (${placed(text, wholeError)})`);
    }
    items.push(item);
  }
  return { shape: 'jsonl', items };
}

/** The error for an input with nothing in it. */
export const EMPTY_INPUT = 'input: empty (expected a JSON array of messages, an object with "messages", or JSONL)';
