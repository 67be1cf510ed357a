import { expect, test } from '@jest/globals';
import { InputError } from '../../src/errors.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { resolveServerOptions } from '../../src/server/options.js';
import { DEFAULT_FOLD_THREAD_MIN_BYTES, defaultFoldThreads } from '../../src/server/fold-threads.js';

/** `workers`, `foldThreads` and `foldThreadMinBytes` as `startServer` checks them, before anything starts. */

const upstream = 'http://127.0.0.1:9/v1';
const refusal = (options: Record<string, unknown>): InputError => {
  try {
    resolveServerOptions({ upstream, ...options });
  } catch (error) {
    if (InputError.isInstance(error)) return error;
    throw error;
  }
  throw new InputError('test', 'the options were accepted');
};

test('more than one worker needs a Redis store: the SQLite default, memory and a store object are refused, naming the flag', () => {
  for (const store of [undefined, 'sqlite:./x.db', 'memory']) {
    const error = refusal({ workers: 2, ...(store === undefined ? {} : { store }) });
    expect(error.path).toBe('options.workers');
    expect(error.message).toContain('--workers 2');
    expect(error.message).toContain('--store redis://HOST:PORT');
  }
  expect(refusal({ workers: 3, store: new MemoryStore() }).message).toContain('give it as a spec');
  expect(resolveServerOptions({ upstream, workers: 2, store: 'redis://127.0.0.1:6379' }).workers).toBe(2);
  expect(resolveServerOptions({ upstream, workers: 1, store: 'memory' }).workers).toBe(1);
});

test('workers, foldThreads and foldThreadMinBytes must be whole numbers in range; the defaults apply when left out', () => {
  expect(refusal({ workers: 0 }).path).toBe('options.workers');
  expect(refusal({ workers: 1.5 }).path).toBe('options.workers');
  expect(refusal({ foldThreads: -1 }).path).toBe('options.foldThreads');
  expect(refusal({ foldThreadMinBytes: 'big' }).path).toBe('options.foldThreadMinBytes');
  const resolved = resolveServerOptions({ upstream });
  expect(resolved).toMatchObject({ workers: 1, foldThreads: defaultFoldThreads(), foldThreadMinBytes: DEFAULT_FOLD_THREAD_MIN_BYTES });
  expect(resolveServerOptions({ upstream, foldThreads: 0 }).foldThreads).toBe(0);
});
