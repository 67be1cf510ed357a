import { canonicalJson } from '../core/ids.js';
import { fingerprintText } from './fingerprints.js';
import { InputError } from '../errors.js';

/** The request fields `createCompressor` reads a chat id from by default. */
export interface ChatIdCarrier {
  readonly chatId?: unknown;
  readonly metadata?: { readonly chat_id?: unknown } | null;
  readonly messages?: readonly unknown[];
}

/** Most messages of the opening that go into a fingerprinted chat id. */
const OPENING_MESSAGES = 8;

/**
 * The chat a request belongs to: `request.chatId`, else `request.metadata.chat_id`, else a
 * fingerprint of the conversation's opening: every message up to and including the first
 * assistant reply after the first user message (whole texts, at most 8 messages). Two users who
 * open with the same system prompt and the same first words get different ids once the model has
 * answered them differently; until that first reply, their ids are equal. Pass a chat id to be
 * sure (see the README): the fingerprint is a fallback.
 */
export function defaultChatId(request: ChatIdCarrier): string {
  const given = explicitChatId(request);
  if (given !== undefined) return given;
  const messages = request.messages ?? [];
  const opening: unknown[] = [];
  let askedYet = false;
  for (const m of messages) {
    opening.push(m);
    const role = (m as { role?: unknown })?.role;
    if (role === 'user') askedYet = true;
    else if (role === 'assistant' && askedYet) break;
    if (opening.length === OPENING_MESSAGES) break;
  }
  try {
    return `fp:${fingerprintText(canonicalJson(opening, fingerprintText))}`;
  } catch (error) {
    if (error instanceof InputError) throw new InputError('request.messages', error.rule);
    throw error;
  }
}

/** The chat id the request names itself (`chatId`, else `metadata.chat_id`), if any. */
export function explicitChatId(request: ChatIdCarrier): string | undefined {
  if (typeof request.chatId === 'string' && request.chatId !== '') return request.chatId;
  const meta = request.metadata?.chat_id;
  if (typeof meta === 'string' && meta !== '') return meta;
  return undefined;
}
