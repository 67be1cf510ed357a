/**
 * Message identity. A message's id is its own id where the format has one, otherwise a content
 * fingerprint plus its position. The hash itself is given by the caller (the runtime uses sha1),
 * so this module stays pure.
 */

import { InputError } from '../errors.js';
import { MAX_NESTING } from './nesting.js';

/** Hashes a text to a short, stable fingerprint (hex). */
export type TextHash = (text: string) => string;

/** Strings at least this long enter a canonical form as their own fingerprint, not their text. */
export const LONG_STRING_CHARS = 256;

/**
 * JSON with object keys sorted, so two messages with the same content in a different key order
 * fingerprint the same. Strings of `LONG_STRING_CHARS` or more are written as `#` + their
 * fingerprint (through `longString`, which a caller may back with a cache): the form stays a pure
 * function of the content, and its size depends on the structure, not on the text.
 */
export function canonicalJson(value: unknown, longString: TextHash, depth = 0): string {
  if (depth > MAX_NESTING) throw new InputError('', `a value is nested more than ${MAX_NESTING} levels deep; ctxfold does not read values this deep`);
  if (typeof value === 'string') return value.length >= LONG_STRING_CHARS ? `"#${longString(value)}"` : JSON.stringify(value);
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v, longString, depth + 1)).join(',')}]`;
  const keys = Object.keys(value as Record<string, unknown>).sort();
  const parts: string[] = [];
  for (const k of keys) {
    const v = (value as Record<string, unknown>)[k];
    if (v === undefined) continue;
    parts.push(`${JSON.stringify(k)}:${canonicalJson(v, longString, depth + 1)}`);
  }
  return `{${parts.join(',')}}`;
}

/** Fingerprint of a message's canonical content (position not included). */
export function fingerprintMessage(message: unknown, hash: TextHash, longString: TextHash = hash): string {
  return hash(canonicalJson(message, longString));
}

/**
 * A message id: the message's own id where its format has one, otherwise its content
 * fingerprint plus its position, so two equal messages at different places stay distinct.
 */
export function messageId(ownId: string | undefined, fingerprint: () => string, position: number): string {
  return ownId ?? `${position}:${fingerprint()}`;
}
