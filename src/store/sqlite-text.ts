/**
 * Reading TEXT columns through `node:sqlite` without losing characters. Node 22's `node:sqlite`
 * returns a text value only up to its first NUL character (U+0000), so `'a\0b'` would read back as
 * `'a'`; the bytes on disk are right. Reading the column as a BLOB and decoding its UTF-8 here
 * returns the whole string on every Node. The schema has no BLOB columns, so every byte array in
 * a row read this way is text.
 */

const utf8 = new TextDecoder();

/** The SELECT item reading TEXT `column` as its bytes, named `alias` (default: the column without its table prefix). */
export function textColumn(column: string, alias = column.replace(/^\w+\./, '')): string {
  return `CAST(${column} AS BLOB) AS ${alias}`;
}

/** `row` with each byte-array value (a column read by `textColumn`) decoded as UTF-8; other values unchanged; undefined stays undefined. */
export function decodeTexts<T>(row: Record<string, unknown> | undefined): T | undefined {
  if (row === undefined) return undefined;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) out[key] = value instanceof Uint8Array ? utf8.decode(value) : value;
  return out as T;
}
