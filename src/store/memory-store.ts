import { StoreError } from '../errors.js';
import { assertCommittable } from './commit-rules.js';
import type { ChatState, StateStore } from './state.js';

/**
 * A `StateStore` in this process's memory (lost on exit). It keeps frozen copies: neither the
 * object passed to `commit` nor one returned by `get` can change what is stored. Compare-and-set
 * behaves exactly as in `SqliteStore`: a write lands only when the stored version (0 = none) equals
 * `expectedVersion`, and a malformed call is rejected with the same errors.
 */
export class MemoryStore implements StateStore {
  readonly #states = new Map<string, ChatState>();
  #closed = false;

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

  async delete(chatId: string): Promise<void> {
    this.#assertOpen();
    this.#states.delete(chatId);
  }

  /** Idempotent; afterwards every other method rejects. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#states.clear();
  }

  #assertOpen(): void {
    if (this.#closed) throw new StoreError('MemoryStore', 'the store is closed; open a new one');
  }
}

/** Only the fields of `ChatState` (as SQLite stores them), deep-frozen. */
function frozenCopy(state: ChatState): ChatState {
  return Object.freeze({
    chatId: state.chatId,
    version: state.version,
    summary: state.summary,
    coveredIds: Object.freeze([...state.coveredIds]),
    summarizer: state.summarizer,
    ...(state.model !== undefined ? { model: state.model } : {}),
    tokensBefore: state.tokensBefore,
    tokensAfter: state.tokensAfter,
    createdAt: state.createdAt,
    updatedAt: state.updatedAt,
  });
}
