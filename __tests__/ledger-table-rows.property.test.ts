import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import type { TranscriptEntry } from '../src/formats/lens.js';
import { emptyLedger, extendLedger, parseLedger, renderLedger } from '../src/summarize/ledger.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { propertyParams } from './helpers/property-runs.js';

/**
 * A listing written as a table must keep each record on its row: a row that puts one record's
 * id beside another record's date or amount tells the model something false. The listings here
 * have records that lack some fields, and values an earlier message already stated (the ledger
 * keeps one fact per value, so a record may lose a cell or the fact may move to the listing's
 * line). The rows are read back with a reader written here (not the project's `readTable`).
 */
const count = createTokenCounter().text;
const call = (id: string, name: string, args: unknown): TranscriptEntry => ({ role: 'assistant', text: '', calls: [{ id, name, arguments: JSON.stringify(args) }], results: [] });
const result = (id: string, name: string, content: unknown): TranscriptEntry => ({ role: 'tool', text: '', calls: [], results: [{ id, name, content: JSON.stringify(content) }] });

/**
 * The cells of a table line's rows: `cols: a b "c d"; "" e` -> [["a","b","c d"], ["","e"]] (a row
 * may end before its last columns). A column written `key (UNIT)` holds numbers whose unit is
 * UNIT: its cells read back with it (`total (EUR): 12.50` -> `12.50 EUR`).
 */
function rowsOf(line: string): { columns: string[]; rows: string[][] } | undefined {
  const head = /^- \[[^\]]*\] ([^\s:|]+(?: \([^\s()]+\))?(?:\|[^\s:|]+(?: \([^\s()]+\))?)+): (.*)$/.exec(line);
  if (!head) return undefined;
  const specs = head[1].split('|').map((spec) => /^(\S+)(?: \((\S+)\))?$/.exec(spec)!);
  const rows: string[][] = [[]];
  const body = head[2];
  let i = 0;
  while (i < body.length) {
    if (body[i] === ' ') { i++; continue; }
    if (body[i] === ';') { rows.push([]); i++; continue; }
    let cell: string;
    if (body[i] === '"') {
      let j = i + 1;
      while (body[j] !== '"') j += body[j] === '\\' ? 2 : 1;
      cell = JSON.parse(body.slice(i, j + 1)) as string;
      i = j + 1;
    } else {
      let j = i;
      while (j < body.length && body[j] !== ' ' && body[j] !== ';') j++;
      cell = body.slice(i, j);
      i = j;
    }
    const row = rows[rows.length - 1];
    const unit = specs[row.length]?.[2];
    row.push(unit !== undefined && cell !== '' ? `${cell} ${unit}` : cell);
  }
  return { columns: specs.map((m) => m[1]), rows };
}

const FIELDS = ['ref_id', 'created', 'amount', 'card_last4'] as const;
const recordArb = fc.record({
  ref: fc.integer({ min: 1000, max: 9999 }),
  day: fc.integer({ min: 1, max: 28 }),
  amount: fc.integer({ min: 100, max: 99_999 }),
  last4: fc.integer({ min: 1000, max: 9999 }),
  missing: fc.subarray([...FIELDS], { maxLength: 2 }),
});

/** The values of an items line, in order: `key=value`, `key="a b"` or a bare value. */
function itemValues(line: string): string[] | undefined {
  const head = /^- \[[^\]]*\] (.*)$/.exec(line);
  if (!head || /^[^\s:=|]+(?: \([^\s()]+\))?(?:\|[^\s:=|]+(?: \([^\s()]+\))?)+: /.test(head[1])) return undefined;
  const out: string[] = [];
  const body = head[1];
  let i = 0;
  while (i < body.length) {
    if (body[i] === ' ') { i++; continue; }
    let j = i;
    while (j < body.length && body[j] !== '=' && body[j] !== ' ' && body[j] !== '"') j++;
    if (body[j] === '=') i = j + 1;
    if (body[i] === '"') {
      let k = i + 1;
      while (body[k] !== '"') k += body[k] === '\\' ? 2 : 1;
      out.push(JSON.parse(body.slice(i, k + 1)) as string);
      i = k + 1;
    } else {
      let k = i;
      while (k < body.length && body[k] !== ' ') k++;
      out.push(body.slice(i, k));
      i = k;
    }
  }
  return out;
}

/**
 * True when `values` can be cut into consecutive runs, each made of values of one record (each of
 * its values at most once), no record having two runs.
 */
function splitsIntoRecords(values: readonly string[], records: readonly Record<string, string>[]): boolean {
  const fits = (run: readonly string[], record: Record<string, string>) => {
    const left = Object.values(record);
    for (const v of run) {
      const at = left.indexOf(v);
      if (at < 0) return false;
      left.splice(at, 1);
    }
    return true;
  };
  const from = (start: number, used: ReadonlySet<number>): boolean => {
    if (start === values.length) return true;
    for (let end = start + 1; end <= values.length; end++) {
      const run = values.slice(start, end);
      if (!records.some((r) => fits(run, r))) break;
      for (let k = 0; k < records.length; k++) if (!used.has(k) && fits(run, records[k]) && from(end, new Set([...used, k]))) return true;
    }
    return false;
  };
  return from(0, new Set());
}

describe('ledger tables keep each record on its row', () => {
  test('every row of a listing holds values of one record only; written as items, a record\'s values stand together', () => {
    let tables = 0;
    let items = 0;
    let unitHeads = 0;
    fc.assert(fc.property(fc.array(recordArb, { minLength: 3, maxLength: 12 }), fc.array(fc.nat(), { maxLength: 5 }), fc.boolean(), fc.boolean(), (drawn, echoed, coded, split) => {
      const records = drawn.map((r, k) => {
        const full: Record<string, string> = { ref_id: `R-${r.ref}${k}`, created: `2024-0${1 + (r.day % 9)}-${String(r.day).padStart(2, '0')}`, amount: `${r.amount}.${k % 10}5 CAD`, card_last4: `${r.last4}` };
        for (const m of r.missing) delete full[m];
        // Two codes under one key in a record (a list of values): the line is written as items.
        if (coded && k % 2 === 0) Object.assign(full, { code_a: `QX${k}A`, code_b: `QX${k}B` });
        return full;
      });
      // The amount as the tool wrote it: one text (`"123.45 CAD"`), or a number and its currency in fields.
      const payload = records.map(({ code_a, code_b, ...fields }) => {
        const { amount, ...rest } = fields;
        const written = amount === undefined ? rest : split ? { ...rest, amount: { value: Number(amount.split(' ')[0]), currency: 'CAD' } } : fields;
        return code_a === undefined ? written : { ...written, codes: [code_a, code_b] };
      });
      // An earlier message states some of the listing's values already (a date, an amount...).
      const earlier = echoed.map((e) => Object.values(records[e % records.length])[e % 3]).filter((v): v is string => v !== undefined);
      // Stated in a tool's fields (the fact stays there) or in the user's words (named by its shape
      // only: the listing's field names it better, and the fact moves to the listing's line).
      const said: TranscriptEntry = { role: 'user', text: `Earlier I saw ${earlier.slice(0, 2).join(' and ')} somewhere.`, calls: [], results: [] };
      const entries = [said, call('c0', 'lookup', { q: 'x' }), result('c0', 'lookup', { notes: earlier.slice(2).map((v, i) => ({ [`${FIELDS[i % 4]}`]: v })) }), call('c1', 'list_payments', { page: 1 }), result('c1', 'list_payments', { payments: payload })];
      const block = renderLedger(extendLedger(emptyLedger(), entries), 100_000, count);
      for (const line of block.split('\n')) {
        if (!line.includes('list_payments')) continue;
        const values = itemValues(line);
        if (values) {
          // Written as items: each record's values side by side.
          items++;
          // The values split into runs, one per record, each run holding values of its record only
          // (records may share a value, so which record a value is of is found by the split).
          const listed = values.filter((v) => records.some((r) => Object.values(r).includes(v)));
          expect({ values, oneRunPerRecord: splitsIntoRecords(listed, records) }).toEqual({ values, oneRunPerRecord: true });
        }
        const table = rowsOf(line);
        if (!table) continue;
        tables++;
        // A currency a field gave is named once, in the column's head; an amount written whole stays whole.
        if (/ \(CAD\)[|:]/.test(line)) unitHeads++;
        if (!split) expect({ line, unitHead: / \(CAD\)[|:]/.test(line) }).toEqual({ line, unitHead: false });
        for (const row of table.rows) {
          const values = row.filter((c) => c !== '');
          const owners = records.filter((r) => values.every((v) => Object.values(r).includes(v)));
          expect({ row, owners: owners.length > 0 }).toEqual({ row, owners: true });
        }
      }
      // And the block reads back as the same facts.
      expect(renderLedger(parseLedger(block), 100_000, count)).toBe(block);
    }), propertyParams());
    expect(tables).toBeGreaterThan(0);
    expect(items).toBeGreaterThan(0);
    // The amounts share their currency: tables of amounts given in fields name it once, in the column's head.
    expect(unitHeads).toBeGreaterThan(0);
  });
});

describe('a listing\'s record keeps the values it shares with other records', () => {
  // Dates, amounts and short numbers that name nothing alone repeat across records by chance
  // (two payments on one day). Each record keeps its own: a row never loses a value because
  // another record, or an earlier result under another field, held the same one. And a listing
  // restating such a value is not a mention of the earlier fact (its rank does not rise by chance).
  const DAYS = ['2024-03-01', '2024-03-02', '2024-03-03'];
  const AMOUNTS = ['12.50 CAD', '99 CAD', '7.25 CAD'];
  const sharedArb = fc.record({
    day: fc.nat({ max: 2 }),
    amount: fc.nat({ max: 2 }),
    last4: fc.constantFrom('1111', '2222'),
    missing: fc.subarray(['created', 'amount', 'card_last4'], { maxLength: 1 }),
  });

  test('every record\'s row (or run of items) holds all of its values; earlier facts are not mentioned by the listing', () => {
    fc.assert(fc.property(fc.array(sharedArb, { minLength: 2, maxLength: 10 }), fc.nat({ max: 2 }), (drawn, echo) => {
      const records = drawn.map((r, k) => {
        const full: Record<string, string> = { ref_id: `R-${5000 + k}`, created: DAYS[r.day], amount: AMOUNTS[r.amount], card_last4: r.last4 };
        for (const m of r.missing) delete full[m];
        return full;
      });
      const earlier = result('c0', 'lookup', { due: DAYS[echo], balance: AMOUNTS[echo] });
      const entries = [call('c0', 'lookup', { q: 'x' }), earlier, call('c1', 'list_payments', { page: 1 }), result('c1', 'list_payments', { payments: records })];
      const ledger = extendLedger(emptyLedger(), entries);
      expect(ledger.facts.filter((f) => f.source === 'lookup @2').map((f) => [f.value, f.references])).toEqual([[DAYS[echo], 0], [AMOUNTS[echo], 0]]);
      const block = renderLedger(ledger, 100_000, count);
      const line = block.split('\n').find((l) => l.includes('list_payments @4'));
      expect(line).toBeDefined();
      const table = rowsOf(line!);
      const groups = table
        ? table.rows.map((row) => row.filter((c) => c !== ''))
        : (itemValues(line!) ?? []).reduce<string[][]>((runs, v) => (v.startsWith('R-') ? [...runs, [v]] : (runs.length > 0 ? [...runs.slice(0, -1), [...runs[runs.length - 1], v]] : [[v]])), []);
      for (const record of records) {
        const group = groups.find((g) => g.includes(record.ref_id));
        expect({ record, group: group && [...group].sort() }).toEqual({ record, group: Object.values(record).sort() });
      }
      expect(renderLedger(parseLedger(block), 100_000, count)).toBe(block);
    }), propertyParams());
  });
});

describe('a record fetched again is the same record', () => {
  // A record read once (alone, or as a row of a listing), then read again later with some of its
  // fields changed. Its id is one fact wherever it occurs, filed where it was first read; the values
  // that did not change are that record's facts again, so they stay beside the id, not on a line of
  // their own that does not say which record they belong to.
  const fetchedArb = fc.record({
    rows: fc.array(fc.record({ day: fc.integer({ min: 1, max: 28 }), amount: fc.integer({ min: 100, max: 9999 }), last4: fc.integer({ min: 1000, max: 9999 }) }), { minLength: 1, maxLength: 6 }),
    changed: fc.array(fc.constantFrom('created', 'amount', 'card_last4'), { maxLength: 2 }),
    listing: fc.boolean(),
    between: fc.integer({ min: 0, max: 3 }),
    // The user names the record first, and the calls ask for it by its id.
    named: fc.boolean(),
  });

  test('the values that did not change stay on the line (and row) holding the record\'s id', () => {
    let named = 0;
    fc.assert(fc.property(fetchedArb, ({ rows, changed, listing, between, named: userNamed }) => {
      const first = rows.map((r, k) => ({ ref_id: `R-${7100 + k}`, created: `2024-05-${String(r.day).padStart(2, '0')}`, amount: `${r.amount}.25 CAD`, card_last4: `${r.last4}` }));
      const again = first.map((r, k) => (k === 0 ? { ...r, ...Object.fromEntries(changed.map((f) => [f, f === 'created' ? '2025-01-02' : f === 'amount' ? '1.75 CAD' : '0042'])) } : r));
      const payload = (records: typeof first) => (listing ? { payments: records } : records[0]);
      const args = userNamed ? { ref_id: first[0].ref_id } : { page: 1 };
      if (userNamed) named++;
      const entries: TranscriptEntry[] = [
        ...(userNamed ? [{ role: 'user' as const, text: `Please check payment ${first[0].ref_id}.`, calls: [], results: [] }] : []),
        call('c0', 'get_payments', args), result('c0', 'get_payments', payload(first)),
        ...Array.from({ length: between }, (_, k) => [call(`x${k}`, 'lookup', { q: k }), result(`x${k}`, 'lookup', { note_id: `N-${k}` })]).flat(),
        call('c1', 'get_payments', args), result('c1', 'get_payments', payload(again)),
      ];
      const block = renderLedger(extendLedger(emptyLedger(), entries), 100_000, count);
      const lines = block.split('\n').filter((l) => l.startsWith('- ['));
      // Each line as groups of values: a table's rows, or an items line's values whole, with the
      // record its header names (`- [get_payments @4 for ref_id=R-7100]`).
      const headerRef = (line: string) => /^- \[[^\]]* for [^=\]]+=([^\]]+)\]/.exec(line)?.[1];
      const groupsOf = (line: string, withRef: boolean): string[][] => rowsOf(line)?.rows.map((row) => row.filter((c) => c !== ''))
        ?? [[...(itemValues(line) ?? []), ...(withRef && headerRef(line) !== undefined ? [headerRef(line)!] : [])]];
      // The values as written (the id written once), and the groups with the records their headers name.
      const groups = lines.flatMap((l) => groupsOf(l, false));
      const namedGroups = lines.flatMap((l) => groupsOf(l, true));
      const records = listing ? first : first.slice(0, 1);
      // A group that names no record: what it holds is read as nobody's.
      const orphans = namedGroups.filter((g) => !records.some((r) => g.includes(r.ref_id)));
      records.forEach((record, k) => {
        const now = listing ? again[k] : again[0];
        const unchanged = Object.values(record).filter((v, i) => Object.values(now)[i] === v && v !== record.ref_id);
        const withId = groups.filter((g) => g.includes(record.ref_id));
        expect({ id: record.ref_id, lines: withId.length }).toEqual({ id: record.ref_id, lines: 1 });
        // A value that changed is a new fact; a record outside a listing names its id on that line too.
        if (!listing) {
          const changedValues = Object.values(now).filter((v, i) => Object.values(record)[i] !== v);
          for (const v of changedValues) expect({ block, value: v, named: namedGroups.some((g) => g.includes(v) && g.includes(record.ref_id)) }).toEqual({ block, value: v, named: true });
        }
        for (const v of unchanged) {
          // Beside the id, and on no line or row that names no record (two records may share a value by chance).
          const alone = orphans.some((g) => g.includes(v));
          expect({ block, id: record.ref_id, value: v, besideId: withId[0].includes(v), alone }).toEqual({ block, id: record.ref_id, value: v, besideId: true, alone: false });
        }
      });
      expect(renderLedger(parseLedger(block), 100_000, count)).toBe(block);
    }), propertyParams());
    expect(named).toBeGreaterThan(0);
  });
});
