import { canonicalJson } from '../core/ids.js';
import { fingerprintText } from './fingerprints.js';

/** The request fields `createCompressor` reads a chat id from by default. */
export interface ChatIdCarrier {
  readonly chatId?: unknown;
  readonly metadata?: { readonly chat_id?: unknown } | null;
  readonly messages?: readonly unknown[];
}

/**
 * The chat a request belongs to: `request.chatId`, else `request.metadata.chat_id`, else a
 * fingerprint of the conversation's opening (the messages up to and including the first user
 * message, at most 3), which stays the same as the conversation grows.
 */
export function defaultChatId(request: ChatIdCarrier): string {
  if (typeof request.chatId === 'string' && request.chatId !== '') return request.chatId;
  const meta = request.metadata?.chat_id;
  if (typeof meta === 'string' && meta !== '') return meta;
  const messages = request.messages ?? [];
  const opening: unknown[] = [];
  for (const m of messages) {
    opening.push(m);
    if ((m as { role?: unknown })?.role === 'user' || opening.length === 3) break;
  }
  return `fp:${fingerprintText(canonicalJson(opening, fingerprintText))}`;
}
