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

/** The cells of a table line's rows: `cols: a b "c d"; "" e f` -> [["a","b","c d"], ["","e","f"]]. */
function rowsOf(line: string): { columns: string[]; rows: string[][] } | undefined {
  const head = /^- \[[^\]]*\] ([^\s:]+(?:\|[^\s:]+)+): (.*)$/.exec(line);
  if (!head) return undefined;
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
    rows[rows.length - 1].push(cell);
  }
  return { columns: head[1].split('|'), rows };
}

const FIELDS = ['ref_id', 'created', 'amount', 'card_last4'] as const;
const recordArb = fc.record({
  ref: fc.integer({ min: 1000, max: 9999 }),
  day: fc.integer({ min: 1, max: 28 }),
  amount: fc.integer({ min: 100, max: 99_999 }),
  last4: fc.integer({ min: 1000, max: 9999 }),
  missing: fc.subarray([...FIELDS], { maxLength: 2 }),
});

describe('ledger tables keep each record on its row', () => {
  test('every row of a listing holds values of one record only', () => {
    let tables = 0;
    fc.assert(fc.property(fc.array(recordArb, { minLength: 3, maxLength: 12 }), fc.array(fc.nat(), { maxLength: 4 }), (drawn, echoed) => {
      const records = drawn.map((r, k) => {
        const full: Record<string, string> = { ref_id: `R-${r.ref}${k}`, created: `2024-0${1 + (r.day % 9)}-${String(r.day).padStart(2, '0')}`, amount: `${r.amount}.${k % 10}5 CAD`, card_last4: `${r.last4}` };
        for (const m of r.missing) delete full[m];
        return full;
      });
      // An earlier message states some of the listing's values already (a date, an amount...).
      const earlier = echoed.map((e) => Object.values(records[e % records.length])[e % 3]).filter((v): v is string => v !== undefined);
      const entries = [call('c0', 'lookup', { q: 'x' }), result('c0', 'lookup', { notes: earlier.map((v, i) => ({ [`${FIELDS[i % 4]}`]: v })) }), call('c1', 'list_payments', { page: 1 }), result('c1', 'list_payments', { payments: records })];
      const block = renderLedger(extendLedger(emptyLedger(), entries), 100_000, count);
      for (const line of block.split('\n')) {
        const table = rowsOf(line);
        if (!table || !line.includes('list_payments')) continue;
        tables++;
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
  });
});
