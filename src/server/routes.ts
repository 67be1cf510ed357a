import { CHAT_COMPLETIONS, isFields, RESPONSES, type Endpoint, type Fields, type StreamSignal } from '../runtime/endpoints.js';
import type { ErrorShape } from './json-errors.js';

/**
 * What the proxy answers, by method and path. Three routes fold a history (each names the wire
 * format of its list, how its body counts against the window, and where its response reports the
 * billed input tokens), one is passed through, the rest are the proxy's own (probes, the caller's
 * chats, the chats page), and anything else is a 404 in the OpenAI error shape.
 */

/** A route that compresses the history its body carries before forwarding it. */
export interface FoldRoute {
  readonly kind: 'fold';
  readonly method: 'POST';
  readonly path: string;
  /** The label of this route in metrics and logs. */
  readonly name: string;
  /** The error body clients of this route expect. */
  readonly errors: ErrorShape;
  /** How the body and the response are read (history, extras, usage, failure). */
  readonly endpoint: Endpoint;
}

/** A route forwarded as it is (no body read, nothing folded). */
export interface PassRoute {
  readonly kind: 'pass';
  readonly method: 'GET';
  readonly path: string;
  readonly name: string;
  readonly errors: ErrorShape;
}

/**
 * A route the proxy answers itself: probes, the caller's chats (`chats`, and `chat` for every path
 * under `/v1/ctxfold/chats/`), and the chats page (`ui`, served with the `ui` option only).
 */
export interface OwnRoute {
  readonly kind: 'healthz' | 'metrics' | 'chats' | 'chat' | 'ui';
  readonly method: 'GET';
  readonly path: string;
  readonly name: string;
  readonly errors: ErrorShape;
  /** The route takes every path that starts with `path` (which then ends with `/`). */
  readonly prefix?: true;
}

/** Any route of the table. */
export type Route = FoldRoute | PassRoute | OwnRoute;

const positive = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined);

/** Anthropic's billed input: uncached input plus what was written to and read from its prompt cache (the view, whole). */
function anthropicInput(usage: unknown): number | undefined {
  if (!isFields(usage)) return undefined;
  const parts = [usage.input_tokens, usage.cache_creation_input_tokens, usage.cache_read_input_tokens];
  const total = parts.reduce<number>((n, v) => n + (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0), 0);
  return positive(total);
}

/**
 * `POST /messages` (Anthropic Messages): the history is `messages`, `system` sits outside it and
 * is counted, `max_tokens` is the reply's reserve. Usage is `usage.input_tokens` plus the cache
 * counts (streamed: in `message_start`, and in `message_delta` where the API repeats it); an
 * `error` event or body means failure.
 */
export const ANTHROPIC_MESSAGES: Endpoint = Object.freeze({
  path: '/messages',
  format: 'anthropic',
  listField: 'messages',
  history: (body: Fields) => (Array.isArray(body.messages) ? body.messages : undefined),
  extras: (body: Fields) => ({
    format: 'anthropic' as const,
    model: body.model,
    system: body.system ?? undefined,
    max_tokens: body.max_tokens,
    tools: body.tools,
  }),
  billed: (response: Fields) => anthropicInput(response.usage),
  failed: (response: Fields) => response.type === 'error',
  streamSignal: (event: Fields): StreamSignal => {
    if (event.type === 'error') return { failed: true };
    if (event.type === 'message_start' && isFields(event.message)) return { billedInputTokens: anthropicInput(event.message.usage) };
    if (event.type === 'message_delta') return { billedInputTokens: anthropicInput(event.usage) };
    return {};
  },
});

/** The routes, each once; `routeFor` looks them up by path. */
export const ROUTES: readonly Route[] = Object.freeze([
  { kind: 'fold', method: 'POST', path: '/v1/chat/completions', name: 'chat.completions', errors: 'openai', endpoint: CHAT_COMPLETIONS },
  { kind: 'fold', method: 'POST', path: '/v1/responses', name: 'responses', errors: 'openai', endpoint: RESPONSES },
  { kind: 'fold', method: 'POST', path: '/v1/messages', name: 'messages', errors: 'anthropic', endpoint: ANTHROPIC_MESSAGES },
  { kind: 'pass', method: 'GET', path: '/v1/models', name: 'models', errors: 'openai' },
  { kind: 'healthz', method: 'GET', path: '/healthz', name: 'healthz', errors: 'openai' },
  { kind: 'metrics', method: 'GET', path: '/metrics', name: 'metrics', errors: 'openai' },
  { kind: 'chats', method: 'GET', path: '/v1/ctxfold/chats', name: 'ctxfold.chats', errors: 'openai' },
  { kind: 'chat', method: 'GET', path: '/v1/ctxfold/chats/', name: 'ctxfold.chat', errors: 'openai', prefix: true },
  { kind: 'ui', method: 'GET', path: '/ui', name: 'ui', errors: 'openai' },
] satisfies Route[]);

/** The routes a proxy serves: every one, but `/ui` only with the `ui` option (otherwise a 404 like any unknown path). */
export function servedRoutes(options: { readonly ui?: boolean }): readonly Route[] {
  return options.ui === true ? ROUTES : ROUTES.filter((r) => r.kind !== 'ui');
}

/**
 * The route of `routes` at `path` (query string excluded), whatever the method: the one of that
 * exact path, else a prefix route `path` starts with; undefined for every other path.
 */
export function routeFor(path: string, routes: readonly Route[] = ROUTES): Route | undefined {
  return routes.find((r) => r.path === path) ?? routes.find((r) => r.kind !== 'fold' && r.kind !== 'pass' && r.prefix === true && path.startsWith(r.path));
}

/**
 * What one streamed item says: the endpoint's own reading, plus an `error` member in place of a
 * chunk (how OpenAI-compatible servers report a failure half way through a Chat stream).
 */
export function streamSignalOf(route: FoldRoute, item: Fields): StreamSignal {
  const signal = route.endpoint.streamSignal(item);
  return item.error !== undefined && item.error !== null ? { ...signal, failed: true } : signal;
}
