/** The `recall` option of `createCompressor`: `true`, or its settings. */
export interface RecallOptions {
  /** Tokens one recall answer may take. Default 2000, and at most an eighth of `maxContextTokens`. */
  readonly maxTokens?: number;
  /**
   * Recall rounds an adapter answers itself per application request before it returns. Default 3.
   * Past them, a reply that only recalls is answered once more with no tool call allowed.
   */
  readonly rounds?: number;
}

/** Recall settings after defaults. Invariant: `maxTokens >= 1`, `rounds >= 0`. */
export interface ResolvedRecall {
  readonly maxTokens: number;
  readonly rounds: number;
}

/** Default tokens of one recall answer, and default rounds. */
export const DEFAULT_RECALL_TOKENS = 2000;
export const DEFAULT_RECALL_ROUNDS = 3;

/** The recall settings of a checked `recall` option, or undefined when recall is off. */
export function resolveRecallOption(option: boolean | RecallOptions | undefined, maxContextTokens: number | undefined): ResolvedRecall | undefined {
  if (option === undefined || option === false) return undefined;
  const given = option === true ? {} : option;
  const cap = maxContextTokens === undefined ? DEFAULT_RECALL_TOKENS : Math.max(1, Math.floor(maxContextTokens / 8));
  return {
    maxTokens: given.maxTokens ?? Math.min(DEFAULT_RECALL_TOKENS, cap),
    rounds: given.rounds ?? DEFAULT_RECALL_ROUNDS,
  };
}
