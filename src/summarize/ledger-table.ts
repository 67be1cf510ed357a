/**
 * The table form of a ledger line: the facts of one source whose keys repeat (the records of a
 * listing) written with each key once, as columns, and each record as a row of values.
 *
 *     - [list_orders @12] order_id|total|placed_at: ORD-1 "12.50 EUR" 2024-06-01; ORD-2 "" 2024-06-02
 *
 * The columns are the keys in the order they first occur, joined by `|` and ended by `: `. Rows
 * are separated by `; `, cells by a space. A cell is the value bare when it holds no space or `;`
 * and does not start with `"`, else a JSON string; `""` is a cell the row has no value for. Each
 * row is one record (`LineItem.record`; an item without one is a row of its own), so a row never
 * puts one record's value beside another's; rows come in the order their records first occur.
 * Read back, the items come row by row in column order, each with its row as its record. Pure.
 */

/** One fact of a line: its key as the block writes it, its value, and the record (row) it belongs to. */
export interface LineItem {
  readonly key: string;
  readonly value: string;
  readonly record?: string;
}

/** A key a column can hold: none of the characters that delimit the table or a ledger line. */
const COLUMN_KEY = /^[^\s=":;|[\]]+$/;
/** The start of a table: its columns and the `: ` that ends them. */
const COLUMNS = /^([^\s=":;|[\]]+(?:\|[^\s=":;|[\]]+)*): /;

/** A value as a cell writes it: bare when it holds no space or `;` and does not start with `"`, else a JSON string. */
export function cellValue(value: string): string {
  return /[\s;]/.test(value) || value.startsWith('"') ? JSON.stringify(value) : value;
}

/** True when the items can be written as a table: some key repeats, and every key can be a column. */
export function fitsTable(items: readonly LineItem[]): boolean {
  const keys = new Set<string>();
  let repeats = false;
  for (const { key } of items) {
    if (!COLUMN_KEY.test(key)) return false;
    if (keys.has(key)) repeats = true;
    keys.add(key);
  }
  return repeats;
}

/**
 * The items grouped by record, records in the order they first occur, each record's items in
 * their order; an item without a record is a record of its own.
 */
export function byRecords<T extends { readonly record?: string }>(items: readonly T[]): T[][] {
  const records = new Map<string | number, T[]>();
  items.forEach((item, i) => {
    const id = item.record ?? i;
    const members = records.get(id);
    if (members) members.push(item);
    else records.set(id, [item]);
  });
  return [...records.values()];
}

/**
 * The items as a table (the line's text after its header), one row per record; undefined when a
 * record holds a key twice (two values for one cell: the items are written as such then). The
 * caller checks `fitsTable` first.
 */
export function writeTable(items: readonly LineItem[]): string | undefined {
  const records = byRecords(items);
  const columns: string[] = [];
  const column = new Map<string, number>();
  for (const members of records) {
    for (const { key } of members) {
      if (!column.has(key)) {
        column.set(key, columns.length);
        columns.push(key);
      }
    }
  }
  const rows: string[] = [];
  for (const members of records) {
    const row: (string | undefined)[] = columns.map(() => undefined);
    for (const { key, value } of members) {
      const at = column.get(key)!;
      if (row[at] !== undefined) return undefined;
      row[at] = cellValue(value);
    }
    rows.push(row.map((cell) => cell ?? '""').join(' '));
  }
  return `${columns.join('|')}: ${rows.join('; ')}`;
}

/** Reads a JSON string starting at `at`: its value and where it ends, or undefined when it does not read. */
export function readJsonString(text: string, at: number): { value: string; end: number } | undefined {
  let end = at + 1;
  while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
  if (end >= text.length) return undefined;
  try {
    const value = JSON.parse(text.slice(at, end + 1)) as unknown;
    return typeof value === 'string' ? { value, end: end + 1 } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The items of a table line's text, row by row, each row in column order, without its empty
 * cells, each with its row's number as its record. Undefined when the text is not a table: no columns, a row with another number of cells
 * than there are columns, a row with no value, or a cell that does not read.
 */
export function readTable(text: string): LineItem[] | undefined {
  const head = COLUMNS.exec(text);
  if (!head) return undefined;
  const columns = head[1].split('|');
  if (new Set(columns).size !== columns.length) return undefined;
  const items: LineItem[] = [];
  let row = 0;
  let at = head[0].length;
  while (at < text.length) {
    const cells: (string | undefined)[] = [];
    let rowEnds = false;
    while (!rowEnds) {
      if (at >= text.length) return undefined;
      let cell: string | undefined;
      if (text[at] === '"') {
        const read = readJsonString(text, at);
        if (!read) return undefined;
        cell = read.value === '' ? undefined : read.value;
        at = read.end;
        if (text[at] === ';') {
          rowEnds = true;
          at++;
        }
      } else {
        const space = text.indexOf(' ', at);
        const stop = space < 0 ? text.length : space;
        let token = text.slice(at, stop);
        at = stop;
        if (token.endsWith(';')) {
          rowEnds = true;
          token = token.slice(0, -1);
        }
        if (token === '' || token.includes(';')) return undefined;
        cell = token;
      }
      cells.push(cell);
      if (at >= text.length) rowEnds = true;
      else if (text[at] !== ' ') return undefined;
      else at++;
    }
    if (cells.length !== columns.length || cells.every((c) => c === undefined)) return undefined;
    const record = String(row++);
    cells.forEach((value, i) => {
      if (value !== undefined) items.push({ key: columns[i], value, record });
    });
  }
  return items.length > 0 ? items : undefined;
}
