import { expect, test } from '@jest/globals';
import fc from 'fast-check';
import { generateConversation } from '../../bench/fixtures/conversation.js';
import { StoreError } from '../../src/errors.js';
import { hasOriginals, type OriginalRecord } from '../../src/store/originals.js';
import { createCompressor } from '../../src/runtime/compressor.js';
import { RedisStore } from '../../src/store/redis-store.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import { redisDescribe } from '../helpers/redis-server.js';
import { redisTestbed } from '../helpers/redis-testbed.js';
import { originalRecord, substringSearchContract } from '../helpers/originals-contract.js';
import { PROPERTY_SEED, propertyRuns } from '../helpers/property-runs.js';

const bed = redisTestbed('o');
const fresh = (extra: { originalsTtlMs?: number } = {}) => bed.fresh(extra);

const record = originalRecord;
const ids = (records: readonly OriginalRecord[]) => records.map((r) => r.id);

redisDescribe('RedisStore originals (a real redis-server)', () => {
  test('it keeps originals: get in the order asked, unknown ids skipped, upserts replace, chats stay apart', async () => {
    const store = await fresh();
    expect(hasOriginals(store)).toBe(true);
    await store.putOriginals('chat', [record('1:a', 1, 'first'), record('2:b', 2, 'second', 'assistant'), record('3:c', 3, 'third', 'tool')]);
    await store.putOriginals('other', [record('1:a', 1, 'another chat')]);
    expect(await store.getOriginals('chat', ['3:c', 'nope', '1:a'])).toEqual([record('3:c', 3, 'third', 'tool'), record('1:a', 1, 'first')]);
    await store.putOriginals('chat', [record('2:b', 2, 'second, edited', 'assistant')]);
    expect((await store.getOriginals('chat', ['2:b']))[0].text).toBe('second, edited');
    expect((await store.getOriginals('other', ['1:a']))[0].text).toBe('another chat');
    expect(await store.getOriginals('chat', [])).toEqual([]);
    expect(await store.getOriginals('nobody', ['1:a'])).toEqual([]);
    await store.putOriginals('chat', []);
    expect(await bed.raw.hlen(`${store.keyPrefix}{chat}:originals`)).toBe(3);
  });

  test('a batch larger than one HSET is stored whole', async () => {
    const store = await fresh();
    const many = Array.from({ length: 700 }, (_, i) => record(`${i}:x`, i, `message number ${i}`));
    await store.putOriginals('big', many);
    expect(await bed.raw.hlen(`${store.keyPrefix}{big}:originals`)).toBe(700);
    expect(ids(await store.getOriginals('big', ['699:x', '0:x', '256:x']))).toEqual(['699:x', '0:x', '256:x']);
  });

  substringSearchContract(() => fresh());

  test('search: every record returned holds a query word, none holding one is left out below the limit (seeded)', async () => {
    const store = await fresh();
    let chats = 0;
    const words = ['alpha', 'beta', 'gamma', 'delta', 'K-17', 'x9.z'];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.constantFrom(...words, 'filler', 'text'), { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 12 }),
        fc.subarray(words, { minLength: 1, maxLength: 2 }),
        fc.integer({ min: 1, max: 15 }),
        async (texts, query, limit) => {
          const chat = `p${chats++}`;
          const records = texts.map((t, i) => record(`${i}:r`, i, t.join(' ')));
          await store.putOriginals(chat, records);
          const found = await store.searchOriginals(chat, query.join(' '), limit);
          const holds = (r: OriginalRecord) => query.some((w) => r.text.toLowerCase().includes(w.toLowerCase()));
          const matching = records.filter(holds);
          expect(found.every(holds)).toBe(true);
          expect(new Set(ids(found)).size).toBe(found.length);
          expect(found).toHaveLength(Math.min(limit, matching.length));
        },
      ),
      { seed: PROPERTY_SEED, numRuns: Math.min(100, propertyRuns()) },
    );
  });

  test('delete removes the chat\'s originals with its state; a closed store rejects', async () => {
    const store = await fresh();
    await store.putOriginals('chat', [record('a', 1, 'x')]);
    await store.delete('chat');
    expect(await store.getOriginals('chat', ['a'])).toEqual([]);
    expect(await bed.raw.exists(`${store.keyPrefix}{chat}:originals`)).toBe(0);
    await store.close();
    await expect(store.putOriginals('chat', [record('a', 1, 'x')])).rejects.toThrow(/closed/);
    await expect(store.searchOriginals('chat', 'x', 3)).rejects.toThrow(/closed/);
  });

  test('no expiry by default; originalsTtlMs sets one, renewed by each put; a bad value is an InputError naming it', async () => {
    const plain = await fresh();
    await plain.putOriginals('chat', [record('a', 1, 'x')]);
    expect(await bed.raw.pttl(`${plain.keyPrefix}{chat}:originals`)).toBe(-1);
    const timed = await fresh({ originalsTtlMs: 60_000 });
    await timed.putOriginals('chat', [record('a', 1, 'x')]);
    const key = `${timed.keyPrefix}{chat}:originals`;
    await bed.raw.pexpire(key, 5_000);
    await timed.putOriginals('chat', [record('b', 2, 'y')]);
    const ttl = await bed.raw.pttl(key);
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    expect(() => new RedisStore({ url: bed.server.url, originalsTtlMs: 0 })).toThrow(/options\.originalsTtlMs: must be a whole number of ms >= 1/);
  });

  test('a stored value that is not a record is a StoreError naming the key and the rule', async () => {
    const store = await fresh();
    const key = `${store.keyPrefix}{chat}:originals`;
    await bed.raw.hset(key, 'a', 'not json', 'b', JSON.stringify({ id: 'b', index: 1, role: 'user', text: 3, raw: '{}' }), 'c', JSON.stringify({ id: 'other', index: 1, role: 'user', text: 't', raw: '{}' }));
    await expect(store.getOriginals('chat', ['a'])).rejects.toThrow(StoreError);
    await expect(store.getOriginals('chat', ['a'])).rejects.toThrow(/key "o\d+:\{chat\}:originals": original "a" is not valid JSON/);
    await expect(store.getOriginals('chat', ['b'])).rejects.toThrow(/original "b": text must be a string, found number/);
    await expect(store.getOriginals('chat', ['c'])).rejects.toThrow(/original "c": id must be the field's name/);
    await expect(store.searchOriginals('chat', 'anything', 3)).rejects.toThrow(StoreError);
  });

  test('createCompressor({ recall: true }) on Redis: each summary\'s originals are kept there and a second process-like compressor answers a recall', async () => {
    const counter = createTokenCounter();
    const messages = generateConversation({ messages: 240, seed: 21 });
    const store = await fresh();
    const c = createCompressor({ maxContextTokens: 6000, keepLast: 6, recall: true, store, counter });
    for (let k = 2; k <= messages.length; k++) {
      if (messages[k - 1].role !== 'user' && k !== messages.length) continue;
      const history = messages.slice(0, k);
      const result = await c.compress('shared-chat', history);
      c.afterResponse('shared-chat', history, result.report);
      await c.drain();
    }
    await c.close(); // closes its store too
    // Another instance on the same Redis (its own connection) reads what the first one kept.
    const other = await RedisStore.open({ url: bed.server.url, keyPrefix: store.keyPrefix });
    bed.track(other);
    const state = (await other.get('shared-chat'))!;
    expect(state.coveredIds.length).toBeGreaterThan(10);
    const kept = await other.getOriginals('shared-chat', state.coveredIds);
    expect(ids(kept)).toEqual(state.coveredIds);
    const k = Math.ceil(kept.length / 2);
    expect(kept[k - 1].raw).toBe(JSON.stringify(messages[kept[k - 1].index]));
    const reader = createCompressor({ maxContextTokens: 6000, recall: true, store: other, counter });
    const answer = await reader.recall!.answer('shared-chat', { ids: [`#${k}`] });
    expect(answer.isError).toBe(false);
    expect(answer.ids).toEqual([state.coveredIds[k - 1]]);
    await reader.close();
  });
});
