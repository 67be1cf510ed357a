import { stateFields, type ChatState } from './state.js';

/** The JSON a `RedisStore` keeps in a chat's hash (`state` field): exactly the fields of `ChatState`. */
export function encodeState(state: ChatState): string {
  return JSON.stringify(stateFields(state));
}

/**
 * Reads a chat's hash fields back into a deep-frozen `ChatState`, or returns the rule the stored
 * value breaks (a string): the `version` field is a whole number >= 1, `state` is JSON of a
 * `ChatState` of that version and of `chatId`, every field with its declared type. Never throws.
 */
export function decodeState(chatId: string, version: string, json: string): ChatState | string {
  const v = Number(version);
  if (!/^[1-9][0-9]*$/.test(version) || !Number.isSafeInteger(v)) return `field version must be a whole number >= 1, found ${quote(version)}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    return `field state is not valid JSON (${(error as Error).message})`;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return `field state must be a JSON object, found ${quote(json)}`;
  const s = parsed as Record<string, unknown>;
  if (s.chatId !== chatId) return `field state.chatId must be ${JSON.stringify(chatId)}, found ${shown(s.chatId)}`;
  if (s.version !== v) return `field state.version must equal field version (${v}), found ${shown(s.version)}`;
  for (const field of ['summary', 'summarizer', 'createdAt', 'updatedAt'] as const) {
    if (typeof s[field] !== 'string') return `field state.${field} must be a string, found ${typeOf(s[field])}`;
  }
  if (s.model !== undefined && typeof s.model !== 'string') return `field state.model must be a string when present, found ${typeOf(s.model)}`;
  for (const field of ['tokensBefore', 'tokensAfter'] as const) {
    const n = s[field];
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) return `field state.${field} must be a whole number >= 0, found ${shown(n)}`;
  }
  const ids = s.coveredIds;
  if (!Array.isArray(ids) || ids.some((id) => typeof id !== 'string')) return 'field state.coveredIds must be an array of strings';
  return Object.freeze({
    chatId,
    version: v,
    summary: s.summary as string,
    coveredIds: Object.freeze([...(ids as string[])]),
    summarizer: s.summarizer as string,
    ...(s.model !== undefined ? { model: s.model as string } : {}),
    tokensBefore: s.tokensBefore as number,
    tokensAfter: s.tokensAfter as number,
    createdAt: s.createdAt as string,
    updatedAt: s.updatedAt as string,
  });
}

function typeOf(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  return Array.isArray(value) ? 'an array' : typeof value;
}

/** A value read from JSON, for an error message: as JSON, at most 80 characters. */
function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 80)}...` : text;
}

/** A stored text for an error message: quoted, at most 80 characters. */
function quote(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}...` : text);
}
