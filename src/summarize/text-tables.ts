/**
 * Tables written as text in a tool's output: markdown pipe tables, comma- or tab-separated
 * values under a header line, and the column-aligned listings command-line tools print (a header
 * of column names, rows split where two or more spaces part the cells). Each is read as records
 * (one object per row, keyed by the header's names), so its cells are facts named by their column,
 * as those of a JSON listing are. Only the shape of a table is read, never what it is about. Pure.
 */

/** One piece of a text: prose as written, or a table read as records. */
export type TextPiece =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'table'; readonly records: Record<string, string | number>[] };

/** Fewest data rows a block needs under its header to be read as a table (a header and one row may be prose). */
const MIN_ROWS = 2;
/** Most columns a table may have to be read as one (wider is more likely not a table). */
const MAX_COLUMNS = 40;
/** Longest column name read as one (a longer "name" is a sentence). */
const MAX_NAME_CHARS = 40;

/** A column name: a word or two of letters, digits and the punctuation units and names use, beginning with a letter. */
const NAME = /^[\p{L}_][\p{L}\p{N}_.%()/#-]*(?: [\p{L}\p{N}_.%()/#-]+)?$/u;
/** A CSV column name: one word (a comma-separated line of prose has spaces in its parts). */
const CSV_NAME = /^[\p{L}_][\p{L}\p{N}_.%()/#-]*$/u;
/** A markdown table's separator line (`|---|:--:|`). */
const MD_SEPARATOR = /^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$/;
/** A plain number as a table prints it (`288`, `-0.5`, `3,071`): read as a number, so a cell is a fact on the same terms as a JSON number's. */
const PLAIN_NUMBER = /^-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$/;

/** The cells of a markdown row (`| a | b |` -> `a`, `b`). */
function pipeCells(line: string): string[] {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  return s.split(/(?<!\\)\|/).map((c) => c.trim());
}

/** The fields of one CSV line (double quotes group a field holding the separator; `""` is a quote). Undefined when a quote is left open. */
function csvCells(line: string, separator: string): string[] | undefined {
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"' && cell.trim() === '') {
      quoted = true;
      cell = '';
    } else if (c === separator) {
      cells.push(cell.trim());
      cell = '';
    } else cell += c;
  }
  if (quoted) return undefined;
  cells.push(cell.trim());
  return cells;
}

/** The cells of a column-aligned line, parted by runs of two or more spaces. */
function alignedCells(line: string): string[] {
  return line.trim().split(/ {2,}|\t+/);
}

/** A cell as a record's value: a plain number becomes a number (its grouping commas dropped), anything else stays as written. */
function cellValue(cell: string): string | number {
  if (!PLAIN_NUMBER.test(cell)) return cell;
  const n = Number(cell.replaceAll(',', ''));
  return Number.isFinite(n) && Math.abs(n) <= Number.MAX_SAFE_INTEGER ? n : cell;
}

/** Column names of a header: duplicates and blanks get their position so every cell keeps a key. */
function columnNames(header: readonly string[]): string[] {
  const seen = new Set<string>();
  return header.map((name, i) => {
    const key = name === '' || seen.has(name) ? `${name || 'column'}_${i + 1}` : name;
    seen.add(key);
    return key;
  });
}

function records(names: readonly string[], rows: readonly (readonly string[])[]): Record<string, string | number>[] {
  return rows.map((row) => {
    const record: Record<string, string | number> = {};
    names.forEach((name, i) => {
      const cell = row[i] ?? '';
      if (cell !== '') record[name] = cellValue(cell);
    });
    return record;
  });
}

/** Lines read from a header on: a table's records, or none when the lines are prose; `end` is the first line after them. */
interface Block {
  readonly records?: Record<string, string | number>[];
  readonly end: number;
}

const isNames = (cells: readonly string[], pattern: RegExp) =>
  cells.length >= 2 && cells.length <= MAX_COLUMNS && cells.every((c) => c.length <= MAX_NAME_CHARS && pattern.test(c));

/** A markdown table starting at `at` (header, separator, rows): its records and the line after it. */
function markdownAt(lines: readonly string[], at: number): Block | undefined {
  if (!lines[at].includes('|') || at + 1 >= lines.length || !MD_SEPARATOR.test(lines[at + 1])) return undefined;
  const header = pipeCells(lines[at]);
  if (header.length < 2 || header.length > MAX_COLUMNS || pipeCells(lines[at + 1]).length !== header.length) return undefined;
  const rows: string[][] = [];
  let end = at + 2;
  while (end < lines.length && lines[end].includes('|') && lines[end].trim() !== '') rows.push(pipeCells(lines[end++]));
  if (rows.length === 0) return undefined;
  return { records: records(columnNames(header), rows), end };
}

/** A block of separated values (CSV or TSV) starting at `at`: every line has the header's number of fields. */
function separatedAt(lines: readonly string[], at: number): Block | undefined {
  const line = lines[at];
  const separator = line.includes('\t') ? '\t' : line.includes(',') ? ',' : undefined;
  if (separator === undefined) return undefined;
  const header = csvCells(line, separator);
  if (!header || !isNames(header, CSV_NAME)) return undefined;
  const rows: string[][] = [];
  let end = at + 1;
  for (; end < lines.length; end++) {
    const cells = csvCells(lines[end], separator);
    if (!cells || cells.length !== header.length) break;
    rows.push(cells);
  }
  return dataBlock(header, rows, end);
}

/**
 * A block of rows under a header: a table when it has rows enough and each holds a digit (a list
 * of words is not a table of facts); else prose, and its lines are not read again as a header
 * (`records` undefined, `end` past them), so a long block is scanned once.
 */
function dataBlock(header: readonly string[], rows: readonly string[][], end: number): Block {
  if (rows.length < MIN_ROWS || !rows.every((r) => r.some((c) => /\d/.test(c)))) return { end };
  return { records: records(columnNames(header), rows), end };
}

/** A column-aligned listing starting at `at`: a header of names, then rows of as many cells (two or more spaces apart). */
function alignedAt(lines: readonly string[], at: number): Block | undefined {
  const line = lines[at];
  if (!/\S {2,}\S/.test(line)) return undefined;
  const header = alignedCells(line);
  if (header.length < 3 || !isNames(header, NAME)) return undefined;
  const rows: string[][] = [];
  let end = at + 1;
  for (; end < lines.length; end++) {
    const cells = alignedCells(lines[end]);
    if (cells.length !== header.length) break;
    rows.push(cells);
  }
  return dataBlock(header, rows, end);
}

/**
 * Splits a text into prose and the tables in it, in order. Invariant: every line of the text is
 * in exactly one piece, prose pieces hold their lines as written, and a text with no table is
 * one prose piece (the text itself).
 */
export function splitTextTables(text: string): TextPiece[] {
  if (!text.includes('\n')) return [{ kind: 'text', text }];
  const lines = text.split('\n');
  const pieces: TextPiece[] = [];
  let prose: string[] = [];
  const flush = () => {
    if (prose.length > 0) pieces.push({ kind: 'text', text: prose.join('\n') });
    prose = [];
  };
  for (let i = 0; i < lines.length; ) {
    const block = markdownAt(lines, i) ?? separatedAt(lines, i) ?? alignedAt(lines, i);
    if (block?.records) {
      flush();
      pieces.push({ kind: 'table', records: block.records });
      i = block.end;
    } else if (block) {
      while (i < block.end) prose.push(lines[i++]);
    } else prose.push(lines[i++]);
  }
  flush();
  return pieces.length === 0 ? [{ kind: 'text', text }] : pieces;
}
