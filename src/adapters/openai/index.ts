/**
 * `ctxfold/openai`: wraps an `openai` client so that `chat.completions.create` and
 * `responses.create` (streamed or not, and the SDK helpers built on them) send the compressor's
 * view of the history instead of the whole of it, and tell the compressor after each response.
 * The `openai` package is only a type here: nothing is loaded from it, the client is yours.
 */
import type { OpenAI } from 'openai';
import { InputError } from '../../errors.js';
import { describe } from '../../formats/describe.js';
import type { Compressor } from '../../runtime/compressor.js';
import { derivedClient } from './derived-client.js';
import { foldingPost, type Folding } from './folding-post.js';
import { resolveAdapterOptions, type OpenAIAdapterOptions } from './options.js';

export type { OpenAIAdapterOptions, OpenAIRequestBody } from './options.js';

/** The compressor of every client `withCtxfold` returned (weakly held: a dropped client frees its entry). */
const COMPRESSORS = new WeakMap<object, Compressor>();

/** True for an object shaped like the `openai` package's client (what the wrapper uses of it). */
function isOpenAIClient(value: unknown): value is OpenAI {
  const c = value as { post?: unknown; withOptions?: unknown; chat?: { completions?: { create?: unknown } }; responses?: { create?: unknown } } | null;
  return typeof c === 'object' && c !== null && typeof c.post === 'function' && typeof c.withOptions === 'function'
    && typeof c.chat?.completions?.create === 'function' && typeof c.responses?.create === 'function';
}

/** Wraps `client` with an already resolved compressor and chat id reader (also for `withOptions`). */
function wrap<C extends OpenAI>(client: C, folding: Omit<Folding, 'onFingerprint'>): C {
  let warned = false;
  const onFingerprint = () => {
    if (warned) return;
    warned = true;
    // Once per wrapped client: a fingerprint of the opening can be shared by two users who open alike.
    process.emitWarning('ctxfold/openai: a request came without a chat id; its summary is keyed by a fingerprint of the conversation opening. Pass metadata.chat_id (or options.chatId(body)) so two users never share a summary.', { code: 'CTXFOLD_NO_CHAT_ID' });
  };
  const wrapped: C = derivedClient(client, {
    post: foldingPost(client, { ...folding, onFingerprint }),
    withOptions: ((options: Parameters<C['withOptions']>[0]) => wrap(client.withOptions(options), folding)) as C['withOptions'],
  });
  COMPRESSORS.set(wrapped, folding.compressor);
  return wrapped;
}

/**
 * Returns a client of the same class as `client` whose `chat.completions.create` sends the
 * compressed view of `messages` (format `openai`) and whose `responses.create` sends that of
 * `input` (format `openai-responses`), with `instructions`, `tools`, the reply's token limit and
 * the response format counted; other fields and calls go out as given. Each call returns exactly
 * what the SDK returns (its `APIPromise`; for `stream: true` its `Stream`). After the response
 * (for a stream: once it has ended) `compressor.afterResponse` is called with the full history and
 * the billed input tokens, which calibrates and schedules the chat's background summary. A failed
 * call reports nothing. `client` and the caller's bodies and messages are never changed.
 *
 * Options: `maxContextTokens` (or a `model` whose window is known) and every other
 * `createCompressor` option, or `compressor` to share one; `chatId(body)` names the chat
 * (default: `metadata.chat_id`, else `user`, else a fingerprint of the opening).
 *
 * With `recall` on, `chat.completions.create` and `responses.create` with an `input` list,
 * streamed or not, also carry the `ctxfold_recall` tool, and the wrapper answers the model's
 * recall calls itself and asks it again (at most `recall.rounds` times), so the caller gets the
 * final response (or one stream) only; a response mixing recall and the caller's calls comes back
 * without the recall calls. Chat calls with legacy `functions`, and Responses calls with
 * `previous_response_id` or a string `input`, carry no recall tool (see docs/recall.md).
 */
export function withCtxfold<C extends OpenAI>(client: C, options: OpenAIAdapterOptions): C {
  if (!isOpenAIClient(client)) {
    throw new InputError('client', `must be a client of the openai package (new OpenAI() from 'openai'; install it with npm i openai), got ${describe(client)}`);
  }
  if (COMPRESSORS.has(client)) throw new InputError('client', 'is already wrapped by withCtxfold: wrap the original client once');
  const { compressor, chatId } = resolveAdapterOptions(options);
  return wrap(client, { compressor, chatId });
}

/**
 * The compressor behind a client `withCtxfold` returned (to `drain()`, `close()`, read `stats()`
 * or listen with `on()`); undefined for any other value.
 */
export function compressorOf(client: unknown): Compressor | undefined {
  return typeof client === 'object' && client !== null ? COMPRESSORS.get(client) : undefined;
}

/** `withCtxfold.compressorOf(client)`: the same as `compressorOf`. */
withCtxfold.compressorOf = compressorOf;
