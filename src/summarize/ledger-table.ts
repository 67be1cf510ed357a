/**
 * The table form of a ledger line: the facts of one source whose keys repeat (the records of a
 * listing) written with each key once, as columns, and each record as a row of values.
 *
 *     - [list_orders @12] order_id|placed_at|total (EUR): ORD-1 2024-06-01 12.5; ORD-2 2024-06-02; ORD-3 "" 7
 *
 * The columns are the keys, those more records hold first (then in the order they first occur),
 * joined by `|` and ended by `: `. A column whose values are all a number joined with one same
 * unit a field gave it (`{ total: 12.5, currency: "EUR" }`; `unitFromField`) names the unit once,
 * after its key (`total (EUR)`), and its cells hold the numbers; a value a text wrote whole
 * (`"4.37 s"`) stays whole. Rows are separated by `; `, cells by a space. A cell is the value
 * bare when it holds no space or `;` and does not start with `"`, else a JSON string; `""` is a
 * cell the row has no value for, and a row ends at its last value (the cells after it are empty).
 * Each row is one record (`LineItem.record`; an item without one is a row of its own), so a row
 * never puts one record's value beside another's; rows come in the order their records first
 * occur. Read back, the items come row by row in column order, each with its row as its record.
 * Pure.
 */

/** One fact of a line: its key as the block writes it, its value, and the record (row) it belongs to. */
export interface LineItem {
  readonly key: string;
  readonly value: string;
  readonly record?: string;
  /** The value joins a number and the unit a sibling field gave it (`Fact.unitFromField`): its column may name the unit once. */
  readonly unitFromField?: boolean;
}

/** A key's characters: none of those that delimit the table or a ledger line. */
const KEY = String.raw`[^\s=":;|[\]]+`;
/** A unit a column's head names: no digit, space or delimiter of the head. */
const UNIT = String.raw`[^\s\d"():;=|[\]]+`;
/** The number of a value with a unit. */
const NUMBER = String.raw`[-+]?\d[\d.,]*`;
/** A column as the table's head writes it: its key, and the unit its values share, if they share one. */
const COLUMN_SPEC = `${KEY}(?: \\(${UNIT}\\))?`;
/** A key a column can hold. */
const COLUMN_KEY = new RegExp(`^${KEY}$`);
/** One column of the head: its key and its unit. */
const COLUMN = new RegExp(`^(${KEY})(?: \\((${UNIT})\\))?$`);
/** The start of a table: its columns and the `: ` that ends them. */
const COLUMNS = new RegExp(`^(${COLUMN_SPEC}(?:\\|${COLUMN_SPEC})*): `);
/** A value a unit column holds: a number, a space and the unit. */
const NUMBER_WITH_UNIT = new RegExp(`^(${NUMBER}) (${UNIT})$`);
/** A unit column's cell: the number of a `NUMBER_WITH_UNIT` value. */
const UNIT_CELL = new RegExp(`^${NUMBER}$`);

/** The number and unit of a value joined from a number and the unit a field gave it (`unitFromField`); null for any other value. */
function fieldUnitParts(value: string, unitFromField: boolean | undefined): RegExpExecArray | null {
  return unitFromField ? NUMBER_WITH_UNIT.exec(value) : null;
}

/** A value as a cell writes it: bare when it holds no space or `;` and does not start with `"`, else a JSON string. */
function cellValue(value: string): string {
  return /[\s;]/.test(value) || value.startsWith('"') ? JSON.stringify(value) : value;
}

/**
 * A value as a cell most likely writes it, for pricing before the table is written: the number
 * alone for a number joined with the unit a field gave it (its column names the unit once when
 * the others share it), else `cellValue`.
 */
export function likelyCell(value: string, unitFromField: boolean): string {
  const m = fieldUnitParts(value, unitFromField);
  return m ? m[1] : cellValue(value);
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
 * The unit every value of a column states after its number (`12.50 EUR`, `7 EUR`: `EUR`), when at
 * least two values share it, each joined from a number and a unit field (`unitFromField`: a value
 * a text wrote whole stays whole), and none holds anything else; written once in the column's head.
 */
function sharedUnit(values: readonly LineItem[]): string | undefined {
  let unit: string | undefined;
  for (const { value, unitFromField } of values) {
    const m = fieldUnitParts(value, unitFromField);
    if (!m || (unit !== undefined && m[2] !== unit)) return undefined;
    unit = m[2];
  }
  return values.length >= 2 ? unit : undefined;
}

/**
 * The items as a table (the line's text after its header), one row per record; undefined when a
 * record holds a key twice (two values for one cell: the items are written as such then). The
 * caller checks `fitsTable` first.
 */
export function writeTable(items: readonly LineItem[]): string | undefined {
  const records = byRecords(items);
  const keys: string[] = [];
  const values = new Map<string, LineItem[]>();
  for (const members of records) {
    const seen = new Set<string>();
    for (const item of members) {
      if (seen.has(item.key)) return undefined;
      seen.add(item.key);
      const list = values.get(item.key);
      if (list) list.push(item);
      else {
        keys.push(item.key);
        values.set(item.key, [item]);
      }
    }
  }
  // Columns more records fill first, so a record that lacks the rarer ones ends its row early.
  const columns = keys.map((key, first) => ({ key, first, filled: values.get(key)!.length, unit: sharedUnit(values.get(key)!) }))
    .sort((a, b) => b.filled - a.filled || a.first - b.first);
  const column = new Map(columns.map((c, at) => [c.key, at]));
  const rows: string[] = [];
  for (const members of records) {
    const row: (string | undefined)[] = columns.map(() => undefined);
    for (const { key, value } of members) {
      const at = column.get(key)!;
      const unit = columns[at].unit;
      row[at] = cellValue(unit === undefined ? value : value.slice(0, value.length - unit.length - 1));
    }
    let last = row.length;
    while (last > 0 && row[last - 1] === undefined) last--;
    rows.push(row.slice(0, last).map((cell) => cell ?? '""').join(' '));
  }
  return `${columns.map((c) => (c.unit === undefined ? c.key : `${c.key} (${c.unit})`)).join('|')}: ${rows.join('; ')}`;
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
 * cells, each with its row's number as its record (a unit column's numbers with their unit, as
 * values joined from a unit field). A row may end in empty cells (as earlier versions wrote every
 * row in full). Undefined when the text is not a table: no columns, a row with more cells than
 * there are columns or with no value, a cell that does not read, or a unit column's cell that is
 * not a number.
 */
export function readTable(text: string): LineItem[] | undefined {
  const head = COLUMNS.exec(text);
  if (!head) return undefined;
  const columns = head[1].split('|').map((spec) => {
    const m = COLUMN.exec(spec)!;
    return { key: m[1], unit: m[2] };
  });
  if (new Set(columns.map((c) => c.key)).size !== columns.length) return undefined;
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
    if (cells.length > columns.length || cells.every((c) => c === undefined)) return undefined;
    const record = String(row++);
    for (const [i, value] of cells.entries()) {
      if (value === undefined) continue;
      const { key, unit } = columns[i];
      if (unit !== undefined && !UNIT_CELL.test(value)) return undefined;
      items.push(unit === undefined ? { key, value, record } : { key, value: `${value} ${unit}`, record, unitFromField: true });
    }
  }
  return items.length > 0 ? items : undefined;
}
