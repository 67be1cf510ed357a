import { sharedMessages, type TextUnread } from '../core/same-message.js';
import type { Grouping } from '../core/groups.js';
import type { ViewTrace } from '../core/view-trace.js';
import type { FormatName } from '../formats/lens.js';
import { LENSES } from '../formats/registry.js';
import { Fingerprints } from './fingerprints.js';

/**
 * What a chat's last planned history left behind for its next request: a snapshot of its
 * messages (the array copied, the message objects shared) and what was found for them.
 */
export interface RememberedHistory {
  readonly messages: readonly unknown[];
  readonly counts: Float64Array;
  readonly grouping: Grouping;
  readonly format: FormatName;
  /** Message ids computed so far, by position (holes where none was needed yet). */
  readonly ids: string[];
  /** What that view was made of, for the prefix the next view shares with it. */
  readonly view?: ViewTrace;
  /**
   * Messages `[from, to)` whose text the plan never read (neither counted for the view nor
   * checked against a summary's ids; pinned ones excepted), for a format whose string content is
   * only text (`stringContentIsText`): the next request compares their text loosely and reuses
   * neither their counts nor their ids (see `recall`).
   */
  readonly textUnread?: { readonly from: number; readonly to: number };
}

export type { ViewTrace } from '../core/view-trace.js';

/** A history matched against its chat's remembered one: that history, and how many leading messages they share. */
export interface Recall {
  readonly history?: RememberedHistory;
  readonly shared: number;
}

/** Options of `createHistoryCache`. */
export interface HistoryCacheOptions {
  /** Most chats remembered; the least recently used goes first. Default 1,000. */
  readonly maxChats?: number;
  /** Most bytes of history remembered, estimated (see `estimateBytes`). Default 256 MiB. */
  readonly maxBytes?: number;
}

/**
 * The recent histories of many chats, one each, bounded by count and by bytes, least recently
 * used first. A chat's next request that repeats its messages at the same positions (the same
 * objects, or equal content as in a re-parsed request body) reuses their counts, groups and ids
 * and pays one comparison per message. Owned by its creator: nothing here is process-wide.
 */
export interface HistoryCache {
  /** The remembered history of `chatId` and how many leading messages `messages` shares with it. */
  recall(chatId: string, messages: readonly unknown[]): Recall;
  /** Remembers `history` for `chatId`, replacing the chat's previous one. */
  remember(chatId: string, history: RememberedHistory): void;
  /** Fingerprints (for message ids) of the messages these histories hold. */
  readonly fingerprints: Fingerprints;
  /** Chats and estimated bytes held. */
  stats(): { chats: number; bytes: number; evicted: number };
}

const NOTHING: Recall = { shared: 0 };

/**
 * What a remembered history keeps alive, estimated from its token counts (about four characters
 * a token, two bytes a character) plus a fixed cost per message for its object, id and counts.
 * An estimate, not a measurement: it bounds memory in proportion, cheaply.
 */
export function estimateBytes(history: RememberedHistory): number {
  let tokens = 0;
  // Uncounted messages (NaN) are estimated at a typical 40 tokens.
  for (let i = 0; i < history.counts.length; i++) tokens += history.counts[i] === history.counts[i] ? history.counts[i] : 40;
  return 8 * tokens + 160 * history.counts.length;
}

/** The messages of `history` whose text may be compared loosely, when its format allows it. */
function unreadOf(history: RememberedHistory): TextUnread | undefined {
  const span = history.textUnread;
  if (!span || span.to <= span.from || !LENSES[history.format]?.stringContentIsText) return undefined;
  return { from: span.from, to: span.to, pinned: history.grouping.pinned };
}

/**
 * `history` as it stands for `messages`, which share its first `shared` messages with the text of
 * the unread ones compared loosely: those take the new message objects, an uncounted count (NaN)
 * and no id, so nothing computed from their old text is reused. Copies; the entry is not changed.
 */
function forgetUnread(history: RememberedHistory, messages: readonly unknown[], shared: number, unread: TextUnread): RememberedHistory {
  const end = Math.min(shared, unread.to);
  const pinned = unread.pinned;
  // The new objects stand for the shared prefix (equal but for unread text), the old ones after it.
  const snapshot = shared >= history.messages.length ? messages.slice(0, shared) : [...messages.slice(0, shared), ...history.messages.slice(shared)];
  const counts = history.counts.slice();
  for (let i = unread.from; i < end; i++) if (pinned[i] !== 1) counts[i] = NaN;
  // Ids are filled lazily (most are holes); the array is copied only when the span holds one.
  let ids = history.ids;
  const idsEnd = Math.min(end, ids.length);
  for (let i = unread.from; i < idsEnd; i++) {
    if (ids[i] === undefined || pinned[i] === 1) continue;
    if (ids === history.ids) ids = history.ids.slice();
    (ids as (string | undefined)[])[i] = undefined;
  }
  return { ...history, messages: snapshot, counts, ids };
}

/** Creates an empty history cache (see `HistoryCache`). */
export function createHistoryCache(options: HistoryCacheOptions = {}): HistoryCache {
  const maxChats = options.maxChats ?? 1000;
  const maxBytes = options.maxBytes ?? 256 * 1024 * 1024;
  const entries = new Map<string, { history: RememberedHistory; bytes: number }>();
  const fingerprints = new Fingerprints();
  let bytes = 0;
  let evicted = 0;
  return {
    fingerprints,
    recall(chatId, messages) {
      const entry = entries.get(chatId);
      if (!entry || messages.length === 0) return NOTHING;
      entries.delete(chatId); // most recently used last
      entries.set(chatId, entry);
      const history = entry.history;
      const unread = unreadOf(history);
      // The same object, or equal content: comparing two strings is far cheaper than hashing one.
      const shared = sharedMessages(history.messages, messages, unread);
      if (shared === 0) return NOTHING;
      return { history: unread && shared > unread.from ? forgetUnread(history, messages, shared, unread) : history, shared };
    },
    remember(chatId, history) {
      const old = entries.get(chatId);
      if (old) {
        entries.delete(chatId);
        bytes -= old.bytes;
      }
      const size = estimateBytes(history);
      if (size > maxBytes) return;
      entries.set(chatId, { history, bytes: size });
      bytes += size;
      for (const [key, entry] of entries) {
        if (entries.size <= maxChats && bytes <= maxBytes) break;
        entries.delete(key);
        bytes -= entry.bytes;
        evicted++;
      }
    },
    stats: () => ({ chats: entries.size, bytes, evicted }),
  };
}
