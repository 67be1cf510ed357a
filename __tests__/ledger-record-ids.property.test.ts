import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { transcriptOf } from '../src/core/transcript.js';
import { LENSES } from '../src/formats/registry.js';
import type { OpenAIChatMessage } from '../src/index.js';
import { emptyLedger, extendLedger, renderLedger } from '../src/summarize/ledger.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { propertyParams } from './helpers/property-runs.js';

/**
 * Whatever the room, a ledger never writes a record's values without the id that says whose they
 * are: a date, an amount or a code is written only on a line (a table row for a listing) that holds
 * its record's id. Records here are single results and listings, with every value unique so it can
 * be found; later turns come back to random values (which outrank the ids they belong to). Judged
 * from the generated records and the text, not the ledger's own reading.
 */
const count = createTokenCounter().text;

const recordArb = fc.record({ fields: fc.subarray(['due_date', 'amount', 'status_code'] as const, { minLength: 1 }) });
const resultArb = fc.oneof(
  fc.record({ kind: fc.constant('single' as const), records: fc.array(recordArb, { minLength: 1, maxLength: 1 }) }),
  fc.record({ kind: fc.constant('listing' as const), records: fc.array(recordArb, { minLength: 2, maxLength: 5 }) }),
);
const planArb = fc.record({
  results: fc.array(resultArb, { minLength: 1, maxLength: 5 }),
  mentions: fc.array(fc.nat(), { maxLength: 6 }),
  roomShare: fc.double({ min: 0.05, max: 1, noNaN: true }),
});

interface Made {
  readonly id: string;
  readonly values: readonly string[];
}

type Plan = typeof planArb extends fc.Arbitrary<infer T> ? T : never;

function build(plan: Plan): { messages: OpenAIChatMessage[]; made: Made[] } {
  const messages: OpenAIChatMessage[] = [{ role: 'user', content: 'Look these up.' }];
  const made: Made[] = [];
  let n = 0;
  plan.results.forEach((r, k) => {
    const objects = r.records.map((rec) => {
      const serial = ++n;
      const id = `REC-${7000 + serial}`;
      const object: Record<string, string> = { entry_id: id };
      const values: string[] = [];
      for (const field of rec.fields) {
        const value = field === 'due_date' ? `2025-${String(1 + (serial % 12)).padStart(2, '0')}-${String(1 + (serial % 28)).padStart(2, '0')}`
          : field === 'amount' ? `${100 + serial}.${String(serial % 100).padStart(2, '0')} EUR`
            : `S${serial}Q${serial * 7}`;
        object[field] = value;
        values.push(value);
      }
      made.push({ id, values });
      return object;
    });
    const id = `call_${k}`;
    messages.push(
      { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'fetch', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: id, content: JSON.stringify(r.kind === 'single' ? objects[0] : { entries: objects }) },
      { role: 'assistant', content: 'Done.' },
    );
  });
  // Later turns come back to some values (never to an id).
  const all = made.flatMap((m) => m.values);
  for (const i of plan.mentions) messages.push({ role: 'user', content: `And ${all[i % all.length]}?` }, { role: 'assistant', content: 'Noted.' });
  return { messages, made };
}

/** The line's pieces a record can be on: a table's rows (`; ` apart, the head before `: `), or the whole line. */
function piecesOf(line: string): string[] {
  const body = line.replace(/^- \[[^\]]*\] /, '');
  const table = /^[^\s:=]+(?:\|[^\s:=]+)+: (.*)$/.exec(body);
  return table ? table[1].split('; ') : [body];
}

const holds = (text: string, value: string) => new RegExp(`(?:^|[\\s="])${value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:$|[\\s";])`).test(text);

describe('a record is never written without its id', () => {
  test('property: at any room, every value written is on the line or row of its record id', () => {
    fc.assert(
      fc.property(planArb, (plan) => {
        const { messages, made } = build(plan);
        const ledger = extendLedger(emptyLedger(), transcriptOf(messages, LENSES.openai!));
        const whole = renderLedger(ledger, 100_000, count);
        const text = renderLedger(ledger, Math.max(20, Math.floor(count(whole) * plan.roomShare)), count);
        const pieces = text.split('\n').filter((l) => l.startsWith('- [fetch')).flatMap(piecesOf);
        for (const m of made) {
          for (const v of m.values) {
            for (const piece of pieces.filter((p) => holds(p, v))) expect(holds(piece, m.id)).toBe(true);
          }
        }
      }),
      propertyParams(),
    );
  });
});
