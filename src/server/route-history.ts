import type { Fields } from '../runtime/endpoints.js';
import { InputError } from '../errors.js';
import { describe } from '../formats/describe.js';
import type { FormatName } from '../formats/lens.js';
import { LENSES } from '../formats/registry.js';
import type { FoldRoute } from './routes.js';

/** What a route's body must hold where its format keeps the list. */
interface ListRule {
  /** The field may be left out (the body then carries no history to fold). */
  readonly optional: boolean;
  /** A string stands for one user turn (Responses `input`): nothing to fold, sent as it came. */
  readonly text: boolean;
  /** The value wanted, as the rule says it. */
  readonly wanted: string;
}

/** The APIs' own rules: Chat Completions and Messages require a list; Responses takes a list, a string, or nothing (a stored prompt). */
const RULES: Partial<Record<FormatName, ListRule>> = {
  openai: { optional: false, text: false, wanted: 'an array of messages' },
  anthropic: { optional: false, text: false, wanted: 'an array of messages' },
  'openai-responses': { optional: true, text: true, wanted: 'a string or an array of input items' },
};

/** The body field holding a route's list: where the route's format lens keeps it, as the library reads a request. */
export function listFieldOf(route: FoldRoute): string {
  return LENSES[route.endpoint.format]?.request.messagesField ?? route.endpoint.listField;
}

/**
 * The history `body` carries for `route`, read from the field where the route's format lens keeps
 * its list: the list to fold, or undefined when the body carries none (a Responses string input,
 * a call continuing `previous_response_id`), which goes out as it came. A value the route's API
 * does not take there (`messages` an object, a string, null or missing; `input` a number) is an
 * `InputError` naming the field and the rule: the body is never forwarded with it.
 */
export function routeHistory(route: FoldRoute, body: Fields): readonly unknown[] | undefined {
  const field = listFieldOf(route);
  const rule = RULES[route.endpoint.format] ?? { optional: false, text: false, wanted: 'an array of messages' };
  const value = body[field];
  if (value === undefined && !rule.optional) throw new InputError(field, `is required: ${rule.wanted}`);
  if (value !== undefined && !Array.isArray(value) && !(rule.text && typeof value === 'string')) {
    throw new InputError(field, `must be ${rule.wanted}, got ${describe(value)}`);
  }
  return route.endpoint.history(body);
}

/**
 * `path` of an `InputError` from the compressor as a path into the route's body: the compressor
 * names a history `messages` (its own argument), which on Responses is the body's `input`.
 * Undefined for a path outside the list (`request.max_tokens`: the compressor's name for a field).
 */
export function bodyPath(route: FoldRoute, path: string): string | undefined {
  const field = listFieldOf(route);
  if (path === field || path.startsWith(`${field}[`)) return path;
  if (path === 'messages' || path.startsWith('messages[')) return `${field}${path.slice('messages'.length)}`;
  return undefined;
}
