import type { ChatState, StateStore } from './state.js';

/**
 * A per-chat lease held by one process: while it is held, no other holder of a lease on the same
 * chat exists anywhere (the store grants it to one token at a time and it expires after `ttlMs`
 * unless renewed). `fence` grows with every lease granted on the chat, so a later holder always
 * carries a larger fence than an earlier one.
 */
export interface Lease {
  readonly chatId: string;
  /** Random, unique to this grant: renew, release and commit act only while the store still holds it. */
  readonly token: string;
  /** Fencing token: strictly greater than the fence of every earlier lease on this chat. */
  readonly fence: number;
  /** How long the lease lasts after it is granted or renewed, in ms. */
  readonly ttlMs: number;
  /** Extends the lease by `ttlMs` from now; false (nothing changed) when it is no longer this lease's. */
  renew(): Promise<boolean>;
  /** Ends the lease if it is still this one's; a lease that expired and went to another holder is left alone. */
  release(): Promise<void>;
  /**
   * `StateStore.commit` that lands only while this lease is held, checked in the same atomic step
   * as the version: resolves false when the version moved, rejects with a `StoreError` when the
   * lease expired or was released (nothing is written), so a holder whose lease ran out can never write.
   */
  commit(state: ChatState, expectedVersion: number): Promise<boolean>;
}

/**
 * An optional store capability: leases that exclude each other across processes. A store that has
 * it lets several processes share its chats and still run one summary job per chat at a time.
 */
export interface LeaseCapable {
  /**
   * Takes the chat's lease for `ttlMs` (the store's default when omitted), or resolves undefined
   * when another holder has it. Rejects with a `StoreError` when the store cannot be reached.
   */
  acquireLease(chatId: string, ttlMs?: number): Promise<Lease | undefined>;
}

/** True when `store` grants per-chat leases (it has an `acquireLease` method); the scheduler then runs each job under one. */
export function hasLeases(store: StateStore): store is StateStore & LeaseCapable {
  return typeof (store as Partial<LeaseCapable>).acquireLease === 'function';
}
