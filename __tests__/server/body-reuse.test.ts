import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { createBodyReuse, sharedPrefix } from '../../src/server/body-reuse.js';
import { propertyParams } from '../helpers/property-runs.js';

/**
 * The proxy's body reader against `JSON.parse` (the oracle, independent of the reader): over
 * sequences of bodies sent under one key (a history growing, shrinking, edited in the middle,
 * written with other spacing or escapes, broken, with a second or escaped `messages` key), every
 * result equals `JSON.parse` of the same bytes, or both throw the same error.
 */

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Writes `value` as JSON with spacing and string escapes (not in keys: the escaped-key case is its own edit) chosen by `pick`: equal values, other bytes. */
function write(value: Json, pick: () => number): string {
  const space = () => [' ', '', '', '\n  ', '\t'][pick() % 5]!;
  const str = (s: string, key = false) => {
    let out = '"';
    for (const ch of s) {
      const plain = JSON.stringify(ch).slice(1, -1);
      // Escaped by UTF-16 code units: a character outside the BMP becomes its surrogate pair.
      out += !key && pick() % 7 === 0 ? ch.split('').map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`).join('') : plain;
    }
    return `${out}"`;
  };
  if (value === null || typeof value !== 'object') return typeof value === 'string' ? str(value) : JSON.stringify(value);
  // Written front to back, as a serializer does: a body equal to another up to some point is written with the same bytes up to there.
  if (Array.isArray(value)) {
    let out = `[${space()}`;
    value.forEach((v, i) => { out += `${i > 0 ? `${space()},${space()}` : ''}${write(v, pick)}`; });
    return `${out}${space()}]`;
  }
  let out = `{${space()}`;
  Object.entries(value).forEach(([k, v], i) => { out += `${i > 0 ? `,${space()}` : ''}${str(k, true)}${space()}:${space()}${write(v, pick)}`; });
  return `${out}${space()}}`;
}

/** Same outcome as JSON.parse: the value, or the error message. */
function outcome(run: () => unknown): { value?: unknown; error?: string } {
  try {
    return { value: run() };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

const message = fc.record({
  role: fc.constantFrom('user', 'assistant', 'tool', 'system'),
  content: fc.oneof(fc.string({ unit: 'binary', maxLength: 30 }), fc.constant('a "quoted" \\ back\\\\slash\\"'), fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>),
}) as fc.Arbitrary<Json>;

/** One change from a body to the next one of the same chat, on its text or on its value. */
const edit = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('append' as const), items: fc.array(message, { minLength: 1, maxLength: 3 }) }) },
  fc.record({ kind: fc.constant('drop' as const), n: fc.nat(3) }),
  fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), item: message }),
  fc.record({ kind: fc.constant('field' as const), value: fc.jsonValue({ maxDepth: 1 }) as fc.Arbitrary<Json> }),
  fc.record({ kind: fc.constant('respace' as const) }),
  fc.record({ kind: fc.constant('break' as const), how: fc.constantFrom('truncate', 'trailing-comma', 'second-list', 'second-list-zero', 'escaped-key', 'garbage-after', 'list-not-array', 'not-object') }),
);

function applyText(text: string, how: string): string {
  switch (how) {
    case 'truncate': return text.slice(0, Math.max(0, text.length - 3));
    case 'trailing-comma': return text.replace(/\]\s*,?\s*"tools"/, ',]$&').replace(/,\]\]/, ',]');
    case 'second-list': return `${text.slice(0, text.lastIndexOf('}'))},"messages":[{"role":"user","content":"other"}]}`;
    case 'second-list-zero': return `${text.slice(0, text.lastIndexOf('}'))},"messages":[0]}`;
    case 'escaped-key': return `${text.slice(0, text.lastIndexOf('}'))},"messag\\u0065s":[]}`;
    case 'garbage-after': return `${text}x`;
    case 'list-not-array': return text.replace('"messages"', '"old_messages"').replace(/}\s*$/, ',"messages":"none"}');
    default: return `[${text}]`;
  }
}

describe('body reuse', () => {
  test('any sequence of bodies under one key, kept in 1 to 3 slots, parses as JSON.parse does (values and errors)', () => {
    let runs = 0;
    let reusing = 0;
    fc.assert(fc.property(
      fc.array(message, { minLength: 1, maxLength: 8 }),
      fc.array(edit, { minLength: 1, maxLength: 8 }),
      fc.integer({ min: 0, max: 1000 }),
      fc.integer({ min: 1, max: 3 }),
      (start, edits, seed, slots) => {
        // The spacing and escapes are drawn from a stream restarted for each body: a body equal to
        // the last one up to some item is written with the same bytes up to there, as a client
        // resending its history does; a 'respace' edit starts another stream.
        let spacing = seed;
        let n = 0;
        const pick = () => (n = (n * 1103515245 + 12345) % 2147483648) >>> 8;
        const writeBody = (value: unknown) => {
          n = spacing;
          return write(value as Json, pick);
        };
        const reuse = createBodyReuse({ maxBytes: 1 << 20 });
        let body: { model: string; messages: Json[]; tools: Json } = { model: 'm', messages: start, tools: [] };
        let text = writeBody(body);
        const check = (t: string) => {
          const raw = Buffer.from(t, 'utf8');
          expect(outcome(() => reuse.parse('k', 'messages', raw, slots))).toEqual(outcome(() => JSON.parse(raw.toString('utf8'))));
        };
        runs++;
        check(text);
        for (const e of edits) {
          if (e.kind === 'break') {
            check(applyText(text, e.how));
            continue;
          }
          const items = body.messages.slice();
          if (e.kind === 'append') items.push(...e.items);
          if (e.kind === 'drop') items.splice(Math.max(0, items.length - e.n));
          if (e.kind === 'replace' && items.length > 0) items[e.at % items.length] = e.item;
          if (e.kind === 'respace') spacing += 7919;
          body = { ...body, messages: items, ...(e.kind === 'field' ? { tools: e.value } : {}) };
          text = writeBody(body);
          check(text);
        }
        // Each run ends as a chat goes on: one more turn on the last valid body, which must reuse.
        const reusedBefore = reuse.stats().reusedItems;
        body = { ...body, messages: [...body.messages, { role: 'user', content: 'next' }] };
        text = writeBody(body);
        check(text);
        if (body.messages.length > 1 && reuse.stats().reusedItems > reusedBefore) reusing++;
      },
    ), propertyParams());
    // The property must exercise reuse, not only the whole-body fallback: the last step of a run
    // reuses unless the history was emptied on the way.
    expect(reusing).toBeGreaterThan(runs / 2);
  });

  test('a growing history parses only what it added: the items before are the last body\'s objects', () => {
    const reuse = createBodyReuse({ maxBytes: 1 << 20 });
    const history = Array.from({ length: 50 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `turn ${i} é "q"` }));
    const first = reuse.parse('chat-a', 'messages', Buffer.from(JSON.stringify({ model: 'm', messages: history.slice(0, 40), stream: false }))) as { messages: unknown[] };
    const second = reuse.parse('chat-a', 'messages', Buffer.from(JSON.stringify({ model: 'm', messages: history, stream: false }))) as { messages: unknown[] };
    expect(second.messages).toEqual(history);
    expect(second.messages[39]).toBe(first.messages[39]);
    expect(second.messages[40]).not.toBe(first.messages[39]);
    expect(reuse.stats().reusedItems).toBe(40);
    // Another key shares nothing; a body under it is parsed whole.
    const other = reuse.parse('chat-b', 'messages', Buffer.from(JSON.stringify({ model: 'm', messages: history }))) as { messages: unknown[] };
    expect(other.messages[0]).not.toBe(second.messages[0]);
    expect(reuse.stats().reusedItems).toBe(40);
  });

  test('without a chat to key by, several recent bodies are kept under one key and each body is read against the one it shares the most with', () => {
    const chats = ['a', 'b', 'c'].map((name) => Array.from({ length: 30 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `${name} turn ${i}` })));
    const bodyOf = (messages: unknown[]) => Buffer.from(JSON.stringify({ model: 'm', messages }));
    const run = (slots: number) => {
      const reuse = createBodyReuse({ maxBytes: 1 << 20 });
      for (let n = 10; n <= 30; n += 2) {
        for (const chat of chats) expect(reuse.parse('tenant', 'messages', bodyOf(chat.slice(0, n)), slots)).toEqual(JSON.parse(bodyOf(chat.slice(0, n)).toString()));
      }
      return reuse.stats();
    };
    // Three chats interleaved: with one slot each body meets another chat's and parses whole.
    expect(run(1).reusedItems).toBe(0);
    const many = run(4);
    expect(many.reusedItems).toBe(3 * (10 + 12 + 14 + 16 + 18 + 20 + 22 + 24 + 26 + 28));
    expect(many.entries).toBe(3);
  });

  test('memory stays under its bound (least recently used first); 0 remembers nothing', () => {
    const body = Buffer.from(JSON.stringify({ messages: Array.from({ length: 20 }, (_, i) => ({ role: 'user', content: `${i}`.repeat(40) })) }));
    const bounded = createBodyReuse({ maxBytes: body.length * 3 });
    for (let k = 0; k < 10; k++) bounded.parse(`chat-${k}`, 'messages', body);
    expect(bounded.stats()).toMatchObject({ entries: 3, bytes: body.length * 3 });
    bounded.parse('chat-9', 'messages', body);
    expect(bounded.stats().reusedItems).toBe(20);
    bounded.parse('chat-0', 'messages', body);
    expect(bounded.stats().reusedItems).toBe(20);
    const off = createBodyReuse({ maxBytes: 0 });
    off.parse('c', 'messages', body);
    off.parse('c', 'messages', body);
    expect(off.stats()).toMatchObject({ entries: 0, bytes: 0, reusedItems: 0 });
  });

  test('the remembered body does not keep a larger buffer it was a view of alive', () => {
    const text = JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] });
    const slab = Buffer.alloc(64 * 1024);
    slab.write(text, 100);
    const view = slab.subarray(100, 100 + Buffer.byteLength(text));
    const reuse = createBodyReuse({ maxBytes: 1 << 20 });
    reuse.parse('c', 'messages', view);
    expect(reuse.stats().bytes).toBe(view.length);
    slab.fill(0x20);
    expect(reuse.parse('c', 'messages', Buffer.from(text))).toEqual(JSON.parse(text));
  });

  test('sharedPrefix finds the first differing byte at any position', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 70_000, minLength: 0, size: 'max' }), fc.nat(), fc.nat(255), (bytes, at, value) => {
      const a = Buffer.from(bytes);
      const b = Buffer.from(bytes);
      if (b.length === 0) return expect(sharedPrefix(a, b)).toBe(0);
      const i = at % b.length;
      const changed = b[i] !== value;
      b[i] = value;
      let expected = 0;
      while (expected < a.length && a[expected] === b[expected]) expected++;
      expect(sharedPrefix(a, b)).toBe(expected);
      expect(sharedPrefix(a, b.subarray(0, i))).toBe(i);
      expect(changed ? expected : a.length).toBe(changed ? i : a.length);
    }), { ...propertyParams(), numRuns: Math.min(200, propertyParams().numRuns) });
  });
});
