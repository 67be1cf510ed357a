import { InputError } from '../errors.js';
import { describe } from '../formats/describe.js';
import type { FormatName } from '../formats/lens.js';
import type { RecallDialect } from './dialect.js';
import { recallDialect, type RecallDialectName } from './dialects.js';

/**
 * How `wrap` reads its handler's response for `ctxfold_recall` calls: a format name, when the
 * handler returns the API's response as it is (`'openai'`: a Chat Completions response;
 * `'openai-responses'`: a Responses response; `'anthropic'`: a Messages response), or `{ format, read }`, where `read` returns that
 * shape from whatever the handler returns (e.g. `(r) => r.data`).
 */
export type ReadResponse<Res> = RecallDialectName | { readonly format: RecallDialectName; read(response: Res): unknown };

/** A checked `readResponse`. Invariant: `asIs` is true exactly when `read` is the identity (the response itself is in the dialect's shape). */
export interface ResponseReader<Res> {
  readonly dialect: RecallDialect;
  readonly read: (response: Res) => unknown;
  readonly asIs: boolean;
}

const FORMS = "'openai', 'openai-responses', 'anthropic' or { format: 'openai' | 'openai-responses' | 'anthropic', read(response) }";

/**
 * Checks `wrap`'s `readResponse` against the compressor's format: an `InputError` naming
 * `options.readResponse` for any other value, or for a dialect whose history format differs from
 * the compressor's fixed `format` (its turns could not be written into that history).
 */
export function responseReader<Res>(given: unknown, format: FormatName | 'auto'): ResponseReader<Res> {
  const custom = typeof given === 'object' && given !== null ? (given as { format?: unknown; read?: unknown }) : undefined;
  const dialect = recallDialect(custom ? custom.format : given);
  if (!dialect || (custom && typeof custom.read !== 'function')) throw new InputError('options.readResponse', `must be ${FORMS}, got ${describe(given)}`);
  if (format !== 'auto' && format !== dialect.format) {
    throw new InputError('options.readResponse', `reads ${dialect.format} responses, but the compressor's format is ${JSON.stringify(format)}: the recall rounds are written into the history in the response's format`);
  }
  if (!custom) return { dialect, read: (response) => response, asIs: true };
  const read = custom.read as (response: Res) => unknown;
  return { dialect, read: (response) => read(response), asIs: false };
}
