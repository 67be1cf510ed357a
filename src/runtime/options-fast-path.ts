import { SUPPORTED_FORMATS } from '../formats/registry.js';
import type { CompressOptions } from './options.js';

/**
 * The `compressContext` options a caller passes on every request (budget, keeps and whether the tail yields, counter, cache,
 * chat id, format, model, repair, summary role, low-water mark), checked by hand. The schema in
 * `options.ts` stays the only definition of what is valid and the only source of error messages:
 * this check never refuses anything, it accepts or defers. It accepts only values that schema
 * accepts, and returns what it would (a copy with the same keys and values; a property test holds
 * it to that), so the per-request cost of a schema parse is paid only by unusual options.
 */
const FORMATS: ReadonlySet<unknown> = new Set([...SUPPORTED_FORMATS, 'auto']);

const safeInt = (v: unknown, min: number) => typeof v === 'number' && Number.isSafeInteger(v) && v >= min;
const withMethods = (v: unknown, a: string, b: string) =>
  typeof v === 'object' && v !== null && typeof (v as Record<string, unknown>)[a] === 'function' && typeof (v as Record<string, unknown>)[b] === 'function';

/** Each key the fast path reads, with the schema's rule for it (undefined always passes: every one is optional). */
const RULES: Readonly<Record<string, (v: unknown) => boolean>> = {
  maxContextTokens: (v) => safeInt(v, 1),
  compressionThresholdTokens: (v) => safeInt(v, 1),
  keepFirst: (v) => safeInt(v, 0),
  keepLast: (v) => safeInt(v, 0),
  keepLastYields: (v) => typeof v === 'boolean',
  reserveOutputTokens: (v) => safeInt(v, 0),
  lowWaterMark: (v) => typeof v === 'number' && v > 0 && v <= 1,
  summaryRole: (v) => v === 'user' || v === 'system',
  format: (v) => FORMATS.has(v),
  model: (v) => typeof v === 'string',
  repair: (v) => typeof v === 'boolean',
  chatId: (v) => typeof v === 'string' && v.length > 0,
  counter: (v) => withMethods(v, 'text', 'message'),
  historyCache: (v) => withMethods(v, 'recall', 'remember'),
};

/**
 * A copy of `options` when it is a plain object whose every key is one of the common options above
 * with a valid value (or undefined); undefined otherwise, and the caller then parses it with the
 * schema (which says what is wrong, if anything is).
 */
export function commonCompressOptions(options: unknown): CompressOptions | undefined {
  if (typeof options !== 'object' || options === null || Object.getPrototypeOf(options) !== Object.prototype) return undefined;
  const out: Record<string, unknown> = {};
  for (const key in options) {
    if (!Object.hasOwn(RULES, key)) return undefined;
    const value = (options as Record<string, unknown>)[key];
    if (value !== undefined && !RULES[key](value)) return undefined;
    out[key] = value;
  }
  return out as CompressOptions;
}
