import { describe, expect, test } from '@jest/globals';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { sharedMessages } from '../src/core/same-message.js';
import { propertyParams } from './helpers/property-runs.js';

/**
 * A chat's next request is compared with its remembered history message by message; the count
 * of leading equal messages decides what is reused (counts, groups, ids). Judged against Node's
 * own deep equality on JSON data, never against the project's comparison.
 */
const text = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('user', 'assistant', 'tool', 'call_1', 'f', '{}'));
const extra = fc.dictionary(fc.constantFrom('name', 'refusal', 'x', 'role ', 'function', 'id'), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 });
const call = fc.tuple(
  fc.record({ id: text, type: fc.constantFrom('function', 'custom'), function: fc.tuple(fc.record({ name: text, arguments: text }, { requiredKeys: [] }), extra).map(([f, e]) => ({ ...e, ...f })) }, { requiredKeys: [] }),
  extra,
).map(([c, e]) => ({ ...e, ...c }));
const message = fc.tuple(
  fc.record({
    role: text,
    content: fc.oneof(text, fc.constant(null), fc.array(fc.record({ type: fc.constant('text'), text }), { maxLength: 2 })),
    tool_calls: fc.oneof(fc.array(call, { maxLength: 3 }), fc.jsonValue({ maxDepth: 1 })),
    tool_call_id: fc.oneof(text, fc.integer()),
  }, { requiredKeys: [] }),
  extra,
  // As a request body parses: plain objects, no -0 (Node's deep equality tells -0 from 0 and prototypes apart).
).map(([m, e]) => JSON.parse(JSON.stringify({ ...e, ...m })) as Record<string, unknown>);

type Json = Record<string, unknown>;

/** A copy of `value` with one change at a random place: a leaf replaced, a key removed, added (possibly undefined) or the keys reordered. */
const mutated = (value: Json) => fc.tuple(fc.nat(), fc.nat(4), fc.jsonValue({ maxDepth: 1 })).map(([where, how, leaf]) => {
  const copy = JSON.parse(JSON.stringify(value)) as Json;
  const objects: Json[] = [];
  const walk = (v: unknown) => {
    if (v && typeof v === 'object') {
      if (!Array.isArray(v)) objects.push(v as Json);
      for (const x of Object.values(v)) walk(x);
    }
  };
  walk(copy);
  const target = objects[where % objects.length];
  const keys = Object.keys(target);
  const key = keys.length ? keys[where % keys.length] : 'k';
  if (how === 0) target[key] = leaf;
  else if (how === 1) delete target[key];
  else if (how === 2) target[key + '_'] = undefined;
  else if (how === 3) target[key] = typeof target[key] === 'string' ? `${target[key] as string}.` : 'changed';
  else {
    // Same keys and values, another key order: still equal.
    const entries = Object.entries(target).reverse();
    for (const k of keys) delete target[k];
    for (const [k, v] of entries) target[k] = v;
  }
  return copy;
});

/** The oracle: leading pairs deep-equal by Node's strict deep equality. */
function leadingEqual(a: readonly unknown[], b: readonly unknown[]): number {
  let n = 0;
  while (n < Math.min(a.length, b.length) && isDeepStrictEqual(a[n], b[n])) n++;
  return n;
}

describe('sharedMessages', () => {
  test('agrees with deep equality on one message and a re-parsed, possibly changed copy of it', () => {
    let equal = 0;
    let different = 0;
    fc.assert(fc.property(message.chain((m) => fc.tuple(fc.constant(m as Json), fc.oneof(fc.constant(JSON.parse(JSON.stringify(m)) as Json), mutated(m as Json)))), ([a, b]) => {
      const expected = isDeepStrictEqual(a, b) ? 1 : 0;
      if (expected) equal++;
      else different++;
      expect(sharedMessages([a], [b])).toBe(expected);
      expect(sharedMessages([b], [a])).toBe(expected);
    }), propertyParams());
    // Both outcomes are reached often.
    expect(equal).toBeGreaterThan(propertyParams().numRuns / 5);
    expect(different).toBeGreaterThan(propertyParams().numRuns / 5);
  });

  test('counts the leading equal messages of two histories, whatever their lengths', () => {
    const history = fc.array(message, { maxLength: 8 }).map((h) => h as Json[]);
    fc.assert(fc.property(history, fc.nat(8), fc.nat(), (h, cut, at) => {
      const copy = JSON.parse(JSON.stringify(h)) as Json[];
      if (copy.length > 0) copy[at % copy.length] = { ...copy[at % copy.length], role: `${String(copy[at % copy.length].role)}!` };
      const longer = [...copy, { role: 'user', content: 'next' }];
      for (const other of [copy, longer, copy.slice(0, cut), h.map((m) => m)]) {
        expect(sharedMessages(h, other)).toBe(leadingEqual(h, other));
      }
    }), propertyParams());
  });

  test('examples: key order, undefined values, nested differences, non-plain objects', () => {
    const call = { id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } };
    const m = { role: 'assistant', content: null, tool_calls: [call] };
    expect(sharedMessages([m], [{ tool_calls: [{ function: { arguments: '{"a":1}', name: 'f' }, type: 'function', id: 'c1' }], content: null, role: 'assistant' }])).toBe(1);
    expect(sharedMessages([m], [{ ...m, tool_calls: [{ ...call, function: { ...call.function, arguments: '{"a":2}' } }] }])).toBe(0);
    expect(sharedMessages([m], [{ ...m, tool_calls: [{ ...call, function: { ...call.function, strict: true } }] }])).toBe(0);
    expect(sharedMessages([{ role: 'user', content: undefined }], [{ role: 'user' }])).toBe(0);
    expect(sharedMessages([{ role: 'user', content: undefined, a: 1 }], [{ role: 'user', a: 1, b: undefined }])).toBe(0);
    expect(sharedMessages([{ role: 'tool', tool_call_id: 'x', content: 'r' }], [{ role: 'tool', tool_call_id: 'y', content: 'r' }])).toBe(0);
    expect(sharedMessages([[1, 2]], [[1, 2]])).toBe(1);
    expect(sharedMessages(['a', 'a'], ['a', 'b'])).toBe(1);
    // A key read by name sees inherited values: two messages differing only there differ.
    const inherits = (role: string) => Object.create({ role }) as Json;
    expect(sharedMessages([inherits('user')], [inherits('assistant')])).toBe(0);
  });
});

/**
 * The oracle for text a plan never read: a copy with every string `content`, and every string
 * `function.arguments` of a `tool_calls` object, replaced by a marker of whether it was empty.
 * Written from the rule's statement, apart from the comparison it judges.
 */
function textBlanked(value: unknown): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const m = { ...(value as Json) };
  const mark = (s: string) => (s === '' ? '' : 'some text');
  if (typeof m.content === 'string') m.content = mark(m.content);
  if (Array.isArray(m.tool_calls)) {
    m.tool_calls = m.tool_calls.map((c: unknown) => {
      if (!c || typeof c !== 'object' || Array.isArray(c)) return c;
      const f = (c as Json).function;
      if (!f || typeof f !== 'object' || Array.isArray(f) || typeof (f as Json).arguments !== 'string') return c;
      return { ...(c as Json), function: { ...(f as Json), arguments: mark((f as Json).arguments as string) } };
    });
  }
  return m;
}

describe('sharedMessages with text unread', () => {
  /** A re-parsed copy of a message with its text changed: another string (empty or not) where a string was. */
  const retexted = (m: Json) => fc.tuple(fc.string({ maxLength: 4 }), fc.string({ maxLength: 4 })).map(([c, args]) => {
    const copy = JSON.parse(JSON.stringify(m)) as Json;
    if (typeof copy.content === 'string') copy.content = c;
    if (Array.isArray(copy.tool_calls)) {
      for (const call of copy.tool_calls as unknown[]) {
        const f = call && typeof call === 'object' ? (call as Json).function : undefined;
        if (f && typeof f === 'object' && !Array.isArray(f) && typeof (f as Json).arguments === 'string') (f as Json).arguments = args;
      }
    }
    return copy;
  });
  const pair = message.chain((m) => fc.tuple(fc.constant(m as Json), fc.oneof({ weight: 2, arbitrary: fc.constant(JSON.parse(JSON.stringify(m)) as Json) }, { weight: 1, arbitrary: mutated(m as Json) }, { weight: 4, arbitrary: retexted(m as Json) })));

  test('inside the span, all but the text is compared exactly; outside it and at pinned messages, everything is', () => {
    let looseOnly = 0;
    fc.assert(fc.property(fc.array(pair, { maxLength: 8, size: 'max' }), fc.nat(3), fc.nat(8), fc.array(fc.nat(4).map((v) => v === 0), { minLength: 8, maxLength: 8 }), (pairs, x, y, pins) => {
      const a = pairs.map(([m]) => m);
      const b = pairs.map(([, m]) => m);
      const span = { from: Math.min(x, y), to: Math.max(x, y), pinned: Uint8Array.from(pins, (p) => (p ? 1 : 0)) };
      let expected = 0;
      while (expected < pairs.length) {
        const loose = expected >= span.from && expected < span.to && !pins[expected];
        const same = loose ? isDeepStrictEqual(textBlanked(a[expected]), textBlanked(b[expected])) : isDeepStrictEqual(a[expected], b[expected]);
        if (!same) break;
        if (loose && !isDeepStrictEqual(a[expected], b[expected])) looseOnly++;
        expected++;
      }
      expect(sharedMessages(a, b, span)).toBe(expected);
    }), propertyParams());
    // Messages equal only with their text unread were passed over often.
    expect(looseOnly).toBeGreaterThan(propertyParams().numRuns / 10);
  });
});
