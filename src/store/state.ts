/**
 * What is remembered per chat: the rolling summary and exactly which messages it replaced.
 * `version` starts at 1 for the first summary and grows by one with each commit.
 */
export interface ChatState {
  readonly chatId: string;
  readonly version: number;
  readonly summary: string;
  /** Ids of the covered messages, in history order, starting right after the head. */
  readonly coveredIds: readonly string[];
  readonly summarizer: string;
  readonly model?: string;
  /** Tokens of the covered messages, and of the summary that replaces them. */
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  /**
   * Set when the summary was written longer than a view holds for long (`tokensAfter`): the
   * tokens it is shortened to, the same text every time, once its whole text no longer fits
   * beside the turns that follow it. The threshold counts the summary at most at this size, so
   * the longer text never calls the next fold sooner.
   */
  readonly compactTokens?: number;
  /** ISO timestamps. */
  readonly createdAt: string;
  readonly updatedAt: string;
}

/**
 * Where chat states live. A store that cannot reach its data rejects with a `StoreError`; a
 * malformed `commit` call is an `InputError`. `commit` is a compare-and-set on `version`: it writes only when the
 * stored version is `expectedVersion` (0 = no state yet) and is atomic, so a crash leaves either
 * the old or the new state, and a stale job can never overwrite a newer summary.
 */
export interface StateStore {
  get(chatId: string): Promise<ChatState | undefined>;
  /** Returns true when written, false when the stored version was not `expectedVersion`. */
  commit(state: ChatState, expectedVersion: number): Promise<boolean>;
  delete(chatId: string): Promise<void>;
  close(): Promise<void>;
}

/** Exactly the fields of `ChatState`, copied from `state` (extra properties dropped; `model` only when set). */
export function stateFields(state: ChatState): ChatState {
  return {
    chatId: state.chatId,
    version: state.version,
    summary: state.summary,
    coveredIds: state.coveredIds,
    summarizer: state.summarizer,
    ...(state.model !== undefined ? { model: state.model } : {}),
    tokensBefore: state.tokensBefore,
    tokensAfter: state.tokensAfter,
    ...(state.compactTokens !== undefined ? { compactTokens: state.compactTokens } : {}),
    createdAt: state.createdAt,
    updatedAt: state.updatedAt,
  };
}
