/**
 * Context windows of well-known models, so an adapter can default `maxContextTokens` from the
 * model it wraps. A small table on purpose: each entry is a figure its provider publishes for the
 * model's standard window, with the page it comes from and the day it was checked. A model not in
 * the table gets `undefined` (never a guess): the caller must then ask for `maxContextTokens`.
 * Where a provider offers a larger window only behind an opt-in (a beta header, a long-context
 * tier), the table keeps the standard one: a budget that is too small is safe, one too large is not.
 */

/** One known model: its window in tokens (input and output together), where that figure is published, and when it was checked. */
export interface ContextWindowEntry {
  readonly tokens: number;
  readonly source: string;
  /** ISO date the figure was checked against `source`. */
  readonly checked: string;
}

const CHECKED = '2026-11-22';
const openai = (id: string) => `https://platform.openai.com/docs/models/${id}`;
const ANTHROPIC = 'https://docs.anthropic.com/en/docs/about-claude/models/overview (and /en/docs/build-with-claude/context-windows)';
const gemini = (id: string) => `https://ai.google.dev/gemini-api/docs/models/${id}`;

const entry = (tokens: number, source: string): ContextWindowEntry => Object.freeze({ tokens, source, checked: CHECKED });

/**
 * The table, keyed by the model id without provider prefix, date or version suffix (see
 * `normalizeModelId`). Frozen: it is shared by every adapter.
 */
export const CONTEXT_WINDOWS: Readonly<Record<string, ContextWindowEntry>> = Object.freeze({
  // OpenAI: the "Context window" figure of each model page.
  'gpt-4': entry(8_192, openai('gpt-4')),
  'gpt-4-turbo': entry(128_000, openai('gpt-4-turbo')),
  'gpt-4o': entry(128_000, openai('gpt-4o')),
  'gpt-4o-mini': entry(128_000, openai('gpt-4o-mini')),
  'gpt-4.1': entry(1_047_576, openai('gpt-4.1')),
  'gpt-4.1-mini': entry(1_047_576, openai('gpt-4.1-mini')),
  'gpt-4.1-nano': entry(1_047_576, openai('gpt-4.1-nano')),
  o1: entry(200_000, openai('o1')),
  o3: entry(200_000, openai('o3')),
  'o3-mini': entry(200_000, openai('o3-mini')),
  'o4-mini': entry(200_000, openai('o4-mini')),
  'gpt-5': entry(400_000, openai('gpt-5')),
  'gpt-5-mini': entry(400_000, openai('gpt-5-mini')),
  'gpt-5-nano': entry(400_000, openai('gpt-5-nano')),
  'gpt-5-chat': entry(128_000, openai('gpt-5-chat-latest')),
  // Anthropic: 200k is the standard window of every model listed (1M is an opt-in for some).
  'claude-3-haiku': entry(200_000, ANTHROPIC),
  'claude-3-opus': entry(200_000, ANTHROPIC),
  'claude-3-5-haiku': entry(200_000, ANTHROPIC),
  'claude-3-5-sonnet': entry(200_000, ANTHROPIC),
  'claude-3-7-sonnet': entry(200_000, ANTHROPIC),
  'claude-sonnet-4': entry(200_000, ANTHROPIC),
  'claude-opus-4': entry(200_000, ANTHROPIC),
  'claude-opus-4-1': entry(200_000, ANTHROPIC),
  'claude-sonnet-4-5': entry(200_000, ANTHROPIC),
  'claude-haiku-4-5': entry(200_000, ANTHROPIC),
  // Google: the "Input token limit" of each model page.
  'gemini-1.5-flash': entry(1_048_576, gemini('gemini-1.5-flash')),
  'gemini-1.5-pro': entry(2_097_152, gemini('gemini-1.5-pro')),
  'gemini-2.0-flash': entry(1_048_576, gemini('gemini-2.0-flash')),
  'gemini-2.0-flash-lite': entry(1_048_576, gemini('gemini-2.0-flash-lite')),
  'gemini-2.5-pro': entry(1_048_576, gemini('gemini-2.5-pro')),
  'gemini-2.5-flash': entry(1_048_576, gemini('gemini-2.5-flash')),
  'gemini-2.5-flash-lite': entry(1_048_576, gemini('gemini-2.5-flash-lite')),
});

/** A date or version suffix: `-2024-08-06`, `-20250514`, `@20240620`, `-0613`, `-001`, `-latest`, Bedrock's `-v1:0`. */
const SUFFIX = /(?:-\d{4}-\d{2}-\d{2}|[-@]\d{8}|-\d{3,4}|-latest|-v\d+(?::\d+)?)$/;

/**
 * The table key a model id is looked up by: lower case, without a `provider/` or `models/` prefix
 * (gateways, Gemini), a Bedrock `anthropic.` / `us.anthropic.` prefix, or trailing date and version
 * suffixes. Pure.
 */
export function normalizeModelId(modelId: string): string {
  let id = modelId.trim().toLowerCase();
  id = id.slice(id.lastIndexOf('/') + 1);
  id = id.replace(/^(?:[a-z]{2}\.)?anthropic\./, '');
  for (let before = ''; before !== id;) {
    before = id;
    id = id.replace(SUFFIX, '');
  }
  return id;
}

/**
 * The published standard context window of `modelId` in tokens, or undefined when the model is
 * not in the table (an unknown model is never guessed). Dated snapshots and gateway ids resolve to
 * their family (`gpt-4o-2024-08-06`, `openai/gpt-4o` → `gpt-4o`). Pure.
 */
export function contextWindowOf(modelId: string): number | undefined {
  if (typeof modelId !== 'string' || modelId === '') return undefined;
  const key = normalizeModelId(modelId);
  return Object.hasOwn(CONTEXT_WINDOWS, key) ? CONTEXT_WINDOWS[key].tokens : undefined;
}
