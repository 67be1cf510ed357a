import { InputError } from '../errors.js';
import { MAX_NESTING, nestedDeeperThan } from './nesting.js';

/** What a request sends besides its messages that the prompt is billed for. */
export interface RequestParts {
  readonly tools?: readonly unknown[];
  readonly responseFormat?: unknown;
  /** Instructions outside the message list (a string, or blocks with `text` leaves). */
  readonly instructions?: unknown;
}

/** Tokens added per tool definition beyond its JSON text (its framing in the prompt); an estimate that errs high. */
const TOOL_OVERHEAD_TOKENS = 8;

/** The `text` strings of a block structure (Anthropic system blocks, Gemini `{ parts: [{ text }] }`), in order. */
function textLeaves(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) textLeaves(v, out);
  else if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.text === 'string') out.push(o.text);
    else for (const v of Object.values(o)) if (typeof v === 'object') textLeaves(v, out);
  }
  return out;
}

/**
 * Tokens the request's tool definitions, response format and outside instructions add to the
 * prompt. Providers do not publish the exact rendering; counting each definition's JSON text plus
 * a few tokens errs high, which is the safe side for a budget. Instructions are billed as a system
 * message of their text (`messageOverhead` + 1 on top). A value nested too deep is an InputError.
 */
export function requestExtraTokens(parts: RequestParts, countText: (text: string) => number, messageOverhead: number): number {
  let n = 0;
  const json = (value: unknown, path: string) => {
    if (nestedDeeperThan(value)) throw new InputError(path, `is nested more than ${MAX_NESTING} levels deep; ctxfold does not read values this deep`);
    return JSON.stringify(value) ?? '';
  };
  parts.tools?.forEach((tool, i) => { n += countText(json(tool, `options.tools[${i}]`)) + TOOL_OVERHEAD_TOKENS; });
  if (parts.responseFormat !== undefined) n += countText(json(parts.responseFormat, 'options.responseFormat'));
  const instructions = parts.instructions;
  if (typeof instructions === 'string') n += countText(instructions) + messageOverhead + 1;
  else if (instructions !== undefined && instructions !== null) {
    json(instructions, 'options.instructions');
    n += countText(textLeaves(instructions).join('\n')) + messageOverhead + 1;
  }
  return n;
}
