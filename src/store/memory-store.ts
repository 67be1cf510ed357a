import { InputError, StoreError } from '../errors.js';
import { describe } from '../formats/describe.js';
import { MemoryOriginals, type OriginalsBounds } from './memory-originals.js';
import type { OriginalRecord, OriginalsStore } from './originals.js';
import { assertCommittable } from './commit-rules.js';
import { checkListing, compareCodePoints, type ChatLister } from './chat-list.js';
import { stateFields, type ChatState, type StateStore } from './state.js';

/** Options of `MemoryStore`. */
export interface MemoryStoreOptions {
  /**
   * Bounds of the original messages kept for recall (`createCompressor({ recall: true })`):
   * default 20,000 records and 64 MiB over every chat; when over, the chats written longest ago
   * lose their originals first (their summaries stay).
   */
  readonly originals?: OriginalsBounds;
}

/**
 * A `StateStore` in this process's memory (lost on exit). It keeps frozen copies: neither the
 * object passed to `commit` nor one returned by `get` can change what is stored. Compare-and-set
 * behaves exactly as in `SqliteStore`: a write lands only when the stored version (0 = none) equals
 * `expectedVersion`, and a malformed call is rejected with the same errors.
 */
export class MemoryStore implements StateStore, OriginalsStore, ChatLister {
  readonly #states = new Map<string, ChatState>();
  readonly #originals: MemoryOriginals;
  #closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    const bounds = options?.originals ?? {};
    for (const key of ['maxRecords', 'maxBytes'] as const) {
      const v = bounds[key];
      if (v !== undefined && (!Number.isSafeInteger(v) || v < 1)) throw new InputError(`options.originals.${key}`, `must be an integer >= 1, got ${describe(v)}`);
    }
    this.#originals = new MemoryOriginals(bounds);
  }

  async get(chatId: string): Promise<ChatState | undefined> {
    this.#assertOpen();
    return this.#states.get(chatId);
  }

  async commit(state: ChatState, expectedVersion: number): Promise<boolean> {
    this.#assertOpen();
    assertCommittable(state, expectedVersion);
    const storedVersion = this.#states.get(state.chatId)?.version ?? 0;
    if (storedVersion !== expectedVersion) return false;
    this.#states.set(state.chatId, frozenCopy(state));
    return true;
  }

  /** Ids of the stored chats starting with `prefix`, the `limit` smallest in code point order (every chat is looked at). */
  async listChatIds(prefix: string, limit: number): Promise<string[]> {
    this.#assertOpen();
    checkListing(prefix, limit);
    const ids = [...this.#states.keys()].filter((id) => id.startsWith(prefix));
    return ids.sort(compareCodePoints).slice(0, limit);
  }

  /** Deletes the chat's state and the originals kept for it. */
  async delete(chatId: string): Promise<void> {
    this.#assertOpen();
    this.#states.delete(chatId);
    this.#originals.delete(chatId);
  }

  /** Keeps (upserts) originals a summary replaced; the oldest chats' originals are evicted past the bounds. */
  async putOriginals(chatId: string, records: readonly OriginalRecord[]): Promise<void> {
    this.#assertOpen();
    this.#originals.put(chatId, records);
  }

  /** The kept originals with these ids, in the order asked (unknown ids skipped). */
  async getOriginals(chatId: string, ids: readonly string[]): Promise<OriginalRecord[]> {
    this.#assertOpen();
    return this.#originals.get(chatId, ids);
  }

  /** The chat's kept originals that hold the query's words, best match first. */
  async searchOriginals(chatId: string, query: string, limit: number): Promise<OriginalRecord[]> {
    this.#assertOpen();
    return this.#originals.search(chatId, query, limit);
  }

  /** Records and bytes of originals held now (for tests and gauges). */
  originalsSize(): { readonly records: number; readonly bytes: number; readonly chats: number } {
    return this.#originals.size;
  }

  /** Idempotent; afterwards every other method rejects. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#states.clear();
    this.#originals.clear();
  }

  #assertOpen(): void {
    if (this.#closed) throw new StoreError('MemoryStore', 'the store is closed; open a new one');
  }
}

/** Only the fields of `ChatState` (as SQLite stores them), deep-frozen. */
function frozenCopy(state: ChatState): ChatState {
  return Object.freeze({ ...stateFields(state), coveredIds: Object.freeze([...state.coveredIds]) });
}
