import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import type { TranscriptEntry } from '../src/formats/lens.js';
import { createExtractiveSummarizer } from '../src/index.js';
import { factsFromContent } from '../src/summarize/facts.js';
import { splitTextTables } from '../src/summarize/text-tables.js';
import { propertyParams } from './helpers/property-runs.js';

/**
 * Tables written as text in a tool's output (markdown, CSV, TSV, column-aligned listings) are read
 * as records: each row's cells keyed by the header's names, plain numbers as numbers. The
 * tables here are written by the test from cells it draws, between lines of prose, and the reader's
 * output is compared with those cells (the oracle is the drawn table, not the reader).
 */

const nameArb = fc.stringMatching(/^[a-z][a-z_]{1,9}$/);
const idCell = fc.stringMatching(/^[a-z]{2,6}-[0-9a-z]{3,8}$/);
const numberCell = fc.oneof(fc.integer({ min: 0, max: 99_999 }).map(String), fc.tuple(fc.integer({ min: 0, max: 999 }), fc.integer({ min: 0, max: 99 })).map(([a, b]) => `${a}.${String(b).padStart(2, '0')}`));
const sizeCell = fc.tuple(fc.integer({ min: 1, max: 999 }), fc.constantFrom('Mi', 'Gi', 'ms', 's', '%')).map(([n, u]) => `${n}${u}`);
const cellArb = fc.oneof(idCell, numberCell, sizeCell);

/** A table drawn as columns and rows; the first column's cells hold a digit, so every row is data. */
const tableArb = fc
  .uniqueArray(nameArb, { minLength: 3, maxLength: 6 })
  .chain((columns) => fc.record({
    columns: fc.constant(columns),
    rows: fc.array(fc.tuple(numberCell, fc.array(cellArb, { minLength: columns.length - 1, maxLength: columns.length - 1 })).map(([first, rest]) => [first, ...rest]), { minLength: 2, maxLength: 8 }),
  }));

/** Prose lines: words and single spaces, a comma or two, no pipe, tab or column gap. */
const proseLine = fc.array(fc.stringMatching(/^[A-Za-z]{1,8}$/), { minLength: 3, maxLength: 9 }).map((w) => `${w.join(' ')}.`);

type Style = 'markdown' | 'csv' | 'tsv' | 'aligned';

function written(style: Style, columns: readonly string[], rows: readonly string[][]): string {
  switch (style) {
    case 'markdown':
      return [`| ${columns.join(' | ')} |`, `|${columns.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
    case 'csv':
      return [columns.join(','), ...rows.map((r) => r.join(','))].join('\n');
    case 'tsv':
      return [columns.join('\t'), ...rows.map((r) => r.join('\t'))].join('\n');
    case 'aligned': {
      const upper = columns.map((c) => c.toUpperCase());
      const widths = upper.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i].length)) + 3);
      const line = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join('');
      return [line(upper), ...rows.map(line)].join('\n');
    }
  }
}

const asValue = (cell: string): string | number => (/^\d+(?:\.\d+)?$/.test(cell) ? Number(cell) : cell);

describe('splitTextTables', () => {
  test('a table between prose is read as its records; the prose around it stays as written', () => {
    fc.assert(
      fc.property(fc.constantFrom<Style>('markdown', 'csv', 'tsv', 'aligned'), tableArb, fc.array(proseLine, { maxLength: 3 }), fc.array(proseLine, { maxLength: 3 }), (style, { columns, rows }, before, after) => {
        const table = written(style, columns, rows);
        const text = [...before, table, ...after].join('\n');
        const pieces = splitTextTables(text);
        const names = style === 'aligned' ? columns.map((c) => c.toUpperCase()) : columns;
        const expected = rows.map((r) => Object.fromEntries(r.map((cell, i) => [names[i], asValue(cell)])));
        expect(pieces).toEqual([
          ...(before.length > 0 ? [{ kind: 'text', text: before.join('\n') }] : []),
          { kind: 'table', records: expected },
          ...(after.length > 0 ? [{ kind: 'text', text: after.join('\n') }] : []),
        ]);
      }),
      propertyParams(),
    );
  });

  test('prose alone is one piece, the text itself', () => {
    fc.assert(
      fc.property(fc.array(proseLine, { minLength: 1, maxLength: 8 }), (lines) => {
        const text = lines.join('\n');
        expect(splitTextTables(text)).toEqual([{ kind: 'text', text }]);
      }),
      propertyParams(),
    );
  });

  test('what is not a table of data stays prose: a code excerpt with a gutter, a list of words, a header with one row, comma-separated sentences', () => {
    const cases = [
      '  12 | export function f(a, b) {\n  13 |   return a + b;\n  14 | }',
      'NAME   KIND   OWNER\nalpha   beta   gamma\ndelta   epsilon   zeta',
      'NAME   READY   STATUS\nweb-1   1/1   Running',
      'Well, I checked it\nThen, it failed twice\nSo, we rolled back',
    ];
    for (const text of cases) expect(splitTextTables(text)).toEqual([{ kind: 'text', text }]);
  });

  test('quoted CSV fields keep their commas; grouped numbers are read as numbers', () => {
    const text = 'id,label,count\nrow-1,"north, east",1,204\nrow-2,"say ""hi""",12';
    // The first data row has four fields (an unquoted grouped number): not the header's three, so no table.
    expect(splitTextTables(text)).toEqual([{ kind: 'text', text }]);
    const ok = 'id,label,count\nrow-1,"north, east","1,204"\nrow-2,"say ""hi""",12';
    expect(splitTextTables(ok)).toEqual([{ kind: 'table', records: [{ id: 'row-1', label: 'north, east', count: 1204 }, { id: 'row-2', label: 'say "hi"', count: 12 }] }]);
  });
});

describe('facts of a text table', () => {
  test('each cell is a fact named by its column; prose facts around it are kept too', () => {
    const text = 'api (prod), latency in ms, request req_7Hq2Lm9x failed\n\n| time | p50 | p99 | errors % | rps |\n|---|---|---|---|---|\n| 06:52 | 13 | 545 | 12.8 | 2,060 |\n| 06:53 | 11 | 359 | 3.5 | 2,028 |\n';
    const facts = factsFromContent(text, 100, 'data');
    const byValue = new Map(facts.map((f) => [f.value, f.label]));
    expect(byValue.get('req_7Hq2Lm9x')).toBeDefined();
    expect(byValue.get('545')).toBe('p99');
    expect(byValue.get('2060')).toBe('rps');
    // Labels are written as the ledger writes field names (`errors %` -> `errors_`).
    expect(byValue.get('12.8')).toBe('errors_');
    // Two rows: two records.
    expect(new Set(facts.filter((f) => f.label === 'p99').map((f) => f.record))).toEqual(new Set(['0', '1']));
  });

  test('an extractive summary keeps the cells of a metrics table it folds (they were dropped as unnamed numbers before)', async () => {
    const table = '| time | p95 | p99 | rps |\n|---|---|---|---|\n| 07:05 | 1463 | 6774 | 780 |\n| 07:06 | 1358 | 5164 | 723 |\n| 07:07 | 1113 | 5094 | 927 |';
    const csv = 'timestamp,pod,working_set,cpu\n2025-03-05T07:25:00Z,web-h56l5-7pnq7,732Mi,144m\n2025-03-05T07:25:00Z,web-h56l5-55kzr,938Mi,739m';
    const messages: TranscriptEntry[] = [
      { role: 'user', text: 'How is the web tier doing?', calls: [], results: [] },
      { role: 'assistant', text: '', calls: [{ id: 'c1', name: 'metrics', arguments: '{"service":"web"}' }, { id: 'c2', name: 'memory', arguments: '{"service":"web"}' }], results: [] },
      { role: 'tool', text: '', calls: [], results: [{ id: 'c1', name: 'metrics', content: `web, latency in ms\n\n${table}` }, { id: 'c2', name: 'memory', content: csv }] },
      { role: 'assistant', text: 'Latency is high; memory is fine.', calls: [], results: [] },
    ];
    const text = await createExtractiveSummarizer().summarize({ messages, signal: new AbortController().signal, maxTokens: 600 });
    for (const value of ['6774', '5164', '5094', '1463', '927', '732Mi', '938Mi', 'web-h56l5-55kzr']) expect(text).toContain(value);
  });
});
