import { CtxfoldError } from '../errors.js';
import type { Compressor } from '../runtime/compressor.js';
import type { CompressReport } from '../runtime/compress.js';

/** How many chats the proxy remembers activity of (the most recently active), and how many summary versions per chat. */
export const ACTIVITY_BOUNDS = Object.freeze({ chats: 10_000, versions: 16 });

/** The token split of a chat's last view, as the compressor's report gave it. */
export interface ViewSeen {
  /** ISO time the view was made. */
  readonly at: string;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  readonly maxContextTokens: number | null;
  /** Kept free for the reply, on top of the split. */
  readonly reservedOutputTokens: number;
  readonly messagesBefore: number;
  readonly messagesAfter: number;
  readonly summaryApplied: boolean;
  /** The report's split: head, summary, verbatim middle, kept tail, notes, tools, overhead; adds up to `tokensAfter`. */
  readonly split: CompressReport['split'];
}

/** A summary version this process committed, and the range its job added. */
export interface VersionSeen {
  readonly version: number;
  /** ISO time of the commit. */
  readonly at: string;
  /** Messages the summary covers, in all. */
  readonly coveredMessages: number;
  /** The messages this version added: how many, and the ids of the first and last (history order). */
  readonly added: { readonly messages: number; readonly firstId: string | null; readonly lastId: string | null };
  /** Tokens of the covered messages, and of the summary. */
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  /** True when the stored summary no longer matched the history and was rebuilt from the head. */
  readonly recomputed: boolean;
}

/** What the proxy remembers of one chat. */
export interface ChatSeen {
  /** ISO time of its last view, or of its last summary event. */
  readonly lastActivity: string;
  readonly view?: ViewSeen;
  /** Newest first, at most `ACTIVITY_BOUNDS.versions`. */
  readonly versions: readonly VersionSeen[];
  /** The last failed summary job's error code (a `CtxfoldError` code, else `unknown`), until a later job commits. */
  readonly lastError?: { readonly code: string; readonly at: string };
}

type Entry = { lastActivity: string; view?: ViewSeen; versions: VersionSeen[]; lastError?: { code: string; at: string } };

/**
 * What this process saw of each chat (keyed by the scoped store id), from its compressors'
 * events: the last view's split, the summary versions it committed, the last job error. In memory,
 * per process, bounded: the `ACTIVITY_BOUNDS.chats` most recently active chats, each with its
 * newest `ACTIVITY_BOUNDS.versions` versions; lost on restart and not shared between processes.
 */
export class ChatActivity {
  readonly #chats = new Map<string, Entry>();
  readonly #bounds: { readonly chats: number; readonly versions: number };
  readonly #now: () => string;

  constructor(bounds: Partial<typeof ACTIVITY_BOUNDS> = {}, now: () => string = () => new Date().toISOString()) {
    this.#bounds = { ...ACTIVITY_BOUNDS, ...bounds };
    this.#now = now;
  }

  /** Subscribes to a compressor's `compressed` and summary events. */
  watch(compressor: Compressor): void {
    compressor.on('compressed', ({ chatId, report }) => {
      this.#touch(chatId).view = viewOf(report, this.#now());
    });
    compressor.on('summary:done', (e) => {
      const entry = this.#touch(e.chatId);
      entry.versions.unshift({
        version: e.version,
        at: entry.lastActivity,
        coveredMessages: e.coveredIds.length,
        added: { messages: e.newlyCovered.length, firstId: e.newlyCovered[0] ?? null, lastId: e.newlyCovered.at(-1) ?? null },
        tokensBefore: e.tokensBefore,
        tokensAfter: e.tokensAfter,
        recomputed: e.recomputed,
      });
      entry.versions.length = Math.min(entry.versions.length, this.#bounds.versions);
      delete entry.lastError;
    });
    compressor.on('summary:failed', (e) => {
      const entry = this.#touch(e.chatId);
      entry.lastError = { code: e.error instanceof CtxfoldError ? e.error.code : 'unknown', at: entry.lastActivity };
    });
  }

  /** What was seen of the chat stored as `chatId`, or undefined. */
  of(chatId: string): ChatSeen | undefined {
    return this.#chats.get(chatId);
  }

  /** The remembered chats whose store id starts with `prefix`, most recently active first. */
  idsStartingWith(prefix: string): string[] {
    const ids: string[] = [];
    for (const id of this.#chats.keys()) if (id.startsWith(prefix)) ids.push(id);
    return ids.reverse();
  }

  /** The chat's entry, made the most recently active (the least recently active one dropped past the bound). */
  #touch(chatId: string): Entry {
    const entry = this.#chats.get(chatId) ?? { lastActivity: '', versions: [] };
    this.#chats.delete(chatId);
    this.#chats.set(chatId, entry);
    entry.lastActivity = this.#now();
    if (this.#chats.size > this.#bounds.chats) this.#chats.delete(this.#chats.keys().next().value!);
    return entry;
  }
}

/** The numbers of a report the chat page shows (never its lazily computed lists). */
function viewOf(report: CompressReport, at: string): ViewSeen {
  return {
    at,
    tokensBefore: report.tokensBefore,
    tokensAfter: report.tokensAfter,
    maxContextTokens: report.maxContextTokens ?? null,
    reservedOutputTokens: report.reservedOutputTokens,
    messagesBefore: report.messagesBefore,
    messagesAfter: report.messagesAfter,
    summaryApplied: report.summary.applied,
    split: { ...report.split },
  };
}
