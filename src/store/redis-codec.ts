import type { OriginalRecord } from './originals.js';
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
  const compact = s.compactTokens;
  if (compact !== undefined && (typeof compact !== 'number' || !Number.isSafeInteger(compact) || compact < 1)) return `field state.compactTokens must be a whole number >= 1 when present, found ${shown(compact)}`;
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
    ...(compact !== undefined ? { compactTokens: compact as number } : {}),
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

const ROLES = new Set(['system', 'user', 'assistant', 'tool', 'other']);

/** The JSON a `RedisStore` keeps for one original (a field of the chat's `originals` hash, keyed by message id). */
export function encodeOriginal(record: OriginalRecord): string {
  return JSON.stringify({ id: record.id, index: record.index, role: record.role, text: record.text, raw: record.raw });
}

/**
 * Reads one stored original back (frozen), or returns the rule it breaks (a string): JSON of an
 * object whose `id` is the field it is stored under, `index` a whole number >= 0, `role` one of
 * the transcript roles, `text` and `raw` strings. Never throws.
 */
export function decodeOriginal(field: string, json: string): OriginalRecord | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    return `original ${JSON.stringify(field)} is not valid JSON (${(error as Error).message})`;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return `original ${JSON.stringify(field)} must be a JSON object, found ${quote(json)}`;
  const r = parsed as Record<string, unknown>;
  if (r.id !== field) return `original ${JSON.stringify(field)}: id must be the field's name, found ${shown(r.id)}`;
  if (typeof r.index !== 'number' || !Number.isSafeInteger(r.index) || r.index < 0) return `original ${JSON.stringify(field)}: index must be a whole number >= 0, found ${shown(r.index)}`;
  if (typeof r.role !== 'string' || !ROLES.has(r.role)) return `original ${JSON.stringify(field)}: role must be one of ${[...ROLES].join(', ')}, found ${shown(r.role)}`;
  for (const key of ['text', 'raw'] as const) {
    if (typeof r[key] !== 'string') return `original ${JSON.stringify(field)}: ${key} must be a string, found ${typeOf(r[key])}`;
  }
  return Object.freeze({ id: field, index: r.index, role: r.role as OriginalRecord['role'], text: r.text as string, raw: r.raw as string });
}
