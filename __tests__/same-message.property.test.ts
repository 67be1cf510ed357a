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
