import { memberSpan } from './json-span.js';

/**
 * The `<tool_call>` and `<tool_response>` blocks of Hermes text, read and written exactly as the
 * Qwen chat templates and Qwen-Agent's Nous prompt lay them out:
 * `<tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>` in assistant text, and
 * `<tool_response>\n...\n</tool_response>` blocks joined by newlines in one user message. A block
 * that is not well formed is an error naming its character offset: nothing is guessed.
 */

/** The tags around a call in assistant text. */
export const CALL_OPEN = '<tool_call>';
/** Closes a `<tool_call>` block; the first one after the opening tag ends the block. */
export const CALL_CLOSE = '</tool_call>';
/** The tags around a result in user text. */
export const RESPONSE_OPEN = '<tool_response>';
/** Closes a `<tool_response>` block; the first one after the opening tag ends the block. */
export const RESPONSE_CLOSE = '</tool_response>';

/** One `<tool_call>` block: where it is in the text, and the call it makes. */
export interface CallBlock {
  /** Span of the whole block, tags included. */
  readonly start: number;
  readonly end: number;
  readonly name: string;
  /** The arguments as written: an object's JSON text, or the content of a JSON string; '' when absent. */
  readonly arguments: string;
}

/** One `<tool_response>` block: where it is in the text and where its result text is. */
export interface ResponseBlock {
  readonly start: number;
  readonly end: number;
  /** Span of the result text: inside the tags, without the one newline after the opening tag and before the closing one. */
  readonly innerStart: number;
  readonly innerEnd: number;
  readonly content: string;
}

/** A block that is not well formed: where it opens and what is wrong. */
export interface BlockError {
  readonly offset: number;
  readonly why: string;
}

/** The blocks of a text and the text outside them (separators included), in order. */
export interface Blocks<B> {
  readonly blocks: readonly B[];
  readonly outside: string;
}

/** Finds every `open ... close` block; the first `close` after an `open` ends it, and no `open` may come before it. */
function spans(text: string, open: string, close: string): { start: number; end: number }[] | BlockError {
  const out: { start: number; end: number }[] = [];
  let at = text.indexOf(open);
  while (at >= 0) {
    const closeAt = text.indexOf(close, at + open.length);
    if (closeAt < 0) return { offset: at, why: `${open} is opened and never closed with ${close}` };
    const inner = text.indexOf(open, at + open.length);
    if (inner >= 0 && inner < closeAt) return { offset: at, why: `another ${open} opens at character ${inner} before this one is closed` };
    out.push({ start: at, end: closeAt + close.length });
    at = text.indexOf(open, closeAt + close.length);
  }
  return out;
}

function outsideOf(text: string, blocks: readonly { start: number; end: number }[]): string {
  if (blocks.length === 0) return text;
  let out = text.slice(0, blocks[0].start);
  for (let k = 0; k < blocks.length; k++) out += text.slice(blocks[k].end, k + 1 < blocks.length ? blocks[k + 1].start : text.length);
  return out;
}

/** The arguments text of a call object: an object's (or array's, number's...) JSON text as written; a string's content. */
function argumentsText(json: string): string {
  const span = memberSpan(json, 'arguments');
  if (span === undefined) return '';
  const raw = json.slice(span.start, span.end);
  return raw.startsWith('"') ? (JSON.parse(raw) as string) : raw;
}

/** The `<tool_call>` blocks of assistant text, or the first block that is not a JSON object with a string `name`. */
export function readCallBlocks(text: string): Blocks<CallBlock> | BlockError {
  if (!text.includes(CALL_OPEN)) return { blocks: [], outside: text };
  const found = spans(text, CALL_OPEN, CALL_CLOSE);
  if (!Array.isArray(found)) return found;
  const blocks: CallBlock[] = [];
  for (const { start, end } of found) {
    const json = text.slice(start + CALL_OPEN.length, end - CALL_CLOSE.length).trim();
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch (e) {
      return { offset: start, why: `its JSON does not parse (${e instanceof Error ? e.message : String(e)})` };
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return { offset: start, why: `it holds ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}, not a JSON object {"name": ..., "arguments": ...}` };
    const name = (value as { name?: unknown }).name;
    if (typeof name !== 'string' || name === '') return { offset: start, why: `its JSON has no "name" string (got ${name === undefined ? 'no name' : JSON.stringify(name)})` };
    blocks.push({ start, end, name, arguments: argumentsText(json) });
  }
  return { blocks, outside: outsideOf(text, found) };
}

/**
 * The `<tool_response>` blocks that lead user text (only whitespace before and between them, as
 * the templates write a tool turn), or the first of them opened and not closed. A tag after the
 * user's words is their text, quoted: never a result, never an error.
 */
export function readResponseBlocks(text: string): Blocks<ResponseBlock> | BlockError {
  if (!text.includes(RESPONSE_OPEN)) return { blocks: [], outside: text };
  const found: { start: number; end: number }[] = [];
  for (let at = 0; ;) {
    let start = at;
    while (start < text.length && isSpace(text.charCodeAt(start))) start++;
    if (!text.startsWith(RESPONSE_OPEN, start)) break;
    const closeAt = text.indexOf(RESPONSE_CLOSE, start + RESPONSE_OPEN.length);
    if (closeAt < 0) return { offset: start, why: `${RESPONSE_OPEN} is opened and never closed with ${RESPONSE_CLOSE}` };
    const inner = text.indexOf(RESPONSE_OPEN, start + RESPONSE_OPEN.length);
    if (inner >= 0 && inner < closeAt) return { offset: start, why: `another ${RESPONSE_OPEN} opens at character ${inner} before this one is closed` };
    at = closeAt + RESPONSE_CLOSE.length;
    found.push({ start, end: at });
  }
  const blocks = found.map(({ start, end }) => {
    let innerStart = start + RESPONSE_OPEN.length;
    let innerEnd = end - RESPONSE_CLOSE.length;
    if (text[innerStart] === '\n' && innerStart < innerEnd) innerStart++;
    if (text[innerEnd - 1] === '\n' && innerEnd > innerStart) innerEnd--;
    return { start, end, innerStart, innerEnd, content: text.slice(innerStart, innerEnd) };
  });
  return { blocks, outside: outsideOf(text, found) };
}

/** Space, tab, newline, carriage return, form feed. */
const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13);

/** True when `value` is a block error rather than blocks. */
export function isBlockError<B>(value: Blocks<B> | BlockError): value is BlockError {
  return (value as BlockError).why !== undefined;
}

/**
 * The JSON text a call's arguments take in a block: arguments that are JSON (other than a string
 * literal) go in exactly as written, anything else as a JSON string, so reading the block gives
 * the same arguments text back. A closing or opening tag inside is escaped so the block stays one block.
 */
function argumentsJson(args: string): string {
  let json = JSON.stringify(args);
  try {
    if (args.trim() !== '' && !args.trimStart().startsWith('"')) {
      JSON.parse(args);
      json = args;
    }
  } catch {
    // not JSON: written as a string
  }
  return json.replaceAll(CALL_CLOSE, '<\\/tool_call>').replaceAll(CALL_OPEN, '\\u003ctool_call>');
}

/** A `<tool_call>` block for a call, laid out as the Qwen chat template writes it. */
export function callBlock(name: string, args: string): string {
  return `${CALL_OPEN}\n{"name": ${JSON.stringify(name)}, "arguments": ${argumentsJson(args)}}\n${CALL_CLOSE}`;
}

/** A `<tool_response>` block for a result text, laid out as the Qwen chat template writes it. */
export function responseBlock(content: string): string {
  return `${RESPONSE_OPEN}\n${content}\n${RESPONSE_CLOSE}`;
}
