import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { ChatState } from '../store/state.js';
import { NO_TENANT, STORE_DOWN, viewerTenant } from './chat-caller.js';
import { chatJson, sendChatJson, type ChatSources } from './chat-json.js';
import { sendError, type ProxyError } from './json-errors.js';
import { scopedChatId } from './tenant.js';

/** Where one chat is read: `/v1/ctxfold/chats/` followed by the chat id, URL-encoded. */
export const CHAT_PATH_PREFIX = '/v1/ctxfold/chats/';

/**
 * The 404 of a chat the caller cannot see. The same bytes whether no chat has that id or another
 * tenant's has: the lookup only ever reads the caller's own scope, and the answer names no id.
 */
const NO_SUCH_CHAT: ProxyError = Object.freeze({ status: 404, message: 'no such chat for this caller', code: 'ctxfold_not_found' });

/**
 * `GET /v1/ctxfold/chats/:id`: the caller's chat `id` (as sent in the chat-id header), looked up
 * inside the caller's tenant (`viewerTenant`, `scopedChatId`: exactly as a folded request scopes
 * it): its stored summary, the versions and last view this process saw, its job. Resolves with the
 * status answered.
 */
export async function serveChat(sources: ChatSources, logger: Logger, req: IncomingMessage, res: ServerResponse, url: URL): Promise<number> {
  const tenant = viewerTenant(req.headers, sources.rule);
  if (tenant === undefined) return fail(res, NO_TENANT);
  let id: string;
  try {
    id = decodeURIComponent(url.pathname.slice(CHAT_PATH_PREFIX.length));
  } catch {
    return fail(res, NO_SUCH_CHAT);
  }
  if (id === '') return fail(res, NO_SUCH_CHAT);
  const key = scopedChatId(tenant, id);
  let state: ChatState | undefined;
  try {
    state = await sources.store.get(key);
  } catch (error) {
    logger.warn({ route: 'ctxfold.chat', tenant, err: { message: (error as Error)?.message } }, 'store.get failed for the chat page');
    return fail(res, STORE_DOWN);
  }
  const seen = sources.activity.of(key);
  if (state === undefined && seen === undefined) return fail(res, NO_SUCH_CHAT);
  sendChatJson(res, chatJson(id, state, seen, sources.jobState(key)));
  return 200;
}

function fail(res: ServerResponse, error: ProxyError): number {
  sendError(res, 'openai', error, { 'cache-control': 'no-store' });
  return error.status;
}
