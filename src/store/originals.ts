import type { TranscriptEntry } from '../formats/lens.js';

/**
 * One original message a summary replaced, as kept for recall. Invariant: `id` is the message's
 * id as the chat's summary state lists it (`ChatState.coveredIds`), so a record is found again by
 * that id; `text` is what the format's lens reads of the message (text, calls with their
 * arguments, results), and `raw` its JSON as it was sent.
 */
export interface OriginalRecord {
  /** The message id (the format's own id, else `<position>:<fingerprint>`). */
  readonly id: string;
  /** Its position in the history when it was summarized. */
  readonly index: number;
  readonly role: TranscriptEntry['role'];
  /** The message as plain text: its text, then each call (name and arguments), then each result. */
  readonly text: string;
  /** The message as JSON. */
  readonly raw: string;
}

/**
 * A store that keeps the original messages summaries replaced, so the model can read them again.
 * Invariants: `putOriginals` is an upsert keyed by (chat, message id) and never changes a chat's
 * summary state; `getOriginals` returns the records found, in the order of `ids` (an unknown id
 * is skipped, never an error); `searchOriginals` returns at most `limit` records of that chat,
 * best match first, and an empty list for a query with no searchable word.
 */
export interface OriginalsStore {
  putOriginals(chatId: string, records: readonly OriginalRecord[]): Promise<void>;
  getOriginals(chatId: string, ids: readonly string[]): Promise<OriginalRecord[]>;
  searchOriginals(chatId: string, query: string, limit: number): Promise<OriginalRecord[]>;
}

/** True when `store` keeps originals (has the three `OriginalsStore` methods); never throws. */
export function hasOriginals(store: unknown): store is OriginalsStore {
  const s = store as Partial<Record<keyof OriginalsStore, unknown>> | null;
  return typeof s === 'object' && s !== null
    && typeof s.putOriginals === 'function' && typeof s.getOriginals === 'function' && typeof s.searchOriginals === 'function';
}

/**
 * The words of a search query, for both stores: runs of letters and digits, with the `-._:/@#`
 * that join the parts of an identifier kept inside a word (`A-1.2`, `a@b.c`). Lower-cased,
 * deduplicated, at most 32 words of at most 64 characters: a query is never unbounded work.
 */
export function queryWords(query: string): string[] {
  const words = new Set<string>();
  for (const m of query.toLowerCase().matchAll(/[\p{L}\p{N}_]+(?:[-._:/@#][\p{L}\p{N}_]+)*/gu)) {
    words.add(m[0].slice(0, 64));
    if (words.size === 32) break;
  }
  return [...words];
}
