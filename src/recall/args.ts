import { describe } from '../formats/describe.js';

/** Arguments of a recall call, checked. Invariant: at least one of `ids` (non-empty) and `query` is set. */
export interface RecallArgs {
  /** Message numbers (`#12`, `12`) or message ids, as asked, deduplicated, in order. */
  readonly ids: readonly string[];
  readonly query?: string;
}

/** Most ids one call may ask for. */
export const MAX_RECALL_IDS = 50;
/** Longest query, in characters. */
export const MAX_QUERY_CHARS = 1000;
const MAX_ID_CHARS = 200;

const RULE = 'arguments must be a JSON object { "ids"?: string[], "query"?: string }';

/**
 * Checks a recall call's arguments: an object, or its JSON text (as OpenAI sends `arguments`).
 * Lenient where the meaning is plain (a lone string for `ids`, whole numbers as message numbers);
 * everything else gives an error text naming the field and the rule. Never throws.
 */
export function parseRecallArgs(input: unknown): { readonly args: RecallArgs } | { readonly error: string } {
  let value = input;
  if (typeof value === 'string') {
    if (value.trim() === '') return { error: `${RULE}, got an empty text; pass ids or query` };
    try {
      value = JSON.parse(value);
    } catch {
      return { error: `${RULE}, got text that is not JSON` };
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { error: `${RULE}, got ${describe(value)}` };
  const fields = value as Record<string, unknown>;
  const unknown = Object.keys(fields).find((k) => k !== 'ids' && k !== 'query');
  if (unknown !== undefined) return { error: `unknown field ${JSON.stringify(unknown.slice(0, 40))}: the fields are "ids" (an array of message numbers like "#12") and "query" (a string)` };

  let rawIds = fields.ids;
  if (typeof rawIds === 'string' || typeof rawIds === 'number') rawIds = [rawIds];
  const ids: string[] = [];
  if (rawIds !== undefined && rawIds !== null) {
    if (!Array.isArray(rawIds)) return { error: `ids: must be an array of message numbers like ["#12"], got ${describe(rawIds)}` };
    if (rawIds.length > MAX_RECALL_IDS) return { error: `ids: at most ${MAX_RECALL_IDS} per call, got ${rawIds.length}; ask for fewer` };
    for (let i = 0; i < rawIds.length; i++) {
      const id = rawIds[i];
      const text = typeof id === 'number' && Number.isSafeInteger(id) && id > 0 ? `#${id}` : id;
      if (typeof text !== 'string' || text.trim() === '' || text.length > MAX_ID_CHARS) {
        return { error: `ids[${i}]: must be a message number like "#12" (or a message id of at most ${MAX_ID_CHARS} characters), got ${describe(id)}` };
      }
      const trimmed = text.trim();
      if (!ids.includes(trimmed)) ids.push(trimmed);
    }
  }
  const query = fields.query;
  if (query !== undefined && query !== null && typeof query !== 'string') return { error: `query: must be a string of words to search for, got ${describe(query)}` };
  if (typeof query === 'string' && query.length > MAX_QUERY_CHARS) return { error: `query: must be at most ${MAX_QUERY_CHARS} characters, got ${query.length}` };
  const q = typeof query === 'string' && query.trim() !== '' ? query.trim() : undefined;
  if (ids.length === 0 && q === undefined) return { error: 'pass "ids" (message numbers like ["#12"]) or "query" (words to search for), or both; both were empty or missing' };
  return { args: q === undefined ? { ids } : { ids, query: q } };
}
