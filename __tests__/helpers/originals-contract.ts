import { expect, test } from '@jest/globals';
import type { OriginalRecord, OriginalsStore } from '../../src/store/originals.js';

/** A record whose text is `text`; its JSON is the message it stands for. */
export const originalRecord = (id: string, index: number, text: string, role: OriginalRecord['role'] = 'user'): OriginalRecord => ({
  id, index, role, text, raw: JSON.stringify({ role, content: text }),
});

const ids = (records: readonly OriginalRecord[]) => records.map((r) => r.id);

/**
 * The search cases every store without a full-text index must pass (MemoryStore, RedisStore):
 * by a word and by an identifier, best match first, the limit, an empty query, other chats apart.
 */
export function substringSearchContract(open: () => Promise<OriginalsStore>): void {
  test('search finds by a word and by an identifier, best match first, within the chat only', async () => {
    const store = await open();
    await store.putOriginals('chat', [
      originalRecord('a', 1, 'The lighthouse keeper logged case INV-20931 yesterday.'),
      originalRecord('b', 2, 'Nothing relevant here about the harbour.'),
      originalRecord('c', 3, 'lighthouse lighthouse lighthouse: three mentions of the word.'),
    ]);
    await store.putOriginals('elsewhere', [originalRecord('z', 1, 'lighthouse in another chat')]);
    expect(ids(await store.searchOriginals('chat', 'INV-20931', 5))).toEqual(['a']);
    expect(ids(await store.searchOriginals('chat', 'lighthouse', 5))).toEqual(['c', 'a']);
    expect(ids(await store.searchOriginals('chat', 'lighthouse', 1))).toEqual(['c']);
    expect(await store.searchOriginals('chat', '  ?!  ', 5)).toEqual([]);
    expect(await store.searchOriginals('chat', 'lighthouse', 0)).toEqual([]);
    expect(await store.searchOriginals('nobody', 'lighthouse', 5)).toEqual([]);
  });
}
