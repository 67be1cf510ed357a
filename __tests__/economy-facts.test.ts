import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { extractFacts, isIdKey, normalize, retention, type Fact, type FactKind } from '../bench/economy/fact-checker.js';
import { fairBudget } from '../bench/budget.js';
import { openaiChatLens } from '../src/formats/openai-chat/lens.js';
import { lastRequest, measureRetention, percentile, reusedFacts, valuesCeiling, type RetentionSystem } from '../bench/economy/retention.js';
import { DOMAINS, generateCodeAgentConversation, generateOpsAgentConversation, generateSupportAgentConversation } from '../bench/fixtures/domains/index.js';
import { createTokenCounter, validateMessages, type OpenAIChatMessage } from '../src/index.js';

const user = (content: string): OpenAIChatMessage => ({ role: 'user', content });
const tool = (id: string, content: string): OpenAIChatMessage => ({ role: 'tool', tool_call_id: id, content });
const call = (id: string, name: string, args: unknown): OpenAIChatMessage => ({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] });

/** value -> kind of the facts of one user message. */
function factsOf(text: string): Map<string, FactKind> {
  return new Map(extractFacts([user(text)]).map((f) => [f.value, f.kind]));
}

describe('fact checker: each rule finds its shape', () => {
  const cases: [string, string, FactKind][] = [
    ['see https://example.org/a/b?q=1.', 'https://example.org/a/b?q=1', 'url'],
    ['write to ana.lee+x@mail.example.co.uk today', 'ana.lee+x@mail.example.co.uk', 'email'],
    ['trace 123e4567-e89b-12d3-a456-426614174000 failed', '123e4567-e89b-12d3-a456-426614174000', 'uuid'],
    ['it throws at src/net/retry.ts:142:7 now', 'src/net/retry.ts:142:7', 'line-ref'],
    ['open lib/io/reader.py please', 'lib/io/reader.py', 'path'],
    ['config in /etc/app/settings', '/etc/app/settings', 'path'],
    ['due 2025-03-04 at noon', '2025-03-04', 'date'],
    ['created 2025-03-04T10:22:05Z by the job', '2025-03-04T10:22:05Z', 'date'],
    ['arrives on March 3, 2025.', 'March 3, 2025', 'date'],
    ['arrives on 3 Mar 2025', '3 Mar 2025', 'date'],
    ['born 04/11/1987', '04/11/1987', 'date'],
    ['we run v20.11.1 here', 'v20.11.1', 'version'],
    ['upgrade to 5.4.5-rc.1 first', '5.4.5-rc.1', 'version'],
    ['call +44 20 7946 0958 tomorrow', '+44 20 7946 0958', 'phone'],
    ['call (415) 555-0132 tomorrow', '(415) 555-0132', 'phone'],
    ['call 415-555-0133 tomorrow', '415-555-0133', 'phone'],
    ['it cost $1,234.50 in total', '$1,234.50', 'amount'],
    ['it cost 149,90 € in total', '149,90 €', 'amount'],
    ['it cost EUR 20 in total', 'EUR 20', 'amount'],
    ['it cost 1200 JPY in total', '1200 JPY', 'amount'],
    ['it cost 20 dollars in total', '20 dollars', 'amount'],
    ['it took 250 ms and 1.5 GB', '250 ms', 'quantity'],
    ['it took 250 ms and 1.5 GB', '1.5 GB', 'quantity'],
    ['a 12% drop', '12%', 'quantity'],
    ['commit 9f8e7d6 broke it', '9f8e7d6', 'hash'],
    ['my user is ana_lopez_4412, thanks', 'ana_lopez_4412', 'code'],
    ['item QMX017 is late', 'QMX017', 'code'],
    ['order ORD-2025-004211 is late', 'ORD-2025-004211', 'code'],
    ['the id: BXRTLM', 'BXRTLM', 'keyed'],
    ['zip 77243 please', '77243', 'number'],
    ['about 1,250 people', '1,250', 'number'],
  ];
  test.each(cases)('%j gives %j (%s)', (text, value, kind) => {
    expect(factsOf(text).get(value)).toBe(kind);
  });

  test('a line reference gives its path too; a span taken by one rule is not split by a later one', () => {
    const facts = factsOf('see src/net/retry.ts:142 and 2025-03-04 and ORD-2025-004211');
    expect(facts.get('src/net/retry.ts')).toBe('path');
    for (const piece of ['142', '2025', '004211', '03', '04']) expect(facts.has(piece)).toBe(false);
  });

  test('JSON: id-shaped keys give their value whole, number leaves of 3+ digits count, upper-case codes count', () => {
    const facts = extractFacts([
      call('c1', 'get', { order_id: 'BXRTLM', userId: 'mia', count: 3, page: 12 }),
      tool('c1', JSON.stringify({ origin: 'KPX', status: 'available', price: 523, seats: 9, first_name: 'Ana', methods: { voucher_6012358: { amount: 250 } }, address1: 'Elm', ok: true, code: 'SPRING' })),
    ]);
    const byValue = new Map(facts.map((f) => [f.value, f]));
    expect(byValue.get('BXRTLM')).toMatchObject({ kind: 'keyed', source: 'tool-call', message: 0 });
    expect(byValue.get('mia')?.kind).toBe('keyed');
    expect(byValue.get('SPRING')?.kind).toBe('keyed');
    expect(byValue.get('KPX')?.kind).toBe('code');
    expect(byValue.get('523')).toMatchObject({ kind: 'number', source: 'tool-result', message: 1 });
    expect(byValue.get('voucher_6012358')?.kind).toBe('code');
    expect(byValue.get('250')?.kind).toBe('number');
    for (const no of ['3', '12', '9', 'available', 'Ana', 'address1', 'Elm', 'true', 'first_name', 'origin']) expect(byValue.has(no)).toBe(false);
  });

  test('key shape: id, *_id, *Id, code, number, hash ... and not other words', () => {
    for (const k of ['id', 'ID', 'user_id', 'userId', 'order-id', 'invoice_number', 'trackingNumber', 'errorCode', 'postal_code', 'sha', 'commit_hash', 'ref', 'ids']) expect(isIdKey(k)).toBe(true);
    for (const k of ['name', 'status', 'first_name', 'identity', 'video', 'idle', 'paid', 'address1', 'codec', 'numbered']) expect(isIdKey(k)).toBe(false);
  });
});

describe('fact checker: what is not a fact', () => {
  test('prose words, small numbers and ordinals give nothing', () => {
    const text = 'Hello! Please check my booking for tomorrow, I have 2 bags, 15 friends and it is the 21st time. OK? Thanks a LOT, API and JSON are fine.';
    expect(extractFacts([user(text)])).toEqual([]);
  });

  test('the system prompt and assistant prose are not sources; tool-call arguments are', () => {
    const facts = extractFacts([
      { role: 'system', content: 'Today is 2024-05-15; policy P-1234 applies; amounts over $500 need approval.' },
      { role: 'assistant', content: 'Your order ORD-77812 is confirmed for $99.' },
      call('c1', 'lookup', { query: 'ABC-9981' }),
      tool('c1', 'nothing found'),
    ]);
    expect(facts.map((f) => f.value)).toEqual(['ABC-9981']);
    expect(facts[0].source).toBe('tool-call');
  });

  test('facts are deduplicated by normalized value, first occurrence kept', () => {
    const facts = extractFacts([user('order ORD-1234 for $1,200'), tool('x', '{"order_id":"ord-1234","total":"$1200"}')]);
    expect(facts.map((f) => [f.value, f.message])).toEqual([['ORD-1234', 0], ['$1,200', 0]]);
  });
});

describe('retention math', () => {
  const original: OpenAIChatMessage[] = [
    { role: 'system', content: 'Be brief.' },
    user('My order is ORD-2025-1001, placed 2025-02-03, total $1,234.50.'),
    call('c1', 'get_order', { order_id: 'ORD-2025-1001' }),
    tool('c1', JSON.stringify({ order_id: 'ORD-2025-1001', tracking_number: '1Z999AA10123456784', zip: 523, note: 'see src/a/b.ts:42' })),
    { role: 'assistant', content: 'Found it.' },
  ];
  const facts = extractFacts(original);

  test('the facts of the example', () => {
    expect(facts.map((f) => f.value)).toEqual(['ORD-2025-1001', '2025-02-03', '$1,234.50', '1Z999AA10123456784', '523', 'src/a/b.ts:42', 'src/a/b.ts']);
  });

  test('the whole original keeps every fact; an empty view none', () => {
    expect(retention(original, original)).toEqual({ facts: 7, kept: 7, share: 1, missing: [] });
    expect(retention(original, [])).toEqual({ facts: 7, kept: 0, share: 0, missing: facts.map((f) => f.value) });
    expect(retention([user('hello there')], [])).toEqual({ facts: 0, kept: 0, share: 1, missing: [] });
  });

  test('normalization: case, whitespace, thousands separators, JSON escaping; a value glued to more digits is not kept', () => {
    const summary = '[Summary] order ord-2025-1001 placed 2025-02-03   total $1234.50; zip 15230';
    const view: OpenAIChatMessage[] = [
      user(summary),
      call('z', 'note', { text: JSON.stringify({ quoted: 'tracking "1Z999AA10123456784"' }) }),
      tool('z', '{"note":"at src\\/a\\/b.ts:42"}'),
    ];
    const r = retention(original, view);
    expect(r.missing).toEqual(['523']);
    expect(r).toMatchObject({ facts: 7, kept: 6 });
    expect(r.share).toBeCloseTo(6 / 7, 10);
    expect(normalize('  A\\u0042c \n\t 1,234,567.5 ')).toBe('abc 1234567.5');
  });

  test('a comma between table cells is not a thousands separator: a result carried whole keeps its cells', () => {
    // A CSV row whose cell ends in a digit, followed by a cell of three digits and more.
    const csv = 'name,node,size,limit\nworker-7,node-b07,732Mi,2.00GiB\nworker-8,node-c12,104,2048\n';
    const original: OpenAIChatMessage[] = [user('sizes please'), call('s', 'sizes', {}), tool('s', csv)];
    const facts = extractFacts(original);
    expect(facts.map((f) => f.value)).toEqual(expect.arrayContaining(['732Mi']));
    expect(retention(original, original)).toMatchObject({ kept: facts.length, missing: [] });
    // Real thousands separators still go, where the number starts on its own.
    expect(normalize('node-b07,732Mi total $1,234,567.50 and 12,500 rows; 0,732')).toBe('node-b07,732mi total $1234567.50 and 12500 rows; 0,732');
  });

  test('percentile is nearest-rank; lastRequest cuts a final assistant message only', () => {
    expect(percentile([5, 1, 4, 2, 3, 6, 7, 8, 9, 10], 0.1)).toBe(1);
    expect(percentile([0.9, 0.1, 0.5], 0.1)).toBe(0.1);
    expect(percentile([3, 1, 2, 4], 0.5)).toBe(2);
    expect(Number.isNaN(percentile([], 0.1))).toBe(true);
    expect(lastRequest(original)).toHaveLength(4);
    expect(lastRequest(original.slice(0, 4))).toHaveLength(4);
  });

  test('reused facts are those a later message mentions again', () => {
    const msgs = [...original.slice(0, 4), { role: 'assistant', content: 'Tracking 1Z999AA10123456784.' }];
    expect(reusedFacts(msgs, extractFacts(msgs)).map((f: Fact) => f.value).sort()).toEqual(['1Z999AA10123456784', 'ORD-2025-1001']);
  });

  test('measureRetention aggregates per system and share', async () => {
    const convs = [original, [...original.slice(0, 2), { role: 'assistant', content: 'ok' }]];
    const everything: RetentionSystem = { name: 'everything', run: (m) => m };
    const lastOnly: RetentionSystem = { name: 'last only', run: (m) => m.slice(-1) };
    const broken: RetentionSystem = { name: 'broken', run: () => { throw new Error('no'); } };
    // The last message sent, everything else recallable: all of it is reachable.
    const recall: RetentionSystem = { name: 'recall', run: (m) => ({ view: m.slice(-1), recallable: m.slice(0, -1) }) };
    const rows = await measureRetention({ conversations: convs, shares: [0.5, 2], rule: 'total', systems: [everything, lastOnly, broken, recall] });
    expect(rows.map((r) => `${r.share} ${r.system}`)).toEqual(['0.5 everything', '0.5 last only', '0.5 broken', '0.5 recall', '2 everything', '2 last only', '2 broken', '2 recall']);
    const [all, last, bad, withRecall, allWide] = rows;
    expect(withRecall.meanKept).toBeCloseTo(last.meanKept, 10);
    expect(withRecall).toMatchObject({ meanReachable: 1, worstTenthReachable: 1 });
    expect(last.meanReachable).toBeCloseTo(last.meanKept, 10);
    expect(all).toMatchObject({ conversations: 2, meanKept: 1, worstTenth: 1, withinBudget: 0, valid: 1, errors: 0 });
    // Over the budget, a view keeps nothing that counts; within it and valid, all it holds.
    expect(all).toMatchObject({ meanKeptGood: 0, worstTenthGood: 0 });
    expect(allWide).toMatchObject({ withinBudget: 1, valid: 1, meanKeptGood: 1, worstTenthGood: 1 });
    // The last message of the first request is its tool result (5 of 7 facts), an orphan result:
    // invalid; that of the second is its user message (all 3 facts), valid.
    expect(last.valid).toBe(0.5);
    expect(last.worstTenth).toBeCloseTo(5 / 7, 10);
    expect(last.meanKept).toBeCloseTo((5 / 7 + 1) / 2, 10);
    // At twice the tokens only the valid one (all 3 facts of the second request) counts.
    expect(rows[5]).toMatchObject({ meanKeptGood: 0.5, worstTenthGood: 0 });
    expect(bad).toMatchObject({ meanKept: 0, valid: 0, withinBudget: 0, errors: 2 });
    expect(all.meanFacts).toBe((7 + 3) / 2);
    // What the views miss, by kind: nothing for the whole view; for the last message alone, the
    // first request's two facts outside its tool result; runs that threw count none.
    expect(all.missedByKind).toEqual({});
    const lostKinds: Record<string, number> = {};
    const firstRequest = lastRequest(original);
    const kept = extractFacts(firstRequest.slice(-1)).map((f) => f.key);
    for (const f of extractFacts(firstRequest)) if (!kept.includes(f.key)) lostKinds[f.kind] = (lostKinds[f.kind] ?? 0) + 1;
    expect(Object.values(lostKinds).reduce((a, b) => a + b, 0)).toBe(2);
    expect(last.missedByKind).toEqual(lostKinds);
    expect(bad.missedByKind).toEqual({});
  });

  test('values-only ceiling: the floor carries its facts free, the room takes the cheapest per fact carried, a value inside another counts', () => {
    const counter = createTokenCounter();
    const request: OpenAIChatMessage[] = [original[0], user('Earlier: ticket TCK-55501 opened 2024-01-02.'), { role: 'assistant', content: 'Noted.' }, ...original.slice(1, 4)];
    const facts = extractFacts(request);
    // No room beyond the floor (the last user turn and what follows it): the floor's facts only.
    expect(facts.filter((f) => f.message < 3).map((f) => f.value)).toEqual(['TCK-55501', '2024-01-02']);
    expect(valuesCeiling(request, facts, 10, 10, counter)).toBeCloseTo((facts.length - 2) / facts.length, 10);
    // Room for every value: every fact.
    expect(valuesCeiling(request, facts, 10_000, 10, counter)).toBe(1);
    // Facts of an earlier message, a floor that holds none of them and is over the budget: nothing.
    const earlier: OpenAIChatMessage[] = [user('ORD-2025-1001 and 523, src/a/b.ts:42'), user('nothing here')];
    expect(valuesCeiling(earlier, extractFacts(earlier.slice(0, 1)), 5, 50, counter)).toBe(0);
    // Room for the longer path only: written first, it carries the shorter one inside it.
    const path = extractFacts(original).filter((f) => f.key.startsWith('src/'));
    expect(path.map((f) => f.value)).toEqual(['src/a/b.ts:42', 'src/a/b.ts']);
    const pathCost = counter.text(' src/a/b.ts:42');
    expect(valuesCeiling([user('hi')], path, 100 + pathCost, 100, counter)).toBe(1);
    expect(valuesCeiling([user('hi')], path, 100 + pathCost - 1, 100, counter)).toBe(0.5);
  });

  test('the checker shares no code with src/summarize', () => {
    const source = readFileSync(fileURLToPath(new URL('../bench/economy/fact-checker.ts', import.meta.url)), 'utf8');
    const imports = [...source.matchAll(/from '([^']+)'/g)].map((m) => m[1]);
    expect(imports).toEqual(['../../src/index.js']);
    expect(source).toMatch(/import type \{ OpenAIChatMessage \} from '\.\.\/\.\.\/src\/index\.js'/);
  });
});

describe('second-domain generators', () => {
  test.each(DOMAINS.map((d) => [d.name, d.generate] as const))('%s: deterministic, exact length, valid OpenAI Chat, rich in facts', (_name, generate) => {
    const a = generate({ messages: 200, seed: 11 });
    expect(generate({ messages: 200, seed: 11 })).toEqual(a);
    expect(generate({ messages: 200, seed: 12 })).not.toEqual(a);
    expect(a).toHaveLength(200);
    expect(a[0].role).toBe('system');
    expect(a[a.length - 1].role).toBe('assistant');
    expect(validateMessages(a, 'openai')).toEqual([]);
    const facts = extractFacts(a);
    expect(facts.length).toBeGreaterThan(50);
    // Parallel calls, and user turns that quote a fact first seen in an earlier tool result.
    expect(a.some((m) => (m.tool_calls?.length ?? 0) >= 2)).toBe(true);
    const fromTools = facts.filter((f) => f.source === 'tool-result');
    const quoted = fromTools.filter((f) => a.some((m, i) => i > f.message && m.role === 'user' && normalize(String(m.content)).includes(f.key)));
    expect(quoted.length).toBeGreaterThan(3);
    // Bulky results exist.
    expect(a.some((m) => m.role === 'tool' && String(m.content).length > 2000)).toBe(true);
  });

  test.each([[generateCodeAgentConversation], [generateSupportAgentConversation], [generateOpsAgentConversation]])('every length from 0 to 40 and 400 is exact and valid (%#)', (generate) => {
    for (const n of [...Array.from({ length: 41 }, (_, k) => k), 399, 400]) {
      const msgs = generate({ messages: n, seed: n });
      expect(msgs).toHaveLength(n);
      expect(validateMessages(msgs, 'openai')).toEqual([]);
    }
  });
});

describe('the fair budget: floor + F x rest', () => {
  const counter = createTokenCounter();
  const m = (role: OpenAIChatMessage['role'], content: string, extra: Partial<OpenAIChatMessage> = {}): OpenAIChatMessage => ({ role, content, ...extra } as OpenAIChatMessage);
  const tokens = (list: readonly OpenAIChatMessage[]) => list.reduce((t, x) => t + counter.message(x, openaiChatLens), counter.requestOverhead);

  test('the floor is the system messages, the last user message and the newest exchange after it', () => {
    const call = m('assistant', '', { content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'look', arguments: '{"q":"a"}' } }] });
    const result = m('tool', 'found A-1', { tool_call_id: 'c1' });
    const earlier = [m('user', 'first question about things'), m('assistant', 'a long first answer '.repeat(5))];
    const history = [m('system', 'be brief'), ...earlier, m('system', 'a later instruction'), m('user', 'what about A?'), call, result];
    const { floor, rest, budget } = fairBudget(history, 0.25, counter);
    expect(floor).toBe(tokens([history[0], history[3], history[4], call, result]));
    expect(rest).toBe(tokens(history) - floor);
    expect(budget).toBe(floor + Math.floor(0.25 * rest));
    // Rounds after the last user message but the newest are not in the floor: they may yield.
    const second = m('assistant', '', { content: null, tool_calls: [{ id: 'c2', type: 'function', function: { name: 'look', arguments: '{"q":"b"}' } }] });
    const longer = [...history, second, m('tool', 'found B-2', { tool_call_id: 'c2' })];
    expect(fairBudget(longer, 0, counter).floor).toBe(tokens([history[0], history[3], history[4], second, longer[longer.length - 1]]));
    // A request that is all floor has no rest.
    expect(fairBudget([m('system', 's'), m('user', 'u')], 0.5, counter).rest).toBe(0);
  });
});
