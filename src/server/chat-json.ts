import type { ServerResponse } from 'node:http';
import type { ChatJobState } from '../runtime/compressor.js';
import type { ChatState, StateStore } from '../store/state.js';
import type { ChatActivity, ChatSeen, VersionSeen, ViewSeen } from './chat-activity.js';
import type { TenantRule } from './tenant.js';

/** What the chat endpoints read: the store, this process's activity, the job of a chat, and how tenants are told apart. */
export interface ChatSources {
  readonly store: StateStore;
  readonly activity: ChatActivity;
  /** Where the chat's summary job stands, over every compressor of the proxy. */
  jobState(chatId: string): ChatJobState;
  readonly rule: TenantRule;
}

/** `GET /v1/ctxfold/chats/:id`: one chat of the caller's. */
export interface ChatJson {
  readonly object: 'ctxfold.chat';
  /** The chat id as the caller sent it (its tenant is never shown). */
  readonly id: string;
  readonly lastActivity: string | null;
  /** The stored summary in force, or null when the chat has none yet. */
  readonly summary: {
    readonly version: number;
    readonly summarizer: string;
    readonly model: string | null;
    readonly coveredMessages: number;
    readonly coveredIds: readonly string[];
    readonly tokensBefore: number;
    readonly tokensAfter: number;
    readonly createdAt: string;
    readonly updatedAt: string;
    readonly text: string;
  } | null;
  /** The versions this process committed, newest first (bounded; empty after a restart). */
  readonly versions: readonly VersionSeen[];
  readonly job: { readonly state: ChatJobState; readonly lastError: { readonly code: string; readonly at: string } | null };
  /** The token split of the last view this process made for the chat, or null. */
  readonly lastView: ViewSeen | null;
}

/** One entry of `GET /v1/ctxfold/chats`. */
export interface ChatListItem {
  readonly id: string;
  readonly lastActivity: string | null;
  /** 0 while the chat has no summary. */
  readonly summaryVersion: number;
  readonly job: ChatJobState;
}

/** The later of two ISO times (either may be missing). */
function latest(a: string | undefined, b: string | undefined): string | null {
  if (a === undefined) return b ?? null;
  return b !== undefined && b > a ? b : a;
}

/** The answer for one chat: `id` as the caller named it, its stored state and what this process saw of it (one of the two is present). */
export function chatJson(id: string, state: ChatState | undefined, seen: ChatSeen | undefined, job: ChatJobState): ChatJson {
  return {
    object: 'ctxfold.chat',
    id,
    lastActivity: latest(seen?.lastActivity, state?.updatedAt),
    summary: state === undefined ? null : {
      version: state.version,
      summarizer: state.summarizer,
      model: state.model ?? null,
      coveredMessages: state.coveredIds.length,
      coveredIds: state.coveredIds,
      tokensBefore: state.tokensBefore,
      tokensAfter: state.tokensAfter,
      createdAt: state.createdAt,
      updatedAt: state.updatedAt,
      text: state.summary,
    },
    versions: seen?.versions ?? [],
    job: { state: job, lastError: seen?.lastError ?? null },
    lastView: seen?.view ?? null,
  };
}

/** One list entry, from the same parts as `chatJson`. */
export function chatListItem(id: string, state: ChatState | undefined, seen: ChatSeen | undefined, job: ChatJobState): ChatListItem {
  return { id, lastActivity: latest(seen?.lastActivity, state?.updatedAt), summaryVersion: state?.version ?? 0, job };
}

/** Answers `value` as JSON, never cached (it is one caller's data). */
export function sendChatJson(res: ServerResponse, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  res.end(body);
}
