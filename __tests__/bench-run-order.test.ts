import { describe, expect, test } from '@jest/globals';
import { requestOrder } from '../bench/run-order.js';

/**
 * The benchmark runs every system on each request in turn. A system that always runs right after
 * the same neighbour is measured with the caches that neighbour left (the same library's other
 * configuration warms them): the order must change from request to request.
 */
const SYSTEMS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];

/** For each system, the share of requests on which its most frequent predecessor ran right before it. */
function topPredecessorShare(orders: readonly string[][]): number {
  let worst = 0;
  for (const s of SYSTEMS) {
    const before = new Map<string, number>();
    let n = 0;
    for (const order of orders) {
      const i = order.indexOf(s);
      if (i <= 0) continue;
      before.set(order[i - 1], (before.get(order[i - 1]) ?? 0) + 1);
      n++;
    }
    worst = Math.max(worst, Math.max(...before.values()) / n);
  }
  return worst;
}

describe('requestOrder (benchmark)', () => {
  const orders = Array.from({ length: 400 }, (_, r) => requestOrder(SYSTEMS, r));

  test('each order holds every system once', () => {
    for (const order of orders) expect([...order].sort()).toEqual(SYSTEMS);
  });

  test('no system runs after the same neighbour on most requests', () => {
    // Uniform shuffles give each of the 7 possible predecessors about 1/7 of the requests.
    expect(topPredecessorShare(orders)).toBeLessThan(0.3);
    // A rotation, the order this replaced, fails the same check: the predecessor never changes.
    const rotated = Array.from({ length: 400 }, (_, r) => [...SYSTEMS.slice(r % 8), ...SYSTEMS.slice(0, r % 8)]);
    expect(topPredecessorShare(rotated)).toBe(1);
  });

  test('every system runs first about as often as any other', () => {
    const first = new Map<string, number>();
    for (const order of orders) first.set(order[0], (first.get(order[0]) ?? 0) + 1);
    for (const s of SYSTEMS) expect(first.get(s) ?? 0).toBeGreaterThan(400 / 8 / 2);
  });

  test('the same request and seed give the same order; another seed another sequence', () => {
    expect(requestOrder(SYSTEMS, 17)).toEqual(requestOrder(SYSTEMS, 17));
    const other = Array.from({ length: 20 }, (_, r) => requestOrder(SYSTEMS, r, 1).join(''));
    expect(other).not.toEqual(orders.slice(0, 20).map((o) => o.join('')));
  });
});
