import { describe, expect, test } from '@jest/globals';
import { createCompressor } from '../../src/runtime/compressor.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { ChatState } from '../../src/store/state.js';
import type { OriginalRecord } from '../../src/store/originals.js';
import { summarizerFromFunction } from '../../src/summarize/from-function.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import { chatHistory, roughTokens } from '../helpers/crash-chat.mjs';

// A process that dies between the commit of a summary and the saving of its originals: the
// summary stays, and so must the originals it replaced (recall reads them by the summary's ids).

const options = () => ({
  maxContextTokens: 900, compressionThresholdTokens: 450, keepLast: 4, recall: true as const,
  counter: createTokenCounter({ countText: roughTokens }),
  summarizer: summarizerFromFunction(async () => 'The user looked up records and compared them.', { name: 'stand-in', checkFacts: false }),
});

/** `store` as a process sees it that dies once its first commit has landed: no later call of it reaches the store. */
function dyingAfterFirstCommit(store: MemoryStore) {
  let dead = false;
  const never = new Promise<never>(() => undefined);
  return {
    get dead() { return dead; },
    store: {
      get: (chatId: string) => (dead ? never : store.get(chatId)),
      async commit(state: ChatState, expected: number) {
        if (dead) return never;
        const ok = await store.commit(state, expected);
        if (ok) dead = true;
        return ok;
      },
      delete: (chatId: string) => (dead ? never : store.delete(chatId)),
      close: async () => undefined,
      putOriginals: (chatId: string, records: readonly OriginalRecord[]) => (dead ? never : store.putOriginals(chatId, records)),
      getOriginals: (chatId: string, ids: readonly string[]) => (dead ? never : store.getOriginals(chatId, ids)),
      searchOriginals: (chatId: string, query: string, limit: number) => (dead ? never : store.searchOriginals(chatId, query, limit)),
    },
  };
}

describe('recall across a crash right after a commit', () => {
  test('every id the stored summary covers has its original, after the process died between commit and save and another went on', async () => {
    const store = new MemoryStore();
    const dying = dyingAfterFirstCommit(store);
    const first = createCompressor({ ...options(), store: dying.store });
    let turn = 4;
    for (; turn < 200 && !dying.dead; turn++) {
      const history = chatHistory('c', turn);
      first.afterResponse('c', history, (await first.compress('c', history)).report);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    expect(dying.dead).toBe(true);
    expect((await store.get('c'))?.version).toBe(1);
    await first.close(10);

    // The next process serves the same chat, grown, until it commits a summary of its own.
    const second = createCompressor({ ...options(), store });
    let done = 0;
    second.on('summary:done', () => done++);
    for (; turn < 400 && done === 0; turn++) {
      const history = chatHistory('c', turn);
      second.afterResponse('c', history, (await second.compress('c', history)).report);
      await second.drain();
    }
    expect(done).toBe(1);
    const state = (await store.get('c'))!;
    expect(state.version).toBe(2);
    const kept = await store.getOriginals('c', state.coveredIds);
    expect(kept.map((r) => r.id)).toEqual(state.coveredIds);
    await second.close();
  });
});
