import type { OriginalRecord } from './originals.js';
import { rankRecords } from './rank-records.js';

/** Bounds of the originals a `MemoryStore` keeps. */
export interface OriginalsBounds {
  /** Records kept at most, over every chat. Default 20,000. */
  readonly maxRecords?: number;
  /** Bytes kept at most (UTF-16 size of each record's text and raw JSON), over every chat. Default 64 MiB. */
  readonly maxBytes?: number;
}

/** Default bounds of `MemoryOriginals`. */
export const DEFAULT_ORIGINALS_BOUNDS = Object.freeze({ maxRecords: 20_000, maxBytes: 64 * 1024 * 1024 });

const sizeOf = (r: OriginalRecord): number => 2 * (r.text.length + r.raw.length + r.id.length) + 64;

/**
 * Originals in this process's memory, bounded. Invariant: after every `put`, at most `maxRecords`
 * records and `maxBytes` bytes are held; when over, whole chats are evicted, the chat written
 * longest ago first; the chat being written loses its oldest records only when it alone is over.
 */
export class MemoryOriginals {
  readonly #chats = new Map<string, Map<string, OriginalRecord>>();
  readonly #maxRecords: number;
  readonly #maxBytes: number;
  #records = 0;
  #bytes = 0;

  constructor(bounds: OriginalsBounds = {}) {
    this.#maxRecords = bounds.maxRecords ?? DEFAULT_ORIGINALS_BOUNDS.maxRecords;
    this.#maxBytes = bounds.maxBytes ?? DEFAULT_ORIGINALS_BOUNDS.maxBytes;
  }

  /** Records and bytes held now. */
  get size(): { readonly records: number; readonly bytes: number; readonly chats: number } {
    return { records: this.#records, bytes: this.#bytes, chats: this.#chats.size };
  }

  put(chatId: string, records: readonly OriginalRecord[]): void {
    let chat = this.#chats.get(chatId);
    if (chat) this.#chats.delete(chatId); // re-inserted last: most recently written
    else chat = new Map();
    this.#chats.set(chatId, chat);
    for (const r of records) {
      const copy = Object.freeze({ id: r.id, index: r.index, role: r.role, text: r.text, raw: r.raw });
      const old = chat.get(r.id);
      if (old) {
        chat.delete(r.id);
        this.#records--;
        this.#bytes -= sizeOf(old);
      }
      chat.set(r.id, copy);
      this.#records++;
      this.#bytes += sizeOf(copy);
    }
    this.#evict(chatId);
  }

  get(chatId: string, ids: readonly string[]): OriginalRecord[] {
    const chat = this.#chats.get(chatId);
    if (!chat) return [];
    const out: OriginalRecord[] = [];
    for (const id of ids) {
      const r = chat.get(id);
      if (r) out.push(r);
    }
    return out;
  }

  /** Records of the chat holding the query's words, best first (`rankRecords`). */
  search(chatId: string, query: string, limit: number): OriginalRecord[] {
    const chat = this.#chats.get(chatId);
    return chat ? rankRecords(chat.values(), query, limit) : [];
  }

  delete(chatId: string): void {
    const chat = this.#chats.get(chatId);
    if (!chat) return;
    for (const r of chat.values()) this.#bytes -= sizeOf(r);
    this.#records -= chat.size;
    this.#chats.delete(chatId);
  }

  clear(): void {
    this.#chats.clear();
    this.#records = 0;
    this.#bytes = 0;
  }

  #over(): boolean {
    return this.#records > this.#maxRecords || this.#bytes > this.#maxBytes;
  }

  #evict(writing: string): void {
    for (const chatId of this.#chats.keys()) {
      if (!this.#over()) return;
      if (chatId !== writing) this.delete(chatId);
    }
    // Only the chat being written is left and it alone is over: its oldest records go first.
    const chat = this.#chats.get(writing);
    if (!chat) return;
    for (const [id, r] of chat) {
      if (!this.#over()) return;
      chat.delete(id);
      this.#records--;
      this.#bytes -= sizeOf(r);
    }
  }
}
