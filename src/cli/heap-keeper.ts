import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Heap in use under which a run of many records never asks for a full collection. */
export const HEAP_KEEP_BYTES = 24 * 1024 * 1024;

/** How far the heap in use may grow past what the last collection left before the next. */
const GROWTH = 1.5;

/** Records between two looks at the heap (a look costs a few microseconds). */
const LOOK_EVERY = 8;

/**
 * Keeps a long JSONL run's heap near what one record needs. V8 grows its heap lazily, well past
 * the few MB a record's work keeps alive, so a run over a large file would end far above its live
 * set; a full collection once the heap in use passes `HEAP_KEEP_BYTES` and half again what the
 * last one left lets it give the pages back. Returns the function to call after each record; it does nothing where the collector
 * cannot be reached (it is taken through V8's own flag, without changing how node is started).
 */
export function createHeapKeeper(): () => void {
  let collect: (() => void) | undefined;
  try {
    setFlagsFromString('--expose-gc');
    collect = runInNewContext('gc') as () => void;
  } catch {
    collect = undefined;
  }
  if (typeof collect !== 'function') return () => {};
  const gc = collect;
  let records = 0;
  let limit = HEAP_KEEP_BYTES;
  return () => {
    if (++records % LOOK_EVERY !== 0) return;
    if (process.memoryUsage().heapUsed <= limit) return;
    gc();
    limit = Math.max(HEAP_KEEP_BYTES, GROWTH * process.memoryUsage().heapUsed);
  };
}
