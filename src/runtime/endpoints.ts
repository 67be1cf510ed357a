import type { FormatName } from '../formats/lens.js';
import type { RequestExtras } from './compressor.js';

/** A request body or response as read here: only named fields are looked at, the rest is passed on untouched. */
export type Fields = Readonly<Record<string, unknown>>;

/** What one stream item says about the model's answer. */
export interface StreamSignal {
  /** The input tokens the provider billed, when the item carries usage. */
  readonly billedInputTokens?: number;
  /** True when the item says the model failed (no summary is scheduled for such a call). */
  readonly failed?: boolean;
}

/**
 * One OpenAI API endpoint that `ctxfold/openai` and the proxy fold, in the terms `compress` / `afterResponse` take: where the
 * history is in the body, which of the body's fields change what fits, and where the response
 * reports the input tokens billed. It reads shapes only; every decision is the compressor's.
 */
export interface Endpoint {
  /** The path the client posts to (after `baseURL`). */
  readonly path: string;
  /** The wire format of the history. */
  readonly format: FormatName;
  /** The body field that carries the history. */
  readonly listField: 'messages' | 'input';
  /** The history the body carries, or undefined when it carries none ctxfold can fold (the body is then sent as is). */
  history(body: Fields): readonly unknown[] | undefined;
  /** The body's fields that count against the window (instructions, tools, the reply's reserve, a schema). */
  extras(body: Fields): RequestExtras & { readonly format: FormatName };
  /** The input tokens a (non-streamed) response reports as billed. */
  billed(response: Fields): number | undefined;
  /** True when a (non-streamed) response says the model failed. */
  failed(response: Fields): boolean;
  /** What one streamed item says: usage, or a failure. */
  streamSignal(item: Fields): StreamSignal;
}

/** True for a plain object (a body, a response, a stream item): what the readers here look into. */
export const isFields = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);
const positive = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined);
const usageOf = (v: unknown): Fields => (isFields(v) && isFields(v.usage) ? v.usage : {});

/** `POST /chat/completions`: the history is `messages`; usage is `prompt_tokens` (in the last chunk with `stream_options.include_usage`). */
export const CHAT_COMPLETIONS: Endpoint = Object.freeze({
  path: '/chat/completions',
  format: 'openai',
  listField: 'messages',
  history: (body: Fields) => (Array.isArray(body.messages) ? body.messages : undefined),
  extras: (body: Fields) => ({
    format: 'openai' as const,
    model: body.model,
    max_tokens: body.max_tokens,
    max_completion_tokens: body.max_completion_tokens,
    // Legacy `functions` are billed like tools.
    tools: body.tools ?? body.functions,
    response_format: body.response_format,
  }),
  billed: (response: Fields) => positive(usageOf(response).prompt_tokens),
  failed: () => false,
  streamSignal: (chunk: Fields) => ({ billedInputTokens: positive(usageOf(chunk).prompt_tokens) }),
});

/**
 * `POST /responses`: the history is `input` when it is a list. A string input, or a request that
 * continues a history the server keeps (`previous_response_id`, `conversation`), carries no
 * history here to fold and is sent as is. Usage is `input_tokens` (streamed: in the final
 * `response.completed` / `response.incomplete` event); `response.failed` and `error` mean failure.
 */
export const RESPONSES: Endpoint = Object.freeze({
  path: '/responses',
  format: 'openai-responses',
  listField: 'input',
  history: (body: Fields) => (Array.isArray(body.input) && body.previous_response_id == null && body.conversation == null ? body.input : undefined),
  extras: (body: Fields) => ({
    format: 'openai-responses' as const,
    model: body.model,
    instructions: body.instructions ?? undefined,
    max_output_tokens: body.max_output_tokens,
    tools: body.tools,
    // Structured output sits in `text.format` here (Chat's `response_format`).
    response_format: isFields(body.text) ? body.text.format : undefined,
  }),
  billed: (response: Fields) => positive(usageOf(response).input_tokens),
  failed: (response: Fields) => response.status === 'failed',
  streamSignal: (event: Fields) => {
    if (event.type === 'response.failed' || event.type === 'error') return { failed: true };
    if (event.type === 'response.completed' || event.type === 'response.incomplete') return { billedInputTokens: positive(usageOf(event.response).input_tokens) };
    return {};
  },
});

/** The endpoint a client posts to at `path`, or undefined for every other path (those calls pass through). */
export function endpointAt(path: unknown): Endpoint | undefined {
  if (path === CHAT_COMPLETIONS.path) return CHAT_COMPLETIONS;
  if (path === RESPONSES.path) return RESPONSES;
  return undefined;
}
