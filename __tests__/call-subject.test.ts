import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transcriptOf } from '../src/core/transcript.js';
import { convertMessages } from '../src/formats/convert.js';
import type { FormatName } from '../src/formats/lens.js';
import { LENSES } from '../src/formats/registry.js';
import type { OpenAIChatMessage } from '../src/index.js';
import { callSubject, emptyLedger, extendLedger, parseLedger, renderLedger } from '../src/summarize/ledger.js';
import { renderTranscript } from '../src/summarize/render-transcript.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { formatPropertyParams } from './helpers/property-runs.js';

/**
 * A ledger line says whose values it lists. A tool result's facts (`passed=412`) mean nothing to
 * the model once the call is folded away, unless the line names what the call was about
 * (`for path=test/a.test.ts`): the summary numbers its lines by message, and the messages are gone.
 */
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const count = createTokenCounter().text;
const ROOM = 100_000;

describe('callSubject: what a call was about', () => {
  test.each([
    ['the only string argument', { path: 'src/a.ts', start_line: 10, end_line: 20 }, 'path=src/a.ts'],
    ['numbers are parameters, not subjects', { limit: 2, path: 'src/a.ts' }, 'path=src/a.ts'],
    ['an identifier field before any other', { carrier: 'UPS', tracking_number: '1Z999' }, 'tracking_number=1Z999'],
    ['a numeric identifier', { verbose: true, issue_id: 42 }, 'issue_id=42'],
    ['a value with spaces does not fit a header', { query: 'two words', glob: 'src/**' }, 'glob=src/**'],
    ['secrets are never written', { api_key: 'sk-live-123', name: 'billing' }, 'name=billing'],
    ['a key is written as the ledger writes keys', { 'file name': 'a.ts' }, 'file_name=a.ts'],
    ['flags alone', { all: true }, undefined],
    ['a long text', { note: 'x'.repeat(81) }, undefined],
    ['an empty string', { name: '' }, undefined],
  ])('%s', (_, args, subject) => {
    expect(callSubject(JSON.stringify(args))?.ref).toBe(subject);
  });

  test('says whether its field names an identifier', () => {
    expect(callSubject(JSON.stringify({ severity: 'high', order_id: 'ORD-1' }))).toEqual({ ref: 'order_id=ORD-1', identifier: true });
    expect(callSubject(JSON.stringify({ severity: 'high' }))).toEqual({ ref: 'severity=high', identifier: false });
  });

  test('arguments that are not a JSON object name nothing', () => {
    expect(callSubject('[1, 2]')).toBeUndefined();
    expect(callSubject('not json')).toBeUndefined();
    expect(callSubject('')).toBeUndefined();
    expect(callSubject(undefined)).toBeUndefined();
  });
});

/** An OpenAI Chat round: one assistant message calling `calls`, then their results in order. */
function round(id: string, calls: readonly { name: string; args: unknown; result: unknown }[]): OpenAIChatMessage[] {
  return [
    { role: 'assistant', content: null, tool_calls: calls.map((c, k) => ({ id: `${id}_${k}`, type: 'function' as const, function: { name: c.name, arguments: JSON.stringify(c.args) } })) },
    ...calls.map((c, k): OpenAIChatMessage => ({ role: 'tool', tool_call_id: `${id}_${k}`, content: JSON.stringify(c.result) })),
  ];
}

function ledgerText(messages: readonly OpenAIChatMessage[], format: FormatName = 'openai', history: readonly unknown[] = messages, counter: (text: string) => number = count): string {
  const entries = transcriptOf(history, LENSES[format]!);
  return renderLedger(extendLedger(emptyLedger(), entries), ROOM, counter);
}

/** A counter for a room nothing fills (which lines are written does not depend on it): cheap, for the properties. */
const roughCount = (text: string) => Math.ceil(text.length / 4);

describe('a result line names its call', () => {
  const messages: OpenAIChatMessage[] = [
    { role: 'user', content: 'The tests fail; please look at order ORD-77 too.' },
    ...round('a', [
      { name: 'run_tests', args: { path: 'test/a.test.ts' }, result: { passed: 412, duration_ms: 5120 } },
      { name: 'get_order', args: { order_id: 'ORD-77' }, result: { order_id: 'ORD-77', placed_at: '2025-01-21' } },
    ]),
    { role: 'assistant', content: 'Done.' },
  ];

  test('with what the call was about, unless the line holds it', () => {
    const lines = ledgerText(messages).split('\n');
    // The line docs/summaries.md shows, byte for byte.
    const line = '- [run_tests @3 for path=test/a.test.ts] passed=412 duration_ms=5120';
    expect(lines).toContain(line);
    expect(readFileSync(join(root, 'docs', 'summaries.md'), 'utf8')).toContain(`\`${line}\``);
    const order = lines.find((l) => l.includes('placed_at=2025-01-21'));
    expect(order).toContain('order_id=ORD-77');
    expect(order).not.toContain(' for ');
  });

  test('the name is read back with the line and written again the same', () => {
    const text = ledgerText(messages);
    const back = parseLedger(text);
    expect(back.facts.filter((f) => f.value === '412').map((f) => f.of)).toEqual(['path=test/a.test.ts']);
    expect(renderLedger(back, ROOM, count)).toBe(text);
  });

  test('a record with an id of its own is named by another record\'s id it answers for, not by a parameter', () => {
    const lines = ledgerText([
      { role: 'user', content: 'Open an incident, then refund order ORD-9.' },
      ...round('c', [
        { name: 'create_incident', args: { severity: 'high', title: 'errors' }, result: { incident_id: 'INC-501', created_at: '2025-03-12T10:00:00Z' } },
        { name: 'create_refund', args: { reason: 'damaged', order_id: 'ORD-9' }, result: { refund_id: 'RF-77', amount: '12.50 EUR' } },
      ]),
    ]).split('\n');
    expect(lines.find((l) => l.includes('INC-501'))).toMatch(/^- \[create_incident @3\] /);
    expect(lines.find((l) => l.includes('RF-77'))).toMatch(/^- \[create_refund @4 for order_id=ORD-9\] /);
  });

  test('a call read again names its subject on the new line', () => {
    const again: OpenAIChatMessage[] = [
      ...messages,
      { role: 'user', content: 'Run them once more.' },
      ...round('b', [{ name: 'run_tests', args: { path: 'test/a.test.ts' }, result: { passed: 415, duration_ms: 4980 } }]),
    ];
    expect(ledgerText(again)).toContain('- [run_tests @8 for path=test/a.test.ts] passed=415 duration_ms=4980');
  });
});

/*
 * Property, in formats that pair by id and one that pairs by position: parallel calls to the same
 * tools with different subjects, ids reused across rounds, results in any order where the format
 * allows it. Judged from what the generator built (which call each result answers), not from the
 * project's pairing: a `for` on a result's line names that result's own call's subject, and a
 * line holding none of it names it.
 */
const SUBJECT_KEYS = ['path', 'query', 'ticket_id', 'host name'] as const;
const TOOLS = ['read', 'probe', 'fetch'] as const;
const headerKey = (key: string) => key.replace(/\s+/g, '_');

interface Planned {
  readonly name: string;
  readonly key: string;
  readonly subject: string;
  /** Values only this result holds, to find its line. */
  readonly marks: readonly string[];
  readonly echoes: boolean;
}

const roundArb = fc.array(
  fc.record({
    name: fc.constantFrom(...TOOLS),
    key: fc.constantFrom(...SUBJECT_KEYS),
    limit: fc.integer({ min: 1, max: 50 }),
    echoes: fc.boolean(),
    withFlag: fc.boolean(),
  }),
  { minLength: 1, maxLength: 3 },
);
const historyArb = fc.record({
  rounds: fc.array(roundArb, { minLength: 1, maxLength: 5 }),
  reuseIds: fc.boolean(),
  reverse: fc.boolean(),
});

/** The OpenAI Chat history a plan gives, and what each result holds (by its mark). */
type Plan = typeof historyArb extends fc.Arbitrary<infer T> ? T : never;

function build(plan: Plan): { messages: OpenAIChatMessage[]; planned: Planned[] } {
  const messages: OpenAIChatMessage[] = [{ role: 'user', content: 'Check every host and file named below.' }];
  const planned: Planned[] = [];
  let serial = 0;
  plan.rounds.forEach((calls, r) => {
    const id = plan.reuseIds ? 'call' : `call${r}`;
    const made = calls.map((c) => {
      const n = ++serial;
      const subject = `s${n}x-${c.key.length}${n * 7}`;
      const marks = [`RX${1000 + n}Q`, `${2_000_000 + n * 13}`];
      planned.push({ name: c.name, key: c.key, subject, marks, echoes: c.echoes });
      const args = { ...(c.withFlag ? { dry_run: false } : {}), [c.key]: subject, limit: c.limit };
      const result = { status: marks[0], bytes: Number(marks[1]), ...(c.echoes ? { target: subject } : {}) };
      return { name: c.name, args, result };
    });
    const msgs = round(id, made);
    const results = msgs.slice(1);
    messages.push(msgs[0], ...(plan.reverse ? results.reverse() : results), { role: 'assistant', content: `Round ${r + 1} done.` });
    messages.push({ role: 'user', content: 'Next.' });
  });
  return { messages, planned };
}

/** The history in `format`; Gemini without ids, so its results pair by position. */
function inFormat(messages: OpenAIChatMessage[], format: FormatName): unknown[] {
  if (format === 'openai') return messages;
  const converted = convertMessages(messages, { from: 'openai', to: format }).messages;
  if (format !== 'gemini') return converted;
  return JSON.parse(JSON.stringify(converted, (key, value: unknown) => (key === 'id' ? undefined : value))) as unknown[];
}

describe.each(['openai', 'anthropic', 'gemini'] as const)('in %s, a result line names its own call', (format) => {
  test('property', () => {
    fc.assert(
      fc.property(historyArb, (plan) => {
        // Gemini answers a turn's calls in their order; the other two formats in any order.
        const { messages, planned } = build(format === 'gemini' ? { ...plan, reverse: false } : plan);
        const lines = ledgerText(messages, format, inFormat(messages, format), roughCount).split('\n');
        for (const p of planned) {
          const line = lines.find((l) => l.includes(p.marks[0]));
          if (line === undefined) throw new Error(`no line holds ${p.marks[0]}:\n${lines.join('\n')}`);
          const header = /^- \[([^\]]*)\]/.exec(line)![1];
          const named = / for (\S+)$/.exec(header)?.[1];
          if (named !== undefined) expect(named).toBe(`${headerKey(p.key)}=${p.subject}`);
          const holdsSubject = line.slice(header.length + 4).split(/[\s=]/).includes(p.subject);
          if (!holdsSubject) expect(named).toBe(`${headerKey(p.key)}=${p.subject}`);
          // Its own line, named after its tool (the second result of a tool in one message is `#2`).
          expect(header).toMatch(new RegExp(`^${p.name}(?:#\\d+)? @\\d+`));
          // Its values together, and no other result's beside them.
          expect(line).toContain(p.marks[1]);
          expect(planned.filter((q) => q !== p && line.includes(q.marks[0]))).toEqual([]);
        }
      }),
      formatPropertyParams(),
    );
  });
});

describe('a model summarizer is told which call an id-less result answers', () => {
  test('Gemini parallel calls of one tool: each result names its own call', () => {
    const contents = [
      { role: 'user', parts: [{ text: 'Weather in Oslo and Rome?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'lookup', args: { city: 'Oslo' } } }, { functionCall: { name: 'lookup', args: { city: 'Rome' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { temp_c: 4 } } }, { functionResponse: { name: 'lookup', response: { temp_c: 19 } } }] },
    ];
    const text = renderTranscript(transcriptOf(contents, LENSES.gemini!));
    expect(text).toContain('<- result of lookup(city=Oslo): {"temp_c":4}');
    expect(text).toContain('<- result of lookup(city=Rome): {"temp_c":19}');
  });

  test('a result with an id is matched by its id, and names its tool only', () => {
    const text = renderTranscript(transcriptOf(round('a', [{ name: 'lookup', args: { city: 'Oslo' }, result: { temp_c: 4 } }]), LENSES.openai!));
    expect(text).toContain('<- result of lookup [id a_0]: {"temp_c":4}');
  });
});

describe("a record's values come with its id", () => {
  test('the id ranks with the best-ranked value of its record, so a short room keeps both', () => {
    const messages: OpenAIChatMessage[] = [
      { role: 'user', content: 'Look up the shipment.' },
      ...round('a', [{ name: 'get_shipment', args: {}, result: { shipment_id: 'SHP-40219', eta: '2025-04-02', depot: 'D-17' } }]),
      { role: 'assistant', content: 'Found it.' },
    ];
    // Later turns come back to the date only: it outranks the id that says whose date it is.
    for (let t = 0; t < 4; t++) messages.push({ role: 'user', content: `Is 2025-04-02 still right? (${t})` }, { role: 'assistant', content: 'Yes.' });
    const ledger = extendLedger(emptyLedger(), transcriptOf(messages, LENSES.openai!));
    const whole = renderLedger(ledger, ROOM, count);
    // The smallest room that writes the date: the id is on its line.
    for (let room = 10; room < count(whole); room++) {
      const text = renderLedger(ledger, room, count);
      const line = text.split('\n').find((l) => l.includes('2025-04-02'));
      if (line === undefined) continue;
      expect(line).toContain('SHP-40219');
      return;
    }
    throw new Error(`no room wrote the date:\n${whole}`);
  });
});
