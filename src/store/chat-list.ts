import { InputError } from '../errors.js';

/**
 * An optional store capability: listing the chats a store holds by the start of their ids. The
 * proxy lists one tenant's chats with it (every chat id it stores starts with `<tenant>:`).
 */
export interface ChatLister {
  /**
   * Ids of the chats with a stored state whose id starts with `prefix`: at most `limit` (an integer
   * >= 1), the smallest first in code point order (SQLite's text order, `compareCodePoints`). Rejects
   * with a `StoreError` when the store cannot be reached. Never lists another prefix's chat.
   */
  listChatIds(prefix: string, limit: number): Promise<string[]>;
}

/** True when `store` can list chats by prefix (it has a `listChatIds` method); never throws. */
export function canListChats(store: unknown): store is ChatLister {
  return typeof store === 'object' && store !== null && typeof (store as Partial<ChatLister>).listChatIds === 'function';
}

/**
 * Orders two strings by code point (the order of their UTF-8 bytes, as SQLite compares text),
 * where `<` compares UTF-16 code units: the two differ only where a character past U+FFFF meets
 * one from U+E000 to U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

/**
 * The smallest string greater than every string that starts with `prefix` (code point order):
 * `prefix` with its last code point raised by one (past the surrogates, whose code points are no
 * characters); undefined when there is none (an empty prefix, or one of U+10FFFF only). So the
 * strings starting with `prefix` are exactly those in [prefix, bound).
 */
export function prefixUpperBound(prefix: string): string | undefined {
  const points = Array.from(prefix, (c) => c.codePointAt(0)!);
  while (points.length > 0) {
    const last = points.pop()!;
    if (last < 0x10ffff) return String.fromCodePoint(...points, last + 1 === 0xd800 ? 0xe000 : last + 1);
  }
  return undefined;
}

/** The arguments of `listChatIds`, checked: a string prefix and an integer limit >= 1 (else an `InputError` naming it). */
export function checkListing(prefix: unknown, limit: unknown): void {
  if (typeof prefix !== 'string') throw new InputError('prefix', `must be a string, got ${typeof prefix}`);
  if (typeof limit !== 'number' || !Number.isSafeInteger(limit) || limit < 1) throw new InputError('limit', `must be an integer >= 1, got ${String(limit)}`);
}
