import { beforeEach, expect, test } from '@jest/globals';
import type { ChatState, StateStore } from '../../src/store/state.js';

/** A state whose every field is set, derived from the chat id and version. */
export function stateOf(chatId: string, version: number, extra: Partial<ChatState> = {}): ChatState {
  const coveredIds = Array.from({ length: version * 3 }, (_, i) => `${i}:${chatId}-${version}`);
  return {
    chatId,
    version,
    summary: `summary ${version} of ${chatId}`,
    coveredIds,
    summarizer: 'extractive',
    model: `model-${version}`,
    tokensBefore: 1000 * version,
    tokensAfter: 100 * version,
    createdAt: '2024-01-01T00:00:00.000Z',
    updatedAt: new Date(Date.UTC(2024, 0, 1, 0, version)).toISOString(),
    ...extra,
  };
}

/**
 * The cases every `StateStore` must pass (compare-and-set, validation, round trips, isolation,
 * delete, close), as tests of the enclosing `describe`. `make` gives a fresh, empty store for each
 * test; the caller closes it (its own afterEach).
 */
export function stateStoreContract(make: () => StateStore | Promise<StateStore>): void {
  let store: StateStore;
  beforeEach(async () => {
    store = await make();
  });

  test('get of an unknown chat is undefined', async () => {
    await expect(store.get('nobody')).resolves.toBeUndefined();
  });

  test('the first commit needs expectedVersion 0', async () => {
    // Version 2 expected over 1, but nothing is stored yet: the compare-and-set loses.
    await expect(store.commit(stateOf('a', 2), 1)).resolves.toBe(false);
    await expect(store.get('a')).resolves.toBeUndefined();
    await expect(store.commit(stateOf('a', 1), 0)).resolves.toBe(true);
    expect((await store.get('a'))?.version).toBe(1);
  });

  test('a stale expectedVersion returns false and leaves the stored state unchanged', async () => {
    expect(await store.commit(stateOf('a', 1), 0)).toBe(true);
    expect(await store.commit(stateOf('a', 2), 1)).toBe(true);
    const before = await store.get('a');
    // A job that started from version 1 finishes after version 2 landed.
    expect(await store.commit(stateOf('a', 2, { summary: 'stale job' }), 1)).toBe(false);
    // A job that thought there was no state yet.
    expect(await store.commit(stateOf('a', 1, { summary: 'stale first' }), 0)).toBe(false);
    // A job from the future (expects a version never written).
    expect(await store.commit(stateOf('a', 4, { summary: 'ahead' }), 3)).toBe(false);
    const after = await store.get('a');
    expect(after).toEqual(before);
    expect(after?.summary).toBe('summary 2 of a');
  });

  test('compactTokens reads back when set, stays absent when not, and is refused unless a whole number >= 1', async () => {
    expect(await store.commit(stateOf('a', 1, { compactTokens: 321 }), 0)).toBe(true);
    expect((await store.get('a'))?.compactTokens).toBe(321);
    expect(await store.get('a')).toEqual(stateOf('a', 1, { compactTokens: 321 }));
    // The next version without one: the field is gone, not left over from the last commit.
    expect(await store.commit(stateOf('a', 2), 1)).toBe(true);
    expect(await store.get('a')).toEqual(stateOf('a', 2));
    expect(Object.keys((await store.get('a'))!)).not.toContain('compactTokens');
    for (const bad of [0, -3, 1.5, Number.NaN, '12' as unknown as number]) {
      await expect(store.commit(stateOf('a', 3, { compactTokens: bad }), 2)).rejects.toThrow(/state\.compactTokens/);
    }
    expect((await store.get('a'))?.version).toBe(2);
  });

  test('state.version must be expectedVersion + 1, and expectedVersion a whole number >= 0', async () => {
    await expect(store.commit(stateOf('a', 3), 0)).rejects.toThrow(/state\.version: must be expectedVersion \+ 1 = 1, got 3/);
    await expect(store.commit(stateOf('a', 1), 1)).rejects.toThrow(/state\.version/);
    await expect(store.commit(stateOf('a', 0), -1)).rejects.toThrow(/expectedVersion: must be a whole number/);
    await expect(store.commit(stateOf('a', 2), 0.5)).rejects.toThrow(/expectedVersion/);
    await expect(store.get('a')).resolves.toBeUndefined();
    expect(await store.commit(stateOf('a', 1), 0)).toBe(true);
    await expect(store.commit(stateOf('a', 1), 1)).rejects.toThrow(/state\.version: must be expectedVersion \+ 1 = 2, got 1/);
    expect((await store.get('a'))?.version).toBe(1);
  });

  test('malformed fields are rejected naming the field, and nothing is written', async () => {
    const bad = (extra: Record<string, unknown>) => ({ ...stateOf('a', 1), ...extra }) as unknown as ChatState;
    await expect(store.commit(bad({ summary: 42 }), 0)).rejects.toThrow(/state\.summary: must be a string/);
    await expect(store.commit(bad({ coveredIds: ['x', 7] }), 0)).rejects.toThrow(/state\.coveredIds\[1\]: must be a string/);
    await expect(store.commit(bad({ tokensAfter: -1 }), 0)).rejects.toThrow(/state\.tokensAfter/);
    await expect(store.commit(bad({ chatId: '' }), 0)).rejects.toThrow(/state\.chatId/);
    await expect(store.get('a')).resolves.toBeUndefined();
  });

  test('every field round-trips: unicode text and ids, 10k covered ids, model present or absent', async () => {
    const coveredIds = Array.from({ length: 10_000 }, (_, i) => (i % 3 === 0 ? `call_${i}_ünï—😀` : `${i}:${(i * 2654435761 >>> 0).toString(16)}`));
    const full: ChatState = {
      chatId: 'чат/用户-🧵 "quoted" \\ back',
      version: 1,
      summary: 'Résumé: the user 👩‍💻 asked about 東京 → items; e\u0301 vs é; tab\tnewline\nquote"\u0000end',
      coveredIds,
      summarizer: 'llm',
      model: 'gpt-4o-mini',
      tokensBefore: 123_456,
      tokensAfter: 789,
      createdAt: '2024-05-06T07:08:09.010Z',
      updatedAt: '2024-05-06T07:08:10.011Z',
    };
    expect(await store.commit(full, 0)).toBe(true);
    const got = await store.get(full.chatId);
    expect(got).toEqual(full);
    expect(got?.coveredIds).toHaveLength(10_000);
    expect(got?.summary).toBe(full.summary);

    const { model: _model, ...withoutModel } = stateOf('b', 1);
    expect(await store.commit(withoutModel, 0)).toBe(true);
    const noModel = await store.get('b');
    expect(noModel).toEqual(withoutModel);
    expect(noModel && 'model' in noModel).toBe(false);

    const empty = stateOf('c', 1, { summary: '', coveredIds: [] });
    expect(await store.commit(empty, 0)).toBe(true);
    expect(await store.get('c')).toEqual(empty);
  });

  test('stored state cannot be changed through the committed or the returned object', async () => {
    const input = stateOf('a', 1);
    const ids = input.coveredIds as string[];
    expect(await store.commit(input, 0)).toBe(true);
    ids.push('added later');
    ids[0] = 'changed';
    const got = (await store.get('a'))!;
    expect(got.coveredIds).toEqual(stateOf('a', 1).coveredIds);
    expect(Object.isFrozen(got)).toBe(true);
    expect(Object.isFrozen(got.coveredIds)).toBe(true);
    expect(() => (got.coveredIds as string[]).push('x')).toThrow(TypeError);
    expect((await store.get('a'))?.coveredIds).toEqual(stateOf('a', 1).coveredIds);
  });

  test('concurrent commits from the same version: exactly one wins', async () => {
    expect(await store.commit(stateOf('a', 1), 0)).toBe(true);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => store.commit(stateOf('a', 2, { summary: `racer ${i}` }), 1)));
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = results.indexOf(true);
    expect((await store.get('a'))?.summary).toBe(`racer ${winner}`);
  });

  test('chats are independent', async () => {
    expect(await store.commit(stateOf('a', 1), 0)).toBe(true);
    expect(await store.commit(stateOf('b', 1), 0)).toBe(true);
    expect(await store.commit(stateOf('a', 2), 1)).toBe(true);
    expect((await store.get('a'))?.version).toBe(2);
    expect(await store.get('b')).toEqual(stateOf('b', 1));
  });

  test('delete removes one chat; the chat then starts again from expectedVersion 0', async () => {
    expect(await store.commit(stateOf('a', 1), 0)).toBe(true);
    expect(await store.commit(stateOf('a', 2), 1)).toBe(true);
    expect(await store.commit(stateOf('b', 1), 0)).toBe(true);
    await store.delete('a');
    await expect(store.get('a')).resolves.toBeUndefined();
    expect(await store.get('b')).toEqual(stateOf('b', 1));
    expect(await store.commit(stateOf('a', 3), 2)).toBe(false);
    expect(await store.commit(stateOf('a', 1), 0)).toBe(true);
    await expect(store.delete('never-there')).resolves.toBeUndefined();
  });

  test('close is idempotent and every call after it rejects with a clear error', async () => {
    expect(await store.commit(stateOf('a', 1), 0)).toBe(true);
    await store.close();
    await expect(store.close()).resolves.toBeUndefined();
    await expect(store.get('a')).rejects.toThrow(/store is closed/);
    await expect(store.commit(stateOf('a', 2), 1)).rejects.toThrow(/store is closed/);
    await expect(store.delete('a')).rejects.toThrow(/store is closed/);
  });
}
