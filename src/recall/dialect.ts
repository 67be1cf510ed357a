/** A response or request body as the recall dialects read it: only named fields are looked at. */
export type Fields = Readonly<Record<string, unknown>>;

/** How many of the `dropped` positions lie before `index`: the shift a kept item's position takes when they are removed. */
export function droppedBefore(dropped: ReadonlySet<number>, index: number): number {
  let n = 0;
  for (const d of dropped) if (d < index) n++;
  return n;
}

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
 * How whole responses carry recall calls and how an answered round is written into the history:
 * all the rounds need (`answerRecallRounds`). Invariant: `read` gives undefined exactly when
 * `without` would return the response unchanged, and `turn` + one `result` per call form a
 * complete, valid call turn of the format.
 */
export interface RecallRoundDialect {
  /** The recall calls a response holds, or undefined when it holds none. */
  read(response: Fields): RecallAsk | undefined;
  /** The history items of the model's turn that made the calls, in order (appended before the results). */
  turn(response: Fields): unknown[];
  /** The history item answering one call with the text `compressor.recall.answer` gave. */
  result(call: RecallCall, text: string): unknown;
  /** The results of one turn as the history carries them, when not one item each (Anthropic: one user message holds them all). */
  combine?(results: readonly unknown[]): unknown[];
  /** A copy of the response without its recall calls (the response itself when it has none). */
  without<T>(response: T): T;
}

/** How one HTTP endpoint's responses, whole or streamed, carry recall calls (see `RecallRoundDialect`). */
export interface RecallDialect extends RecallRoundDialect {
  /** The wire format of the history the turns are written in. */
  readonly format: 'openai' | 'openai-responses' | 'anthropic';
  /** The body field that carries the history on the wire. */
  readonly listField: 'messages' | 'input';
  /** The request's `tool_choice` that lets the model call no tool (Chat and Responses `"none"`, Messages `{ type: "none" }`). */
  readonly noToolChoice: unknown;
  /**
   * A copy of the response without the recall tool in what it echoes of its request (the response
   * itself when it echoes none): what every response of a request that was offered the tool goes
   * through before the application sees it. Responses echo `tools`; Chat Completions echo nothing.
   */
  withoutTool<T>(response: T): T;
  /** How a streamed response of this endpoint is read for recall calls. */
  readonly stream: RecallStream;
}

/** The view a new round sends: the history's view and the request's tools (recall tool included). */
export interface RecallView {
  readonly messages: unknown[];
  readonly tools?: unknown[];
  /**
   * True for the one call made past the rounds, when the reply only recalled: its recall calls are
   * answered and the model is asked for an answer with no tool call (`tool_choice` none).
   */
  readonly final?: boolean;
}

/**
 * The request a round sends over HTTP: the caller's request with the round's view in `listField`,
 * its tools when it has them, and on the final call `tool_choice` set to the dialect's none.
 * Invariant: every other field of the request is kept as it was.
 */
export function roundRequest<T extends object>(dialect: RecallDialect, request: T, view: RecallView, listField: string = dialect.listField): T {
  return { ...request, [listField]: view.messages, ...(view.tools ? { tools: view.tools } : {}), ...(view.final ? { tool_choice: dialect.noToolChoice } : {}) };
}

/**
 * What the application is shown of a reply in the dialect's own shape: without the recall tool its
 * echo of the request holds, and without its recall calls when they were left unanswered
 * (`pending`). Invariant: a reply with neither is returned as is (the same object).
 */
export function shownReply<T>(dialect: RecallDialect, reply: T, pending: boolean): T {
  return dialect.withoutTool(pending ? dialect.without(reply) : reply);
}

/** What the first telling event of a streamed response shows (see `RecallStream.signal`). */
export type StreamSignalKind = 'text' | 'recall' | 'other';

/** Builds a whole response from its stream's events, in order. */
export interface StreamAssembler {
  push(event: Fields): void;
  /** The response so far, in the shape `RecallDialect.read` and `turn` take. */
  response(): Fields;
}

/**
 * Reads the events of a streamed response (each SSE `data` parsed). Invariant: the stripped
 * events, assembled, equal `withoutTool(without(...))` of the assembled events, and keep the
 * stream's own shape (a client's accumulator builds the same response from them).
 */
export interface RecallStream {
  /**
   * What the event shows first, if anything: `text` for the user, a `recall` call, or `other`
   * (a call or item the application acts on, several choices, an error); undefined for events
   * that show none of these (a role, reasoning, metadata).
   */
  signal(event: Fields): StreamSignalKind | undefined;
  /** True for the event that ends the answer (a finish, the usage, the completed response) and every one after it. */
  terminal(event: Fields): boolean;
  /** True when a round may follow text already sent in the same stream (Chat: the next round's deltas continue the message). */
  readonly continues: boolean;
  /**
   * With `continues`: a map applied to every event shown, across rounds, that makes a later
   * round's events read as the same answer as the first shown (Chat: its completion `id` and
   * `created`). Absent: events are shown as they came.
   */
  continuation?(): (event: Fields) => Fields;
  assemble(): StreamAssembler;
  /**
   * A filter removing recall calls from events, in order: undefined drops an event, the same
   * object passes it unchanged. `final` (the assembled response, when every event is known
   * before any is sent) lets it drop what `without` drops that only the end reveals.
   */
  strip(final?: Fields): (event: Fields) => Fields | undefined;
}
