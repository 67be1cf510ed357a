/** A response or request body as the recall dialects read it: only named fields are looked at. */
export type Fields = Readonly<Record<string, unknown>>;

/** True for a plain object (a response, an item, a call): what the dialects look into. */
export const isFields = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One `ctxfold_recall` call of a response, as read here: its id (`tool_call_id` / `call_id`) and arguments as sent. */
export interface RecallCall {
  readonly id: string;
  readonly arguments: string;
}

/** What a response asks of recall: its recall calls, and whether they may be answered here. */
export interface RecallAsk {
  /** The response's `ctxfold_recall` calls, in order (never empty). */
  readonly calls: readonly RecallCall[];
  /** True when the response holds nothing the application would act on besides them (see each dialect's rule). */
  readonly answerable: boolean;
}

/**
 * How one endpoint's responses carry recall calls and how an answered round is written into its
 * history. Invariant: `read` gives undefined exactly when `without` would return the response
 * unchanged, and `turn` + one `result` per call form a complete, valid call turn of the format.
 */
export interface RecallDialect {
  /** The wire format of the history the turns are written in. */
  readonly format: 'openai' | 'openai-responses';
  /** The body field that carries the history on the wire. */
  readonly listField: 'messages' | 'input';
  /** The recall calls a response holds, or undefined when it holds none. */
  read(response: Fields): RecallAsk | undefined;
  /** The history items of the model's turn that made the calls, in order (appended before the results). */
  turn(response: Fields): unknown[];
  /** The history item answering one call with the text `compressor.recall.answer` gave. */
  result(call: RecallCall, text: string): unknown;
  /** A copy of the response without its recall calls (the response itself when it has none). */
  without<T>(response: T): T;
}
