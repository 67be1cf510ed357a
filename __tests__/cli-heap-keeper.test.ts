import { describe, expect, test } from '@jest/globals';
import { createHeapKeeper, HEAP_KEEP_BYTES } from '../src/cli/heap-keeper.js';

/**
 * A long JSONL run gives its garbage back: once the heap in use passes the keeper's mark, the
 * keeper's next look (every few records) collects it. Judged by the heap in use before and after.
 */
describe('the CLI heap keeper', () => {
  test('garbage past the mark is collected at the next look', () => {
    const keep = createHeapKeeper();
    // Garbage: strings no one holds, well past the mark.
    let sink = 0;
    for (let i = 0; i < 4 * (HEAP_KEEP_BYTES / 65_536); i++) sink += 'x'.repeat(65_536).concat(String(i)).length;
    expect(sink).toBeGreaterThan(0);
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 64; i++) keep();
    const after = process.memoryUsage().heapUsed;
    // Unless a collection ran on its own meanwhile, the keeper's brought the heap back down.
    if (before > HEAP_KEEP_BYTES) expect(after).toBeLessThan(before);
  });
});
