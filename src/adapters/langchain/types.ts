import type { BaseMessage } from '@langchain/core/messages';
import type { AgentMiddleware, Runtime } from 'langchain';
import type { Compressor, CompressorOptions } from '../../runtime/compressor.js';

/**
 * Types of the adapter, read from the installed `langchain` and `@langchain/core` (types only).
 */

/** The agent state a chat-id function is shown: the messages as the agent holds them, and any other state keys. */
export type AgentStateView = { readonly messages: readonly BaseMessage[] } & Readonly<Record<string, unknown>>;

/** Reads the chat a model call belongs to from the agent's state and runtime; undefined falls back to the default. */
export type ChatIdFunction = (state: AgentStateView, runtime: Runtime<unknown>) => string | undefined;

/**
 * Options of `ctxfoldMiddleware`: every `createCompressor` option (`format` is always `openai`:
 * the compressor reads LangChain messages as OpenAI Chat messages), or an existing `compressor`
 * to share instead, plus how to read a call's chat id.
 */
export interface CtxfoldMiddlewareOptions extends Omit<CompressorOptions, 'chatId' | 'format'> {
  /** Only `'openai'` is accepted (the reading the adapter hands the compressor). */
  format?: 'openai';
  /** An existing compressor to use (and share); then no other compressor option may be given. It must read format `openai` (or `auto`). */
  compressor?: Compressor;
  /** The chat a call belongs to. Default: the run's `configurable.thread_id`, else a fingerprint of the conversation opening (with a warning). */
  chatId?: ChatIdFunction;
}

/** The middleware `ctxfoldMiddleware` returns: a LangChain agent middleware that also exposes its compressor. */
export type CtxfoldMiddleware = AgentMiddleware & {
  /** The compressor behind the middleware: `drain()`, `close()`, `stats()`, `on(event)`. */
  readonly compressor: Compressor;
};
