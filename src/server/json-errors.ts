import type { ServerResponse } from 'node:http';

/** Whose error body a client expects: OpenAI's (Chat, Responses, models) or Anthropic's (Messages). */
export type ErrorShape = 'openai' | 'anthropic';

/** An error the proxy answers itself, with a stable machine-readable `code`. */
export interface ProxyError {
  readonly status: number;
  /** One line naming what was wrong and, where the caller can fix it, the field and the rule. */
  readonly message: string;
  /** `ctxfold_*` codes: not_found, method_not_allowed, body_too_large, invalid_json, invalid_input, upstream_timeout, upstream_unreachable, shutting_down, unauthorized, store_unavailable. */
  readonly code: string;
  /** The body field at fault, where there is one (`messages`, `input[3]`): OpenAI's `param`. */
  readonly param?: string;
}

/** OpenAI's `error.type` for a status: the API answers every client error, 401 and 404 included, as `invalid_request_error`. */
const openaiType = (status: number): string => (status < 500 ? 'invalid_request_error' : 'server_error');

/** Anthropic's `error.type` for a status (as its API documents them). */
function anthropicType(status: number): string {
  switch (status) {
    case 401: return 'authentication_error';
    case 403: return 'permission_error';
    case 404: return 'not_found_error';
    case 413: return 'request_too_large';
    case 429: return 'rate_limit_error';
    case 503: return 'overloaded_error';
    case 504: return 'timeout_error';
    default: return status < 500 ? 'invalid_request_error' : 'api_error';
  }
}

/**
 * The error body in the shape the client's SDK parses: OpenAI
 * `{"error":{"message","type","param","code"}}` (`param` null unless a field is named), Anthropic
 * `{"type":"error","error":{"type","message"}}`. Pure.
 */
export function errorBody(shape: ErrorShape, error: ProxyError): string {
  if (shape === 'anthropic') return JSON.stringify({ type: 'error', error: { type: anthropicType(error.status), message: error.message } });
  return JSON.stringify({ error: { message: error.message, type: openaiType(error.status), param: error.param ?? null, code: error.code } });
}

/**
 * Answers `error` in `shape`, unless a response was already started (then the connection is
 * ended: a half-sent body cannot turn into an error). `headers` are added (e.g. `allow`).
 */
export function sendError(res: ServerResponse, shape: ErrorShape, error: ProxyError, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = errorBody(shape, error);
  res.writeHead(error.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}
