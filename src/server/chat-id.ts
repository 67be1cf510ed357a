import type { IncomingHttpHeaders } from 'node:http';
import { isFields, type Fields } from '../runtime/endpoints.js';
import { canonicalJson } from '../core/ids.js';
import { defaultChatId } from '../runtime/chat-id.js';
import { fingerprintText } from '../runtime/fingerprints.js';
import { scopedChatId } from './tenant.js';

/** The header that names a chat. */
export const CHAT_ID_HEADER = 'x-ctxfold-chat-id';

/** Where a chat id came from (logged, so an operator sees how many chats are fingerprinted). */
export type ChatIdSource = 'header' | 'metadata' | 'user' | 'fingerprint';

/** A request's chat, scoped by its tenant. */
export interface ChatOf {
  /** The store key: `<tenant>:<chat id>`. */
  readonly chatId: string;
  readonly source: ChatIdSource;
}

const named = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The chat named by the `chatIdHeader` header, else by `x-ctxfold-chat-id`; undefined when neither is sent. */
export function chatFromHeaders(headers: IncomingHttpHeaders, chatIdHeader: string = CHAT_ID_HEADER): string | undefined {
  const header = (name: string) => {
    const value = headers[name];
    return named(Array.isArray(value) ? value[0] : value);
  };
  return header(chatIdHeader) ?? header(CHAT_ID_HEADER);
}

/**
 * The chat a request belongs to, always inside its tenant: the `chatIdHeader` header (e.g.
 * Open WebUI's `x-openwebui-chat-id`), else the `x-ctxfold-chat-id` header, else
 * the body's `metadata.chat_id`, else its `user`, else a fingerprint of the opening (the
 * instructions outside the list, `system` or `instructions`, plus the history's first messages up
 * to the first reply). Two tenants who open alike get different chats, since the tenant prefixes
 * every id; two chats of one tenant that open alike share one until the model has answered them
 * differently, so clients should name their chats.
 */
export function chatOf(headers: IncomingHttpHeaders, body: Fields, history: readonly unknown[], tenant: string, chatIdHeader: string = CHAT_ID_HEADER): ChatOf {
  const fromHeader = chatFromHeaders(headers, chatIdHeader);
  if (fromHeader !== undefined) return { chatId: scopedChatId(tenant, fromHeader), source: 'header' };
  const fromMetadata = named(isFields(body.metadata) ? body.metadata.chat_id : undefined);
  if (fromMetadata !== undefined) return { chatId: scopedChatId(tenant, fromMetadata), source: 'metadata' };
  const fromUser = named(body.user);
  if (fromUser !== undefined) return { chatId: scopedChatId(tenant, fromUser), source: 'user' };
  const opening = defaultChatId({ messages: history });
  const instructions = body.system ?? body.instructions;
  const id = instructions === undefined ? opening : `fp:${fingerprintText(`${canonicalJson(instructions, fingerprintText)}\u0000${opening}`)}`;
  return { chatId: scopedChatId(tenant, id), source: 'fingerprint' };
}
