import { beforeEach, expect, test } from '@jest/globals';
import type { ChatLister } from '../../src/store/chat-list.js';
import type { StateStore } from '../../src/store/state.js';
import { stateOf } from './store-contract.js';

/** Two tenant ids as the proxy makes them (16 hex characters), the second one greater by one. */
const A = '0123456789abcdef';
const B = '0123456789abcdf0';

/** Chat ids a listing by `${A}:` must return, in code point order (U+FFFF before U+10000, unlike UTF-16 order). */
const OF_A = [`${A}:`, `${A}:1`, `${A}:2`, `${A}:fp:9a`, `${A}:{slot}*?[x]\\`, `${A}:чат`, `${A}:\uffff`, `${A}:\u{10000}`];
/** Chat ids it must not return: other tenants, the prefix without its colon, the character after the colon. */
const NOT_OF_A = [A, `${A};`, `${A}9`, `${B}:1`, `x${A}:1`, `${A.slice(0, 15)}:1`];

/**
 * The cases every store that lists chats by prefix (`ChatLister`) must pass, as tests of the
 * enclosing `describe`; `make` gives a fresh, empty store for each test (the caller closes it).
 */
export function chatListContract(make: () => (StateStore & ChatLister) | Promise<StateStore & ChatLister>): void {
  let store: StateStore & ChatLister;
  beforeEach(async () => {
    store = await make();
  });

  test('an empty store lists nothing', async () => {
    await expect(store.listChatIds(`${A}:`, 10)).resolves.toEqual([]);
  });

  test('a prefix lists exactly the chats whose ids start with it, in code point order', async () => {
    for (const id of [...NOT_OF_A, ...OF_A].reverse()) expect(await store.commit(stateOf(id, 1), 0)).toBe(true);
    expect(await store.listChatIds(`${A}:`, 100)).toEqual(OF_A);
    expect(await store.listChatIds(`${B}:`, 100)).toEqual([`${B}:1`]);
    // Redis glob characters in a prefix match only themselves.
    expect(await store.listChatIds(`${A}:{slot}*?[x]`, 100)).toEqual([`${A}:{slot}*?[x]\\`]);
    expect(await store.listChatIds(`${A}:*`, 100)).toEqual([]);
    expect(await store.listChatIds('', 100)).toHaveLength(OF_A.length + NOT_OF_A.length);
  });

  test('the limit keeps the smallest ids', async () => {
    for (const id of OF_A) await store.commit(stateOf(id, 1), 0);
    expect(await store.listChatIds(`${A}:`, 3)).toEqual(OF_A.slice(0, 3));
    expect(await store.listChatIds(`${A}:`, 1)).toEqual(OF_A.slice(0, 1));
  });

  test('a prefix ending in U+10FFFF, and a deleted chat', async () => {
    const top = `${A}:\u{10ffff}`;
    for (const id of [top, `${top}x`, `${A};`]) await store.commit(stateOf(id, 1), 0);
    expect(await store.listChatIds(top, 10)).toEqual([top, `${top}x`]);
    await store.delete(top);
    expect(await store.listChatIds(top, 10)).toEqual([`${top}x`]);
  });

  test('a bad limit or prefix is an InputError naming it', async () => {
    await expect(store.listChatIds(`${A}:`, 0)).rejects.toThrow(/limit: must be an integer >= 1/);
    await expect(store.listChatIds(`${A}:`, 1.5)).rejects.toThrow(/limit/);
    await expect(store.listChatIds(5 as unknown as string, 1)).rejects.toThrow(/prefix: must be a string/);
  });
}
