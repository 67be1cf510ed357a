import { InputError } from '../../errors.js';
import { describe } from '../../formats/describe.js';
import { defaultChatId } from '../../runtime/chat-id.js';

/** A request body as the chat id is read from it. */
type Body = Readonly<Record<string, unknown>>;

/** Any function of a body (the `chatId` option of `withCtxfold`, whatever body type it declares). */
export type ChatIdOf = (body: never) => unknown;

const named = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * The chat a request belongs to: the `chatId` option's answer, else `metadata.chat_id`, else
 * `user`, else a fingerprint of the history's opening (the core's `defaultChatId`). `fingerprinted`
 * is true in the last case, so the caller can warn: two users who open alike share that id
 * until the model has answered them differently.
 */
export function chatIdOfBody(body: Body, history: readonly unknown[], chosen: ChatIdOf | undefined): { readonly chatId: string; readonly fingerprinted: boolean } {
  const own = chosen?.(body as never);
  if (own !== undefined && named(own) === undefined) {
    throw new InputError('options.chatId', `must return a non-empty string or undefined, got ${describe(own)}`);
  }
  if (typeof own === 'string') return { chatId: own, fingerprinted: false };
  const metadata = body.metadata;
  const given = named(typeof metadata === 'object' && metadata !== null ? (metadata as Body).chat_id : undefined) ?? named(body.user);
  if (given !== undefined) return { chatId: given, fingerprinted: false };
  return { chatId: defaultChatId({ messages: history }), fingerprinted: true };
}
