import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { canListChats } from '../store/chat-list.js';
import type { ChatState } from '../store/state.js';
import { NO_TENANT, STORE_DOWN, viewerTenant } from './chat-caller.js';
import { chatListItem, sendChatJson, type ChatListItem, type ChatSources } from './chat-json.js';
import { sendError } from './json-errors.js';
import { scopedChatId } from './tenant.js';

/** The most chats one list answer holds (`truncated` says when the caller has more). */
export const CHAT_LIST_LIMIT = 500;

/** `GET /v1/ctxfold/chats`: the list of the caller's chats. */
export interface ChatListJson {
  readonly object: 'list';
  /** Most recently active first. */
  readonly data: readonly ChatListItem[];
  /** True when the caller has more chats than `CHAT_LIST_LIMIT`. */
  readonly truncated: boolean;
  /** False when the store cannot list chats (a custom `StateStore`): only the chats this process served are listed. */
  readonly fromStore: boolean;
}

/**
 * `GET /v1/ctxfold/chats`: the chats of the caller's tenant (`viewerTenant`), the store's (by the
 * tenant's key prefix, `listChatIds`) and those this process served since it started, most
 * recently active first, at most `CHAT_LIST_LIMIT`. No other tenant's chat can be listed: every
 * id read starts with the caller's fixed-length tenant and a colon. Resolves with the status answered.
 */
export async function serveChatList(sources: ChatSources, logger: Logger, req: IncomingMessage, res: ServerResponse): Promise<number> {
  const tenant = viewerTenant(req.headers, sources.rule);
  if (tenant === undefined) {
    sendError(res, 'openai', NO_TENANT, { 'cache-control': 'no-store' });
    return NO_TENANT.status;
  }
  const prefix = scopedChatId(tenant, '');
  const fromStore = canListChats(sources.store);
  const keys = new Set(sources.activity.idsStartingWith(prefix));
  let shown: string[];
  let states: (ChatState | undefined)[];
  try {
    if (fromStore) for (const key of await sources.store.listChatIds(prefix, CHAT_LIST_LIMIT + 1)) keys.add(key);
    // The chats this process saw come first (most recent first), then the store's in id order.
    shown = [...keys].slice(0, CHAT_LIST_LIMIT);
    states = await Promise.all(shown.map((key) => sources.store.get(key)));
  } catch (error) {
    logger.warn({ route: 'ctxfold.chats', tenant, err: { message: (error as Error)?.message } }, 'the store failed listing chats for the chat page');
    sendError(res, 'openai', STORE_DOWN, { 'cache-control': 'no-store' });
    return STORE_DOWN.status;
  }
  // A chat deleted between the listing and its read is left out.
  const items = shown.flatMap((key, k) => {
    const seen = sources.activity.of(key);
    return states[k] === undefined && seen === undefined ? [] : [chatListItem(key.slice(prefix.length), states[k], seen, sources.jobState(key))];
  });
  const when = (item: ChatListItem) => item.lastActivity ?? '';
  items.sort((a, b) => (when(a) === when(b) ? 0 : when(a) < when(b) ? 1 : -1));
  const answer: ChatListJson = { object: 'list', data: items, truncated: keys.size > CHAT_LIST_LIMIT, fromStore };
  sendChatJson(res, answer);
  return 200;
}
