import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TranscriptEntry } from '../src/formats/lens.js';
import { openaiChatLens } from '../src/formats/openai-chat/lens.js';
import { transcriptOf } from '../src/core/transcript.js';
import { createExtractiveSummarizer, ledgerOf, writeSummary } from '../src/summarize/extractive.js';
import { factsFromContent, factsFromJson, factsFromText, isMeasured, type Fact } from '../src/summarize/facts.js';
import {
  anchorOf, appendMissingFacts, emptyLedger, mentions, textWords, extendLedger, factCheckRoom, ledgerBuilder, ledgerStats, parseLedger, rankFacts, recordIds, renderLedger,
  POSITION_LEGEND, REFERENCE_CAP, REFERENCE_WEIGHT, withoutLedgerBlocks, type Ledger, type LedgerFact,
} from '../src/summarize/ledger.js';
import { createLlmSummarizer } from '../src/summarize/llm.js';
import { summarizeRolling } from '../src/summarize/rolling.js';
import type { SummarizeRequest, Summarizer } from '../src/summarize/summarizer.js';
import { emptyMemory } from '../src/summarize/working-memory.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { corpusDescribe, loadCorpus } from './helpers/corpus.js';
import { propertyParams } from './helpers/property-runs.js';

const count = createTokenCounter().text;
/** A cheap counter for properties (about four characters a token). */
const cheap = (text: string) => Math.ceil(text.length / 4);
const live = () => new AbortController().signal;

const user = (text: string): TranscriptEntry => ({ role: 'user', text, calls: [], results: [] });
const assistant = (text: string): TranscriptEntry => ({ role: 'assistant', text, calls: [], results: [] });
const call = (id: string, name: string, args: unknown): TranscriptEntry => ({ role: 'assistant', text: '', calls: [{ id, name, arguments: JSON.stringify(args) }], results: [] });
const result = (id: string, name: string, content: unknown): TranscriptEntry => ({
  role: 'tool', text: '', calls: [], results: [{ id, name, content: typeof content === 'string' ? content : JSON.stringify(content) }],
});

/** Facts as `key: value`, the key being the label or else the shape. */
const lines = (facts: readonly Fact[]) => facts.map((f) => `${f.label ?? f.kind}: ${f.value}`);
const factsOf = (ledger: Ledger) => ledger.facts.map((f) => `${f.key}: ${f.value}`);

describe('fact rules: each shape', () => {
  test.each([
    ['Reach me at ana.lopez@example.com.', ['email: ana.lopez@example.com']],
    ['Docs: https://example.com/a/b?x=1. Also see www.example.org/page', ['Docs: https://example.com/a/b?x=1', 'url: www.example.org/page']],
    ['Request 123e4567-e89b-12d3-a456-426614174000 failed', ['uuid: 123e4567-e89b-12d3-a456-426614174000']],
    ['It failed on 2024-05-27T10:12:33Z, again May 27, 2024 and 03/06/2024.', ['date: 2024-05-27T10:12:33Z', 'date: May 27, 2024', 'date: 03/06/2024']],
    ['Call +44 20 7946 0958 or (415) 555-0134.', ['phone: +44 20 7946 0958', 'phone: (415) 555-0134']],
    ['TypeError at src/core/plan.ts:142:7 and router.ts:88; see ./lib/a.js', ['path: src/core/plan.ts:142:7', 'path: router.ts:88', 'path: ./lib/a.js']],
    ['commit 3f9a2b1c7d, tag v1.2.3', ['hash: 3f9a2b1c7d', 'version: v1.2.3']],
    ['Total Cost: $239. Refund of 49.95 GBP today.', ['Total Cost: $239', 'Refund: 49.95 GBP']],
    ['Time: 4.37 s, Memory: 250 MB', ['Time: 4.37 s', 'Memory: 250 MB']],
    ['Your user id is user_name_1234 and the key is aB3xK9qZ2.', ['user id: user_name_1234', 'key: aB3xK9qZ2']],
    ['The code is 7KPD28. Your confirmation code is QXPTKL. Record BXRTLM.', ['code: 7KPD28', 'confirmation code: QXPTKL', 'Record: BXRTLM']],
    ['Paid with the card ending in 3816.', ['card ending: 3816']],
    ['Apply Gift Card 3149902 first.', ['Gift Card: 3149902']],
    ['Fixes #4821.', ['Fixes: #4821']],
    ['The name on file is "Ana Lopez".', ['name: Ana Lopez']],
    // A `.` inside a file name is not a sentence end: the value is named by the file, not its extension.
    ['PASS test/a.test.ts (2.72 s)', ['path: test/a.test.ts', 'PASS test/a.test.ts: 2.72 s']],
    ['Wrote build/out.log: 2.57 s', ['path: build/out.log', 'Wrote build/out.log: 2.57 s']],
    ['Saved it. Order ORD-5512 weighs 2.5 kg', ['Order: ORD-5512', 'Order ORD-5512 weighs: 2.5 kg']],
  ])('%s', (text, expected) => {
    expect(lines(factsFromText(text, 50))).toEqual(expected);
  });

  test.each([
    'I have 3 bags and want 2 seats at 5 pm. Thanks so much!',
    'PLEASE HELP ME WITH THIS REQUEST NOW',
    'It works and/or fails 24/7, e.g. at 10 km/h. HTTPS and JSON are fine.',
    'We talked for 20 minutes about 3 options, and it took 2 days.',
    'Sure, that sounds good. Let me know if anything changes.',
  ])('no false fact from prose or small numbers: %s', (text) => {
    expect(factsFromText(text, 50)).toEqual([]);
  });

  test('a measured quantity in prose is a fact; a round small one is not', () => {
    const values = (text: string) => factsFromText(text, 50).map((f) => f.value);
    expect(values('PASS a.test.ts (2.72 s), then 371 ms; it used 1024 MB after 20 minutes and 3 days.')).toEqual(['2.72 s', '371 ms', '1024 MB']);
    expect(values('exit code 2 after 23.0 s')).toEqual(['23.0 s']);
    expect(isMeasured('0.5 s')).toBe(true);
    expect(isMeasured('99 ms')).toBe(false);
  });

  test('JSON: fields name their values, amounts take their unit, secrets and small counts are left out', () => {
    const facts = factsFromJson({
      user_id: 'ann_77', password: 'hunter2-secret', api_key: 'sk-LIVE-1', count: 3, bytes: 4096,
      total: { amount: 49.95, currency: 'GBP' },
      methods: { card_71: { id: 'card_71', amount: 250 } },
      note: 'Refund RF-1234 issued',
      items: [{ code: 'QMX017', date: '2024-05-25', price: 523 }],
      prices: { basic: 112 }, seats: { basic: 20 },
    }, 50);
    expect(lines(facts)).toEqual([
      'user_id: ann_77', 'bytes: 4096', 'total.amount: 49.95 GBP', 'id: card_71', 'card_71.amount: 250',
      'Refund: RF-1234', 'code: QMX017', 'date: 2024-05-25', 'items.price: 523', 'prices.basic: 112',
    ]);
    expect(JSON.stringify(facts)).not.toMatch(/hunter2|sk-LIVE/);
  });

  test('a JSON text is read as JSON, anything else as text', () => {
    expect(lines(factsFromContent('{"ref":"X-2044"}', 10))).toEqual(['ref: X-2044']);
    expect(lines(factsFromContent('ref X-2044', 10))).toEqual(['ref: X-2044']);
  });

  test('the summarizers hold no word of one domain, in code or comments', () => {
    const root = join(dirname(fileURLToPath(import.meta.url)), '..');
    // The shared corpus is a customer-service log of one industry: its words must not steer the rules.
    const domain = /\b(?:reservations?|flights?|bookings?|booked|pnr|cabins?|passengers?|baggages?|airlines?|airports?|itinerar(?:y|ies)|refund(?:s|ed)?)\b/i;
    const dir = join(root, 'src', 'summarize');
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      expect({ file, match: domain.exec(readFileSync(join(dir, file), 'utf8'))?.[0] }).toEqual({ file, match: undefined });
    }
  });
});

describe('what the ledger reads: whole listings, data text, call arguments', () => {
  test('every record of a long listing enters the ledger (not only its first records)', () => {
    const records = Array.from({ length: 60 }, (_, k) => ({ ref: `R-${5000 + k}`, placed: `2024-02-${String(1 + (k % 28)).padStart(2, '0')}` }));
    const ledger = extendLedger(emptyLedger(), [call('c1', 'list', {}), result('c1', 'list', { items: records })]);
    const refs = new Set(ledger.facts.filter((f) => f.key === 'ref').map((f) => f.value));
    expect(records.filter((r) => !refs.has(r.ref))).toEqual([]);
  });

  test('property: every id of a listing of up to 200 records is a fact, whatever the listing holds beside it', () => {
    const record = fc.record({
      n: fc.integer({ min: 0, max: 999_999 }),
      prefix: fc.constantFrom('R', 'INV', 'job', 'acct'),
      note: fc.string({ maxLength: 30 }),
      size: fc.integer({ min: -5000, max: 5000 }),
    });
    fc.assert(fc.property(fc.array(record, { minLength: 1, maxLength: 200, size: 'max' }), (rows) => {
      const items = rows.map((r, k) => ({ id: `${r.prefix}-${k}-${r.n}`, note: r.note, size: r.size }));
      const ledger = extendLedger(emptyLedger(), [call('c1', 'list', {}), result('c1', 'list', { items })]);
      const values = new Set(ledger.facts.map((f) => f.value));
      expect(items.filter((i) => !values.has(i.id)).map((i) => i.id)).toEqual([]);
    }), { ...propertyParams(), numRuns: Math.min(propertyParams().numRuns, 100) });
  });

  test('a JSON field that is a code of 3-8 capital letters alone is a fact; a word, a short label or a unit field is not', () => {
    expect(lines(factsFromJson({ from: 'LIS', to: 'OPO', state: 'PENDING', tier: 'gold', region: 'EU', note: 'SEE ALSO' }, 20)))
      .toEqual(['from: LIS', 'to: OPO', 'state: PENDING']);
    // A record's unit field is carried by its amounts, not kept apart.
    expect(lines(factsFromJson({ total: 12.5, currency: 'EUR' }, 20))).toEqual(['total: 12.5 EUR']);
  });

  test('a short field holding a digit and no fact of its own is one value; a sentence with a fact gives the fact', () => {
    expect(lines(factsFromJson({ address: { line1: '12 Harbour Street', unit: 'Suite 400' }, note: 'Refund RF-1234 issued', label: 'blue' }, 20)))
      .toEqual(['line1: 12 Harbour Street', 'unit: Suite 400', 'Refund: RF-1234']);
  });

  test('in a tool result every quantity is a fact; in prose a round small one is not', () => {
    const values = (text: string, source?: 'data') => factsFromText(text, 50, source).map((f) => f.value);
    expect(values('ok parses a header (59 ms), 3 retries, waited 20 minutes', 'data')).toEqual(['59 ms', '20 minutes']);
    expect(values('ok parses a header (59 ms), 3 retries, waited 20 minutes')).toEqual([]);
    const ledger = extendLedger(emptyLedger(), [call('c1', 'run', { all: true }), result('c1', 'run', 'PASS a.test.ts (59 ms)')]);
    expect(ledger.facts.map((f) => f.value)).toContain('59 ms');
  });

  test('a number of three digits or more is a fact where a field names it, not in a gutter or a sentence', () => {
    expect(lines(factsFromText('suites=145 passed=457 failed=3\nPort: 8080', 20, 'data'))).toEqual(['suites: 145', 'passed: 457', 'Port: 8080']);
    expect(factsFromText('134 |   const a = 1;\n135 |   return a;\nwe have 250 of them', 20, 'data')).toEqual([]);
  });

  test("a call's arguments are facts of the call; a value its result returns joins the result's record, and is not a mention again", () => {
    const ledger = extendLedger(emptyLedger(), [
      call('c1', 'apply_patch', { path: 'lib/store/cache.py', branch: 'fix-cache-771' }),
      result('c1', 'apply_patch', { ok: true }),
      call('c2', 'lookup', { ref: 'R-2001' }),
      result('c2', 'lookup', { ref: 'R-2001', placed: '2024-05-02' }),
    ]);
    expect(factsOf(ledger)).toEqual(['path: lib/store/cache.py', 'branch: fix-cache-771', 'ref: R-2001', 'placed: 2024-05-02']);
    expect(ledger.facts.find((f) => f.value === 'lib/store/cache.py')).toMatchObject({ source: 'apply_patch @1', references: 0 });
    expect(ledger.facts.find((f) => f.value === 'R-2001')).toMatchObject({ source: 'lookup @4', firstSeen: 3, references: 0 });
  });
});

describe('the mention search looks only where a mention can be', () => {
  test('property: whenever a text mentions a value, the value\'s anchor is one of the text\'s words', () => {
    const piece = fc.oneof(
      fc.stringMatching(/^[A-Za-z0-9_]{1,6}$/),
      fc.constantFrom('-', '.', ' ', '$', '€', '/', ':', '=', '"', '_', 'é', '日本', '\n', ',', '1,2'),
    );
    const value = fc.array(piece, { minLength: 1, maxLength: 5 }).map((p) => p.join('')).filter((v) => v.trim() !== '');
    fc.assert(fc.property(value, fc.array(piece, { maxLength: 4 }), fc.array(piece, { maxLength: 4 }), fc.array(piece, { maxLength: 6 }), (v, before, after, noise) => {
      const text = `${noise.join('')} ${before.join('')}${v}${after.join('')}`;
      if (!mentions(text, v)) return;
      const anchor = anchorOf(v);
      if (anchor !== undefined) expect(textWords(text).has(anchor)).toBe(true);
    }), propertyParams());
  });
});

describe('the ledger: dedup, mentions, numbering', () => {
  const round: TranscriptEntry[] = [
    user('Hi, my id is ann_77. Where is order ORD-1003?'),
    call('c1', 'lookup', { order_id: 'ORD-1003' }),
    result('c1', 'lookup', { order_id: 'ORD-1003', tracking_number: 'TRK023757X', placed: '2024-05-02', total: 239 }),
    assistant('ORD-1003 shipped with tracking number TRK023757X; it was placed on 2024-05-02 and cost $239.'),
  ];

  test('one fact per value: a field name replaces the words of a sentence, and with it the source', () => {
    const ledger = extendLedger(emptyLedger(), round);
    expect(factsOf(ledger)).toEqual(['id: ann_77', 'order_id: ORD-1003', 'tracking_number: TRK023757X', 'placed: 2024-05-02', 'total: 239']);
    const order = ledger.facts.find((f) => f.value === 'ORD-1003')!;
    // First seen in the request (1), then in the call's arguments (2), the result (3) and the answer (4).
    expect(order).toMatchObject({ source: 'lookup @3', firstSeen: 1, lastSeen: 4, references: 3 });
    expect(ledger.facts.find((f) => f.value === 'TRK023757X')).toMatchObject({ source: 'lookup @3', firstSeen: 3, lastSeen: 4, references: 1 });
    // `$239` in the answer restates `total: 239`: a mention, not a new fact.
    expect(ledger.facts.find((f) => f.value === '239')).toMatchObject({ lastSeen: 4, references: 1 });
    expect(ledger.seen).toBe(5);
    expect(ledger.messages).toBe(4);
  });

  test('an amount in prose that restates a field is a mention, not a second fact', () => {
    const ledger = extendLedger(emptyLedger(), [result('c', 'quote', { price: 112 }), assistant('Economy: $112.')]);
    expect(factsOf(ledger)).toEqual(['price: 112']);
    expect(ledger.facts[0].references).toBe(1);
  });

  test('the same date named by different words is one fact', () => {
    const ledger = extendLedger(emptyLedger(), [user('I leave on May 27.'), assistant('The quickest option on May 27 is the first.')]);
    expect(ledger.facts.map((f) => f.value)).toEqual(['May 27']);
    expect(ledger.facts[0].references).toBe(1);
  });

  test('numbering carries on across folds; system messages are skipped', () => {
    const first = extendLedger(emptyLedger(), [{ role: 'system', text: 'Key: SYS-1234', calls: [], results: [] }, ...round]);
    expect(first.facts.some((f) => f.value === 'SYS-1234')).toBe(false);
    const second = extendLedger(first, [user('And ann_77 again, please.')]);
    expect(second.messages).toBe(6);
    expect(second.facts.find((f) => f.value === 'ann_77')).toMatchObject({ lastSeen: 6, references: 1 });
    expect(second.seen).toBe(first.seen);
  });

  test('read in steps or at once, the ledger is the same (a result is named after a call read in an earlier step)', () => {
    const entries = [user('Look up ann_77.'), call('c9', 'lookup', { id: 'ann_77' }), { ...result('c9', '', { user_id: 'ann_77', email: 'ann@example.com' }) }, assistant('Found ann@example.com.')];
    const builder = ledgerBuilder(emptyLedger());
    builder.add(entries.slice(0, 2));
    builder.add(entries.slice(2));
    expect(builder.ledger()).toEqual(extendLedger(emptyLedger(), entries));
    expect(builder.ledger().facts.find((f) => f.value === 'ann@example.com')?.source).toBe('lookup @3');
  });

  test('ranking: more recent first, a mention is worth REFERENCE_WEIGHT messages, up to REFERENCE_CAP', () => {
    // Not an identifier field: a record's id ranks with its record's best fact (its own test below).
    const fact = (value: string, lastSeen: number, references: number): LedgerFact => ({ key: 'code', value, source: 't @1', firstSeen: 1, lastSeen, references, keyStrength: 2 });
    const facts = [fact('A-1000', 10, 0), fact('B-1000', 8, 1), fact('C-1000', 9, 0), fact('D-1000', 1, 100)];
    // D: 1 + 3 x min(100, 5) = 16 > B: 8 + 3 = 11 > A: 10 > C: 9.
    expect(REFERENCE_WEIGHT).toBe(3);
    expect(REFERENCE_CAP).toBe(5);
    expect(rankFacts(facts).map((i) => facts[i].value)).toEqual(['D-1000', 'B-1000', 'A-1000', 'C-1000']);
  });

  test("ranking: a record's id comes right before its best-ranked fact; a turn's id-named fact is ranked on its own", () => {
    const fact = (key: string, value: string, source: string, lastSeen: number, record?: string): LedgerFact => ({ key, value, source, firstSeen: 1, lastSeen, references: 0, keyStrength: 2, ...(record === undefined ? {} : { record }) });
    const facts = [
      fact('order_id', 'O-1', 'get @1', 1), fact('eta', '2025-04-02', 'get @1', 20), fact('depot', 'D-17', 'get @1', 1),
      fact('note', 'N-5', 'other @2', 10),
      fact('item_id', 'I-1', 'list @3', 3, '0'), fact('qty', '12', 'list @3', 15, '0'), fact('item_id', 'I-2', 'list @3', 3, '1'),
      fact('user_id', 'U-9', 'user @4', 4),
    ];
    expect(recordIds(facts)).toEqual([undefined, 0, 0, undefined, undefined, 4, undefined, undefined]);
    expect(rankFacts(facts).map((i) => facts[i].value)).toEqual(['O-1', '2025-04-02', 'I-1', '12', 'N-5', 'U-9', 'I-2', 'D-17']);
  });

  test('ranking: a value a better-ranked fact holds already comes after every first holder of a value', () => {
    const fact = (key: string, value: string, lastSeen: number, record: string): LedgerFact => ({ key, value, source: 'list @1', firstSeen: 1, lastSeen, references: 0, keyStrength: 2, record });
    // Two records on one day: the second record's date is the same value as the first's.
    const facts = [fact('ref', 'R-1', 9, '0'), fact('day', '2024-03-01', 9, '0'), fact('ref', 'R-2', 8, '1'), fact('day', '2024-03-01', 8, '1'), fact('amount', '12 EUR', 7, '1')];
    expect(rankFacts(facts)).toEqual([0, 1, 2, 4, 3]);
  });
});

describe('the ledger block: rendering, reading back, shortening', () => {
  const rounds = (from: number, to: number): TranscriptEntry[] => Array.from({ length: to - from + 1 }, (_, k) => {
    const n = from + k;
    return [call(`c${n}`, 'lookup', { ref: `R-${1000 + n}` }), result(`c${n}`, 'lookup', { ref: `R-${1000 + n}`, placed: `2024-05-${String(n % 28 + 1).padStart(2, '0')}`, total: 100 + n })];
  }).flat();

  test('groups by source, least recently mentioned first, with a meta line that counts facts', () => {
    const ledger = extendLedger(emptyLedger(), [...rounds(1, 3), user('Back to R-1001 please.')]);
    const block = renderLedger(ledger, 10_000, count);
    expect(block.split('\n')).toEqual([
      'Facts:',
      `- (9 of 9 facts kept, 7 messages read; ${POSITION_LEGEND})`,
      '- [lookup @4] ref=R-1002 placed=2024-05-03 total=102',
      '- [lookup @6] ref=R-1003 placed=2024-05-04 total=103',
      '- [lookup @2 ×1 @7] ref=R-1001 placed=2024-05-02 total=101',
    ]);
    expect(ledgerStats(block)).toEqual({ seen: 9, kept: 9 });
  });

  test('byte-stable: a block read back and written again with the same room is the same bytes, fold after fold', () => {
    let ledger = emptyLedger();
    for (const [from, to] of [[1, 4], [5, 9], [10, 14]]) {
      ledger = extendLedger(ledger, [...rounds(from, to), user(`Is R-${1000 + from} still right?`)]);
      for (const room of [60, 150, 10_000]) {
        const block = renderLedger(ledger, room, count);
        expect(count(block)).toBeLessThanOrEqual(room);
        expect(renderLedger(parseLedger(block), room, count)).toBe(block);
        expect(renderLedger(extendLedger(parseLedger(block), []), room, count)).toBe(block);
      }
      ledger = parseLedger(renderLedger(ledger, 150, count));
    }
  });

  test('an extractive summary folded again with nothing new is the same text; written again in the same room, it keeps its Facts block byte for byte', async () => {
    const s = createExtractiveSummarizer({ maxSummaryTokens: 300 });
    const first = await s.summarize({ messages: [user('Track these for me.'), ...rounds(1, 12)], signal: live() });
    expect(await s.summarize({ previousSummary: first, messages: [], signal: live() })).toBe(first);
    const second = s.shorten!(first, 300);
    const block = (text: string) => {
      const all = text.split('\n');
      const start = all.indexOf('Facts:');
      let end = start + 1;
      while (end < all.length && all[end].startsWith('- ')) end++;
      return all.slice(start, end).join('\n');
    };
    expect(parseLedger(second)).toEqual(parseLedger(first));
    expect(renderLedger(parseLedger(second), 10_000, count)).toBe(renderLedger(parseLedger(first), 10_000, count));
    expect(block(second)).toBe(block(first));
  });

  test('shorten keeps the most recent and the most referenced facts, the same way every time', async () => {
    const s = createExtractiveSummarizer({ maxSummaryTokens: 2000 });
    const summary = await s.summarize({ messages: [user('Track these for me.'), ...rounds(1, 20), user('What about R-1002?'), user('R-1002 once more.')], signal: live() });
    const short = s.shorten!(summary, 150);
    expect(count(short)).toBeLessThanOrEqual(150);
    expect(s.shorten!(summary, 150)).toBe(short);
    const kept = parseLedger(short).facts.map((f) => f.value);
    expect(kept).toContain('R-1002');
    expect(kept).toContain('R-1020');
    expect(kept).not.toContain('R-1001');
    expect(short).toContain('Track these for me.');
  });

  test('items: a key holds no space or =, a value with a space is a JSON string, a fact named by its shape alone is its value', () => {
    const fact = (key: string, value: string, source = 'find @3'): LedgerFact => ({ key, value, source, firstSeen: 3, lastSeen: 3, references: 0, keyStrength: 2 });
    const ledger: Ledger = {
      facts: [
        fact('tracking number', 'TRK 023 757'), fact('date', 'May 27, 2024'), fact('url', 'https://example.com/?a=b&c=d'),
        fact('path', 'src/a b.ts'), fact('note', '"quoted" = x'), fact('order_id', 'ORD=5'), fact('value', 'x\\y'),
      ],
      seen: 7, messages: 3,
    };
    const block = renderLedger(ledger, 10_000, count);
    expect(block.split('\n')[2]).toBe('- [find @3] tracking_number="TRK 023 757" "May 27, 2024" url=https://example.com/?a=b&c=d "src/a b.ts" note="\\"quoted\\" = x" order_id=ORD=5 x\\y');
    expect(parseLedger(block).facts.map((f) => [f.key, f.value])).toEqual([
      ['tracking_number', 'TRK 023 757'], ['value', 'May 27, 2024'], ['url', 'https://example.com/?a=b&c=d'],
      ['value', 'src/a b.ts'], ['note', '"quoted" = x'], ['order_id', 'ORD=5'], ['value', 'x\\y'],
    ]);
    expect(renderLedger(parseLedger(block), 10_000, count)).toBe(block);
  });

  test("a listing's records share their keys: each key is written once on the line, as a table, and reads back the same", () => {
    const records = Array.from({ length: 6 }, (_, k) => ({ ref: `R-${2000 + k}`, total: `${10 + k}.50 EUR`, placed: `2024-06-${String(k + 1).padStart(2, '0')}` }));
    const ledger = extendLedger(emptyLedger(), [call('c1', 'list', { page: 1 }), result('c1', 'list', { records })]);
    const block = renderLedger(ledger, 10_000, count);
    const line = block.split('\n')[2];
    const keys = [...new Set(ledger.facts.map((f) => f.key))];
    expect(keys).toHaveLength(3);
    for (const key of keys) expect({ key, times: line.split(key).length - 1 }).toEqual({ key, times: 1 });
    // The same facts as items, one `key=value` each: the table is cheaper.
    const items = `- [list @2] ${ledger.facts.map((f) => `${f.key}=${/\s/.test(f.value) ? JSON.stringify(f.value) : f.value}`).join(' ')}`;
    expect(count(line)).toBeLessThan(count(items));
    expect(parseLedger(block).facts.map((f) => [f.key, f.value])).toEqual(ledger.facts.map((f) => [f.key, f.value]));
    expect(renderLedger(parseLedger(block), 10_000, count)).toBe(block);
  });

  test("a column of amounts in one unit names the unit once in its head; a row ends at its last value; the rarer columns come last", () => {
    // A listing under a record of its own (the owner), some records without a date, amounts in one currency.
    const orders = Array.from({ length: 6 }, (_, k) => ({ ref: `R-${3000 + k}`, total: { amount: 10 + k * 7.25, currency: 'EUR' }, ...(k % 3 === 2 ? {} : { placed: `2024-06-${String(k + 1).padStart(2, '0')}` }) }));
    const ledger = extendLedger(emptyLedger(), [call('c1', 'list', { owner: 'OWN-77' }), result('c1', 'list', { owner_id: 'OWN-77', orders })]);
    const block = renderLedger(ledger, 10_000, count);
    const line = block.split('\n').find((l) => l.startsWith('- [list @2]'))!;
    // The unit once, in the head; the numbers bare in their cells.
    expect(line.split('EUR').length - 1).toBe(1);
    expect(line).toMatch(/\|total\.amount \(EUR\)\|/);
    expect(line).toContain(' 10 ');
    // Columns that more records fill come first: no row ends in an empty cell.
    const body = line.slice(line.indexOf(': ') + 2);
    for (const row of body.split('; ')) expect({ row, endsEmpty: row.endsWith('""') }).toEqual({ row, endsEmpty: false });
    // Read back: the same facts, each amount with its unit, and the same bytes again.
    expect(parseLedger(block).facts.map((f) => [f.key, f.value]).sort()).toEqual(ledger.facts.map((f) => [f.key, f.value]).sort());
    expect(renderLedger(parseLedger(block), 10_000, count)).toBe(block);
  });

  test('amounts in two units, or written whole by the tool, keep their units in their cells', () => {
    const twoUnits = [{ ref: 'R-1', total: { amount: 12.5, currency: 'EUR' } }, { ref: 'R-2', total: { amount: 7, currency: 'GBP' } }, { ref: 'R-3', total: { amount: 9, currency: 'EUR' } }];
    const whole = [{ ref: 'R-1', took: '12.50 s' }, { ref: 'R-2', took: '7 s' }, { ref: 'R-3', took: '9 s' }];
    for (const [rows, values] of [[twoUnits, ['12.5 EUR', '7 GBP', '9 EUR']], [whole, ['12.50 s', '7 s', '9 s']]] as const) {
      const block = renderLedger(extendLedger(emptyLedger(), [call('c1', 'list', {}), result('c1', 'list', { rows })]), 10_000, count);
      expect(block).toMatch(/\|ref|ref\|/);
      expect(block).not.toMatch(/ \((?:EUR|GBP|s)\)/);
      for (const v of values) expect(block).toContain(`"${v}"`);
      expect(parseLedger(block).facts.map((f) => f.value)).toEqual(expect.arrayContaining([...values]));
      expect(renderLedger(parseLedger(block), 10_000, count)).toBe(block);
    }
  });

  test('a table as earlier versions wrote it (columns in order of first occurrence, every row in full) reads back to its facts', () => {
    const stored = ['Facts:', '- (5 of 5 facts kept, 3 messages read)', '- [list @2] owner_id|ref|orders.total|placed: OWN-77 "" "" ""; "" R-3000 "10 EUR" 2024-06-01; "" R-3001 "17.25 EUR" ""'].join('\n');
    expect(parseLedger(stored).facts.map((f) => [f.key, f.value])).toEqual([
      ['owner_id', 'OWN-77'], ['ref', 'R-3000'], ['orders.total', '10 EUR'], ['placed', '2024-06-01'], ['ref', 'R-3001'], ['orders.total', '17.25 EUR'],
    ]);
  });

  test("a line whose record's id another line holds names that id in its header; read back, the same facts and bytes", () => {
    // An order whose result names its shipment's tracking number, then the shipment's own result;
    // then the order read again with a changed total.
    const entries = [
      call('c1', 'get_order', { q: 'latest' }), result('c1', 'get_order', { order_id: 'ORD-31', tracking_number: 'TRK8812', placed_at: '2024-06-01', total: '12.50 EUR' }),
      call('c2', 'track', { carrier: 'ups' }), result('c2', 'track', { tracking_number: 'TRK8812', estimated_delivery: '2024-06-09', last_scan: '2024-06-05T10:00:00Z' }),
      call('c3', 'get_order', { q: 'latest' }), result('c3', 'get_order', { order_id: 'ORD-31', tracking_number: 'TRK8812', placed_at: '2024-06-01', total: '14 EUR' }),
    ];
    const ledger = extendLedger(emptyLedger(), entries);
    const block = renderLedger(ledger, 10_000, count);
    const lines = block.split('\n');
    const track = lines.find((l) => l.startsWith('- [track @4'))!;
    expect(track).toMatch(/^- \[track @4[^\]]* for tracking_number=TRK8812\] /);
    expect(track).toContain('estimated_delivery=2024-06-09');
    const again = lines.find((l) => l.startsWith('- [get_order @6'))!;
    expect(again).toMatch(/ for order_id=ORD-31\] /);
    expect(again).toContain('"14 EUR"');
    // The first line holds its own id: no reference there.
    expect(lines.find((l) => l.startsWith('- [get_order @2'))).not.toContain(' for ');
    // A reference is not a fact: the same facts read back, and the same bytes.
    const triples = (l: Ledger) => l.facts.map((f) => `${f.source} ${f.key}=${f.value}`).sort();
    expect(triples(parseLedger(block))).toEqual(triples(ledger));
    expect(renderLedger(parseLedger(block), 10_000, count)).toBe(block);
    // A summary of an earlier version (no reference) still reads.
    expect(triples(parseLedger(block.replace(/ for [^\]]+\]/g, ']')))).toEqual(triples(ledger));
    // Carried into the next fold and mentioned there, the line still names its record.
    const next = renderLedger(extendLedger(parseLedger(block), [assistant('The parcel is due 2024-06-09.')]), 10_000, count);
    expect(next.split('\n').find((l) => l.startsWith('- [track @4'))).toMatch(/ for tracking_number=TRK8812\] /);
  });

  test('a long listing whose records share dates and codes is read to its last record (a value repeated per record does not use up the facts a message may give)', () => {
    const rows = Array.from({ length: 200 }, (_, k) => ({ ref_id: `R-${1000 + k}`, amount: `${100 + k}.25 EUR`, created: `2024-03-0${1 + (k % 9)}`, last4: String(1000 + (k % 7)) }));
    const facts = factsFromJson({ rows }, 600);
    // 200 ids and 200 amounts, 9 dates and 7 last-4s: 416 distinct field values, 800 with each record's own.
    expect(facts.some((f) => f.value === 'R-1199')).toBe(true);
    expect(facts.filter((f) => f.value === '2024-03-01').map((f) => f.record)).toEqual(rows.flatMap((_, k) => (k % 9 === 0 ? [String(k)] : [])));
  });

  test('a block of listings fills its room: when facts are left out, it is within half a percent of it (4 tokens at least), or none of the next left out would still fit', () => {
    const entries = Array.from({ length: 6 }, (_, c) => {
      const rows = Array.from({ length: 40 }, (_, k) => ({
        item_id: `it_${(c * 977 + k * 7919).toString(36)}x${k}`, price: { value: 1000 + c * 100 + k, currency: 'JPY' },
        created: `2024-0${1 + (k % 9)}-${String(1 + ((k * 7) % 28)).padStart(2, '0')}`, last4: String(1000 + ((k * 37 + c) % 9000)),
      }));
      return [call(`c${c}`, 'list_items', { owner: `O-${c}` }), result(`c${c}`, 'list_items', { rows })];
    }).flat();
    const ledger = extendLedger(emptyLedger(), entries);
    for (const room of [300, 800, 1500, 3000]) {
      const block = renderLedger(ledger, room, count);
      expect(ledgerStats(block)!.kept).toBeLessThan(ledger.facts.length);
      const used = count(block);
      // Short by more than that, the block is full when none of the next 64 best-ranked facts left
      // out (the run of misses after which the ledger takes its room as full) would fit beside
      // those written: each is priced by writing the block with it added.
      const id = (f: LedgerFact) => `${f.source}\u0000${f.key}\u0000${f.value}`;
      // Written facts matched to the ledger's by source, key and value (a value two records share is matched twice).
      const left = new Map<string, number>();
      for (const f of parseLedger(block).facts) left.set(id(f), (left.get(id(f)) ?? 0) + 1);
      const kept = new Set<number>();
      ledger.facts.forEach((f, j) => {
        const n = left.get(id(f)) ?? 0;
        if (n > 0) {
          kept.add(j);
          left.set(id(f), n - 1);
        }
      });
      expect(kept.size).toBe(ledgerStats(block)!.kept);
      const next = rankFacts(ledger.facts).filter((i) => !kept.has(i)).slice(0, 64);
      const fitsBeside = next.some((i) => count(renderLedger({ ...ledger, facts: ledger.facts.filter((_, j) => j === i || kept.has(j)) }, 100_000, count)) <= room);
      expect({ room, fits: used <= room, full: room - used <= Math.max(4, room / 200) || !fitsBeside }).toEqual({ room, fits: true, full: true });
    }
  });

  test('a block of the older form (one `- key: value` line per fact) is read the same', () => {
    const older = ['Facts:', '- (3 of 4 facts kept, 7 messages read)', '- [lookup @4]', '- ref: R-1002', '- placed: 2024-05-03', '- [lookup @2 ×1 @7]', '- ref: R-1001', 'Errors:', '- x'].join('\n');
    const ledger = parseLedger(older);
    expect(ledger.facts.map((f) => [f.source, f.key, f.value, f.references, f.lastSeen])).toEqual([
      ['lookup @4', 'ref', 'R-1002', 0, 4], ['lookup @4', 'placed', '2024-05-03', 0, 4], ['lookup @2', 'ref', 'R-1001', 1, 7],
    ]);
    expect(ledger).toMatchObject({ seen: 4, messages: 7 });
    expect(renderLedger(ledger, 10_000, count).split('\n').slice(2)).toEqual(['- [lookup @4] ref=R-1002 placed=2024-05-03', '- [lookup @2 ×1 @7] ref=R-1001']);
  });

  test('an older summary whose Facts section is a flat list is read as a ledger', () => {
    const ledger = parseLedger('Summary of earlier messages (working memory, oldest items first):\nFacts:\n- order_id: ORD-5\n- 2024-05-01\nErrors:\n- x');
    expect(factsOf(ledger)).toEqual(['order_id: ORD-5', 'value: 2024-05-01']);
    expect(ledger.messages).toBe(0);
  });

  test('the split: title and goal first, then the ledger, then the rest of the working memory', () => {
    const memory = emptyMemory();
    memory.Goal.set('g', 'Track these for me.');
    for (let i = 0; i < 30; i++) memory['Tool calls'].set(`t${i}`, `lookup(ref=R-${1000 + i}, note="a rather long argument that takes room")`);
    const ledger = extendLedger(emptyLedger(), rounds(1, 30));
    // Room for the ledger's share and, in what it leaves, at least one tool-call line (~22 tokens).
    const room = 600;
    const text = writeSummary(memory, ledger, room, count);
    expect(count(text)).toBeLessThanOrEqual(room);
    const factsPart = text.slice(text.indexOf('Facts:'));
    expect(count(factsPart)).toBeGreaterThan(0.6 * (room - count('Summary of earlier messages (working memory, oldest items first):\nGoal:\n- Track these for me.')));
    expect(text).toContain('Tool calls:');
  });
});

describe('properties', () => {
  const valueArb = fc.oneof(
    fc.integer({ min: 1, max: 999_999 }).map((n) => `rec_${n}`),
    fc.integer({ min: 1000, max: 9999 }).map((n) => `A${n}B`),
    fc.date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)),
    fc.stringMatching(/^[a-z]{3,8}@[a-z]{3,8}\.com$/),
  );

  test('a rendered ledger never exceeds its room', () => {
    fc.assert(fc.property(
      fc.array(fc.array(valueArb, { minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 12 }), fc.integer({ min: 0, max: 400 }),
      (batches, room) => {
        const entries = batches.map((values, i) => result(`c${i}`, `tool_${i % 3}`, Object.fromEntries(values.map((v, k) => [`field_${k}_id`, v]))));
        const block = renderLedger(extendLedger(emptyLedger(), entries), room, cheap);
        expect(cheap(block)).toBeLessThanOrEqual(room);
        expect(renderLedger(parseLedger(block), room, cheap)).toBe(block);
      },
    ), propertyParams());
  });

  test('any key and any one-line value read back: the values exactly, the block byte for byte', () => {
    // Values as `normalized` leaves them: one line, no space at either end; keys of any text.
    const text = fc.string({ unit: fc.constantFrom('a', 'Z', '7', ' ', '=', '"', '\\', ':', ';', '[', ']', '@', '×', '-', '_', '.', '/', 'é'), minLength: 1, maxLength: 12 });
    const value = text.map((v) => v.replace(/\s+/g, ' ').trim()).filter((v) => v.length > 0);
    const key = fc.oneof(text, fc.constantFrom('date', 'path', 'number', 'value', 'url'));
    fc.assert(fc.property(
      fc.array(fc.record({ key, value, source: fc.constantFrom('find @2', 'user @5', 'a_b @9') }), { minLength: 1, maxLength: 10 }),
      (raw) => {
        const facts: LedgerFact[] = raw.map((f) => ({ ...f, firstSeen: 1, lastSeen: 9, references: 0, keyStrength: 2 }));
        const block = renderLedger({ facts, seen: facts.length, messages: 9 }, 100_000, cheap);
        const back = parseLedger(block);
        expect(back.facts.map((f) => f.value).sort()).toEqual(facts.map((f) => f.value).sort());
        expect(back.facts.every((f) => !/[\s="[\]]/.test(f.key))).toBe(true);
        expect(renderLedger(back, 100_000, cheap)).toBe(block);
        expect(withoutLedgerBlocks(`Goal:\n- g\n${block}\nErrors:\n- e`)).toBe('Goal:\n- g\nErrors:\n- e');
      },
    ), propertyParams());
  });

  test('property: facts whose keys repeat read back exactly, in order, with their keys, byte for byte, within the room', () => {
    // A few keys, so records repeat them; values of any one-line text, the characters a table line uses among them.
    const text = fc.string({ unit: fc.constantFrom('a', 'Z', '7', ' ', '=', '"', '\\', ':', ';', '|', '[', ']', '-', '.', '/'), minLength: 1, maxLength: 10 });
    const value = fc.oneof(text.map((v) => v.replace(/\s+/g, ' ').trim()).filter((v) => v.length > 0), fc.constantFrom('""', '-', ';', 'x;', 'a:', '|', '12.50 EUR', '7 EUR', '-3 s', '1,5 s', '2 (x)'));
    const key = fc.constantFrom('id', 'total', 'items.sku', 'date', 'value', 'a:b', 'c|d', 'e;f');
    // Some values joined from a number and a unit field: a column of them may name the unit once.
    let unitHeads = 0;
    fc.assert(fc.property(
      fc.array(fc.oneof(
        fc.record({ key, value, source: fc.constantFrom('find @2', 'list @4'), unitFromField: fc.boolean() }),
        fc.record({ key: fc.constant('price'), value: fc.constantFrom('12.50 EUR', '7 EUR', '30 EUR'), source: fc.constantFrom('find @2', 'list @4'), unitFromField: fc.boolean() }),
      ), { minLength: 1, maxLength: 24 }),
      fc.integer({ min: 0, max: 600 }),
      (raw, room) => {
        const facts: LedgerFact[] = raw.map(({ unitFromField, ...f }) => ({ ...f, firstSeen: 1, lastSeen: 9, references: 0, keyStrength: 2, ...(unitFromField ? { unitFromField } : {}) }));
        const whole = renderLedger({ facts, seen: facts.length, messages: 9 }, 100_000, count);
        if (/ \((?:EUR|s)\)[|:]/.test(whole)) unitHeads++;
        const back = parseLedger(whole);
        // A key that only names a shape (`id`, `date`, `value`) may be written as the value alone and read back as `value`.
        const keyOf = (k: string) => (['id', 'date', 'value'].includes(k) ? 'a shape' : k.replace(/[\s="[\]]+/g, '_'));
        const bySource = (list: readonly { source: string; key: string; value: string }[]) => ['find @2', 'list @4'].flatMap((s) => list.filter((f) => f.source === s).map((f) => [f.source, keyOf(f.key), f.value]));
        expect(bySource(back.facts)).toEqual(bySource(facts));
        expect(renderLedger(back, 100_000, count)).toBe(whole);
        const block = renderLedger({ facts, seen: facts.length, messages: 9 }, room, count);
        expect(count(block)).toBeLessThanOrEqual(room);
        expect(renderLedger(parseLedger(block), room, count)).toBe(block);
      },
    ), propertyParams());
    expect(unitHeads).toBeGreaterThan(0);
  });

  test('a fact seen in fold 1 and mentioned again later survives fold 2', async () => {
    await fc.assert(fc.asyncProperty(
      fc.uniqueArray(fc.integer({ min: 1, max: 99_999 }), { minLength: 2, maxLength: 40, size: 'max' }), fc.nat(), fc.integer({ min: 1, max: 30 }), fc.integer({ min: 120, max: 600 }),
      async (ids, pick, later, maxSummaryTokens) => {
        const values = ids.map((n) => `rec_${n}`);
        const half = Math.max(1, Math.floor(values.length / 2));
        const first = values.slice(0, half);
        const fold1 = [user('Please look these up.'), ...first.map((v, i) => result(`a${i}`, 'lookup', { record_id: v }))];
        const s = createExtractiveSummarizer({ maxSummaryTokens, countTokens: cheap });
        const one = await s.summarize({ messages: fold1, signal: live() });
        // A small summary cannot hold every record of a long first fold: the property is about
        // the facts it did keep (the newest ones, at least one of them).
        const kept = parseLedger(one).facts.map((f) => f.value).filter((v) => first.includes(v));
        expect(kept).toContain(first[first.length - 1]);
        const chosen = kept[pick % kept.length];
        const fold2 = [
          ...values.slice(half).map((v, i) => result(`b${i}`, 'lookup', { record_id: v })),
          ...Array.from({ length: later }, (_, i) => result(`x${i}`, 'scan', { item_id: `item_${i}_${ids[0]}` })),
          assistant(`I checked ${chosen} again.`),
        ];
        const two = await s.summarize({ previousSummary: one, messages: fold2, signal: live() });
        expect(cheap(two)).toBeLessThanOrEqual(maxSummaryTokens);
        // The answer that mentions it states it, so it may be carried there rather than in the block.
        expect(ledgerOf(two).facts.map((f) => f.value)).toContain(chosen);
      },
    ), { ...propertyParams(), numRuns: Math.min(propertyParams().numRuns, 200) });
  });
});

describe('a fact is written once: the Facts block leaves out what the other sections state', () => {
  // Rounds of a chat: a request naming some records and a ticket, a lookup of each record, an
  // answer naming some of them again and a note of its own. The ticket and the note occur in no
  // tool result: they are facts of the turns alone. Every value is a distinct identifier, email
  // or date, so where it occurs is plain.
  const roundArb = fc.record({
    ticket: fc.integer({ min: 100_000, max: 999_999 }),
    asked: fc.uniqueArray(fc.integer({ min: 10_000, max: 99_999 }), { minLength: 1, maxLength: 3, size: 'max' }),
    email: fc.boolean(),
    answered: fc.nat(3),
  });
  const chat = (rounds: { ticket: number; asked: number[]; email: boolean; answered: number }[]): TranscriptEntry[] => rounds.flatMap((r, k) => {
    const ids = r.asked.map((n) => `REC-${n}`);
    const mail = `owner${k}.${r.asked[0]}@example.org`;
    return [
      user(`Please check ${ids.join(' and ')}${r.email ? ` for ${mail}` : ''} (ticket TKT-${r.ticket}).`),
      ...ids.flatMap((id, i) => [call(`c${k}_${i}`, 'lookup', { record: id }), result(`c${k}_${i}`, 'lookup', { record: id, owner: mail, updated: `2024-0${(k % 9) + 1}-1${i}` })]),
      assistant(`Checked ${ids.slice(0, r.answered).join(', ') || 'nothing yet'}; filed as NOTE-${r.ticket + 7}.`),
    ];
  });
  /** Where a value stands alone in a text (not glued to letters, digits, `-` or `.` around it): the oracle, apart from the ledger's rules. */
  const standsIn = (text: string, value: string) => new RegExp(`(?<![\\w.-])${value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w-])`).test(text);
  const blockLines = (summary: string) => {
    const all = summary.split('\n');
    const start = all.indexOf('Facts:');
    if (start < 0) return { block: [] as string[], rest: summary };
    let end = start + 1;
    while (end < all.length && all[end].startsWith('- ')) end++;
    return { block: all.slice(start + 2, end), rest: [...all.slice(0, start), ...all.slice(end)].join('\n') };
  };

  test('property: a fact of a request or an answer is not written in the block when the rest of the summary states it', async () => {
    await fc.assert(fc.asyncProperty(fc.array(roundArb, { minLength: 1, maxLength: 6 }), fc.integer({ min: 150, max: 1200 }), async (rounds, room) => {
      const s = createExtractiveSummarizer({ maxSummaryTokens: room });
      const summary = await s.summarize({ messages: chat(rounds), signal: live() });
      const { block, rest } = blockLines(summary);
      for (const line of block) {
        const turn = /^- \[(user|assistant) @\d+[^\]]*\] (.*)$/.exec(line);
        if (!turn) continue;
        for (const value of turn[2].split(' ').map((item) => item.slice(item.indexOf('=') + 1))) {
          expect({ value, inRest: standsIn(rest, value) }).toEqual({ value, inRest: false });
        }
      }
    }), { ...propertyParams(), numRuns: Math.min(propertyParams().numRuns, 200) });
  });

  test('property: what a summary holds is read back whole (every value it holds is a fact of its ledger), and a fold with nothing new keeps it as it is', async () => {
    await fc.assert(fc.asyncProperty(fc.array(roundArb, { minLength: 1, maxLength: 6 }), fc.integer({ min: 150, max: 1200 }), async (rounds, room) => {
      const s = createExtractiveSummarizer({ maxSummaryTokens: room });
      const one = await s.summarize({ messages: chat(rounds), signal: live() });
      const values = chat(rounds).flatMap((e) => [e.text, ...e.calls.map((c) => c.arguments), ...e.results.map((r) => r.content)].join(' ').match(/(?:REC|TKT|NOTE)-\d+|owner\d+\.\d+@example\.org|2024-\d\d-\d\d/g) ?? []);
      const held = (summary: string) => [...new Set(values)].filter((v) => standsIn(summary, v)).sort();
      const readBack = new Set(ledgerOf(one).facts.map((f) => f.value));
      expect(held(one).filter((v) => !readBack.has(v))).toEqual([]);
      expect(await s.summarize({ previousSummary: one, messages: [], signal: live() })).toBe(one);
    }), { ...propertyParams(), numRuns: Math.min(propertyParams().numRuns, 200) });
  });
});

describe('summaries written by a model', () => {
  const chat: TranscriptEntry[] = [
    user('Please cancel ZFA04Y for ann_77.'),
    call('c1', 'get_details', { ref: 'ZFA04Y' }),
    result('c1', 'get_details', { ref: 'ZFA04Y', user_id: 'ann_77', paid: '$120.00', created_at: '2024-05-01T10:00:00' }),
  ];

  test('the facts a summary left out are appended as a ledger block; those it kept are counted', () => {
    const ledger = extendLedger(emptyLedger(), chat);
    const checked = appendMissingFacts('Goal: cancel ZFA04Y.', ledger, 200, count);
    expect(checked.startsWith('Goal: cancel ZFA04Y.\n\nFacts:\n')).toBe(true);
    expect(checked).toContain(' user_id=ann_77');
    expect(checked).toContain(' created_at=2024-05-01T10:00:00');
    expect(checked.match(/ZFA04Y/g)).toHaveLength(1);
    expect(ledgerStats(checked)).toEqual({ seen: ledger.seen, kept: ledger.facts.length });
    // A summary that kept everything gets the meta line only; a copied block is replaced, not doubled.
    const full = appendMissingFacts(`All of it: ${ledger.facts.map((f) => f.value).join(', ')}`, ledger, 200, count);
    expect(full.split('\n').slice(-2)).toEqual(['Facts:', `- (${ledger.facts.length} of ${ledger.seen} facts kept, 3 messages read; ${POSITION_LEGEND})`]);
    expect(appendMissingFacts(checked, ledger, 200, count)).toBe(checked);
    expect(withoutLedgerBlocks(checked)).toBe('Goal: cancel ZFA04Y.');
  });

  test('the rolling driver checks a summarizer that asks for it and reports facts seen and kept', async () => {
    const terse: Summarizer = { name: 'terse', inputBudgetTokens: 10_000, factCheckTokens: 300, summarize: async () => 'The user wants a cancellation.' };
    const { summary, factsSeen, factsKept } = await summarizeRolling(terse, { messages: chat, signal: live(), countTokens: count });
    expect(summary).toContain('ZFA04Y');
    expect(summary).toContain('ann_77');
    expect(factsSeen).toBeGreaterThanOrEqual(4);
    expect(factsKept).toBe(factsSeen);
    // The next fold carries the ledger on: numbering goes on, facts are not counted twice.
    const next = await summarizeRolling(terse, { previousSummary: summary, messages: [user('And ann_77 again.')], signal: live(), countTokens: count });
    expect(next.factsSeen).toBe(factsSeen);
    expect(parseLedger(next.summary).messages).toBe(4);
    // A summarizer that does not ask is left alone; the extractive one reports its own ledger.
    const plain = await summarizeRolling({ ...terse, factCheckTokens: undefined }, { messages: chat, signal: live(), countTokens: count });
    expect(plain).toEqual({ summary: 'The user wants a cancellation.', calls: 1 });
    const extractive = await summarizeRolling(createExtractiveSummarizer(), { messages: chat, signal: live(), countTokens: count });
    expect(extractive.factsKept).toBe(extractive.factsSeen);
  });

  test('the LLM summarizer asks for the check by default, with as much room as its summary has', () => {
    expect(createLlmSummarizer({ baseURL: 'http://127.0.0.1:1/v1', model: 'm', maxTokens: 1000 }).factCheckTokens).toBe(factCheckRoom(1000));
    expect(factCheckRoom(1000)).toBe(1000);
    expect(createLlmSummarizer({ baseURL: 'http://127.0.0.1:1/v1', model: 'm', checkFacts: false }).factCheckTokens).toBeUndefined();
  });
});

corpusDescribe(describe)('model summaries on the real conversations', () => {
  test('a model summary that keeps no identifier still carries at least as many facts as the extractive summary', async () => {
    const extractive = createExtractiveSummarizer({ countTokens: count });
    const model: Summarizer = {
      name: 'model', inputBudgetTokens: 16_000, factCheckTokens: factCheckRoom(800),
      summarize: async (r: SummarizeRequest) => `The user and the assistant exchanged ${r.messages.length} messages.`,
    };
    let compared = 0;
    for (const conversation of loadCorpus().slice(0, 60)) {
      const messages = transcriptOf(conversation.messages.slice(1), openaiChatLens);
      const a = await summarizeRolling(extractive, { messages, signal: live(), countTokens: count });
      const b = await summarizeRolling(model, { messages, signal: live(), countTokens: count });
      if (a.factsSeen === undefined) continue;
      compared++;
      expect(b.factsSeen).toBe(a.factsSeen);
      expect(b.factsKept!).toBeGreaterThanOrEqual(a.factsKept!);
    }
    expect(compared).toBeGreaterThan(50);
  });
});
