import { CtxfoldInputError } from '../errors.js';

/** Collapse bulky old tool results when over budget: `true` uses the default threshold. */
export type ToolOutputTrim = boolean | { readonly minChars?: number };

/** A summary already made for this chat: its text and the ids of the messages it replaces. */
export interface SummaryInput {
  readonly text: string;
  readonly coveredIds: readonly string[];
}

/**
 * Planning options. Every option also has the snake_case name the Open WebUI filter uses
 * (`keep_first`, `max_context_tokens`, ...); the camelCase one wins when both are given.
 */
export interface PlanningOptions {
  /** Messages at the start that are always sent (rounded out to whole groups). Default 1. */
  keepFirst?: number;
  /** Messages at the end never summarized or cleared (rounded out to whole groups). Default 6. */
  keepLast?: number;
  /** Hard limit for the view, in tokens. No limit when absent. */
  maxContextTokens?: number;
  /**
   * When the view with the current summary, before any trimming, reaches this many tokens, the
   * groups it does not cover yet should be summarized (reported as `summarize`).
   */
  compressionThresholdTokens?: number;
  /** Collapse bulky tool results older than the tail when over `maxContextTokens`. Default off. */
  toolOutputTrim?: ToolOutputTrim;
  /** Role of the summary message. Default `user` (accepted by every OpenAI-compatible backend). */
  summaryRole?: 'system' | 'user';
  keep_first?: number;
  keep_last?: number;
  max_context_tokens?: number;
  compression_threshold_tokens?: number;
  tool_output_trim?: ToolOutputTrim;
  summary_role?: 'system' | 'user';
}

/** Planning options after defaults and aliases, checked. */
export interface ResolvedPlanningOptions {
  readonly keepFirst: number;
  readonly keepLast: number;
  readonly maxContextTokens?: number;
  readonly compressionThresholdTokens?: number;
  readonly collapseMinChars?: number;
  readonly summaryRole: 'system' | 'user';
}

/** Default character threshold for `toolOutputTrim: true`. */
export const DEFAULT_COLLAPSE_MIN_CHARS = 2000;

function count(name: string, value: unknown, fallback: number | undefined, min: number): number | undefined {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new CtxfoldInputError(`options.${name}`, `must be an integer >= ${min}, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** Applies defaults and snake_case aliases, and rejects values that cannot be meant (naming the option). */
export function resolvePlanningOptions(o: PlanningOptions = {}): ResolvedPlanningOptions {
  const trim = o.toolOutputTrim ?? o.tool_output_trim ?? false;
  let collapseMinChars: number | undefined;
  if (trim === true) collapseMinChars = DEFAULT_COLLAPSE_MIN_CHARS;
  else if (trim && typeof trim === 'object') collapseMinChars = count('toolOutputTrim.minChars', trim.minChars, DEFAULT_COLLAPSE_MIN_CHARS, 0);
  else if (trim !== false) throw new CtxfoldInputError('options.toolOutputTrim', `must be true, false or { minChars }, got ${JSON.stringify(trim)}`);
  const role = o.summaryRole ?? o.summary_role ?? 'user';
  if (role !== 'user' && role !== 'system') throw new CtxfoldInputError('options.summaryRole', `must be "user" or "system", got ${JSON.stringify(role)}`);
  return {
    keepFirst: count('keepFirst', o.keepFirst ?? o.keep_first, 1, 0)!,
    keepLast: count('keepLast', o.keepLast ?? o.keep_last, 6, 0)!,
    maxContextTokens: count('maxContextTokens', o.maxContextTokens ?? o.max_context_tokens, undefined, 1),
    compressionThresholdTokens: count('compressionThresholdTokens', o.compressionThresholdTokens ?? o.compression_threshold_tokens, undefined, 1),
    collapseMinChars,
    summaryRole: role,
  };
}
