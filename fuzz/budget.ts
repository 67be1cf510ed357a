import type { FormatName, MessageLens } from '../src/formats/lens.js';
import { LENSES } from '../src/formats/registry.js';
import type { TokenCounter } from '../src/tokens/counter.js';

/**
 * The tokens a request costs, recounted from scratch, for the budget check: what ctxfold counts
 * (src/tokens: per message its overhead, text, calls and results by the format's billing, images
 * by the provider's rule; once per request its overhead), the way the tests recount a view, plus
 * what the request carries beside its list, counted here by the rule the options document: each
 * tool definition as its JSON text and 8 tokens, the response format as its JSON text, instructions
 * as a message of their text. This is the one place the fuzz run reads messages through a lens:
 * a token is what ctxfold's counter says it is. Validity is judged by the checkers alone.
 */

/** What a request carries beside its message list. */
export interface RequestExtras {
  readonly tools?: readonly unknown[];
  readonly responseFormat?: unknown;
  readonly instructions?: unknown;
}

/** Tokens a tool definition costs beyond its JSON text. */
const TOOL_FRAMING_TOKENS = 8;
/** A message's overhead and its role token, for instructions sent as one. */
const INSTRUCTIONS_FRAMING_TOKENS = 4;

/** The text leaves of instructions given as blocks (`[{ type: 'text', text }]`, `{ parts: [{ text }] }`), in order. */
function texts(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) texts(v, out);
  else if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.text === 'string') out.push(o.text);
    else for (const v of Object.values(o)) if (typeof v === 'object') texts(v, out);
  }
  return out;
}

/** Tokens of the request's tools, response format and instructions. */
export function extrasTokens(extras: RequestExtras, counter: TokenCounter): number {
  let n = 0;
  for (const tool of extras.tools ?? []) n += counter.text(JSON.stringify(tool) ?? '') + TOOL_FRAMING_TOKENS;
  if (extras.responseFormat !== undefined) n += counter.text(JSON.stringify(extras.responseFormat) ?? '');
  const { instructions } = extras;
  if (typeof instructions === 'string') n += counter.text(instructions) + INSTRUCTIONS_FRAMING_TOKENS;
  else if (instructions !== undefined && instructions !== null) n += counter.text(texts(instructions).join('\n')) + INSTRUCTIONS_FRAMING_TOKENS;
  return n;
}

/** Tokens of a request sending `list` in `format` with `extras`, as ctxfold's counter counts them. */
export function requestTokens(format: FormatName, list: readonly unknown[], extras: RequestExtras, counter: TokenCounter): number {
  const lens = LENSES[format] as MessageLens<unknown>;
  let n = counter.requestOverhead + extrasTokens(extras, counter);
  for (const m of list) n += counter.message(m, lens);
  return n;
}
