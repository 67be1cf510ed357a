import type { CompressResult } from '../../runtime/compress.js';
import type { Compressor, RequestExtras } from '../../runtime/compressor.js';
import { isFields, type Fields } from './endpoints.js';

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
  /** The body field that carries the history. */
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

/** What answering recall rounds needs: the call's chat, history, request extras and a way to post a body again. */
export interface RecallRound {
  readonly compressor: Compressor;
  readonly dialect: RecallDialect;
  readonly chatId: string;
  /** The application's history (the recall rounds are appended to a copy, never to it). */
  readonly history: readonly unknown[];
  readonly extras: RequestExtras;
  /** The request body as the application gave it. */
  readonly body: Fields;
  /** Posts a body (the client's own `post`, not folded again) and resolves to the parsed response. */
  readonly post: (body: Fields) => Promise<unknown>;
}

/**
 * Answers the `ctxfold_recall` calls of a non-streamed response and asks the model again, up to
 * `compressor.recall.rounds` times. Rule: a response the dialect calls answerable is answered (the
 * model's turn and one result per call are appended to a copy of the history, the whole is
 * compressed again within the budget, and the same body is posted with the new view and tools);
 * any other response holding recall calls (one that mixes them with the application's calls, or
 * the one past the rounds) is passed on without them: nothing the application would run is ever
 * dropped, and the model may ask to recall again on the next request. Invariant: the response
 * returned never holds a recall call; the report is that of the last view sent.
 */
export async function answerRecallRounds(first: unknown, report: CompressResult<unknown>['report'], round: RecallRound): Promise<{ response: unknown; report: CompressResult<unknown>['report'] }> {
  const recall = round.compressor.recall;
  if (!recall) return { response: first, report };
  const { dialect } = round;
  let response = first;
  let last = report;
  const added: unknown[] = [];
  for (let answered = 0; ; answered++) {
    const asked = isFields(response) ? dialect.read(response) : undefined;
    if (!asked) return { response, report: last };
    if (!asked.answerable || answered >= recall.rounds) return { response: dialect.without(response), report: last };
    added.push(...dialect.turn(response as Fields));
    for (const call of asked.calls) {
      const answer = await recall.answer(round.chatId, call.arguments);
      added.push(dialect.result(call, answer.text));
    }
    const view = await round.compressor.compress(round.chatId, [...round.history, ...added], round.extras);
    last = view.report;
    response = await round.post({ ...round.body, [dialect.listField]: view.messages, ...(view.tools ? { tools: view.tools } : {}) });
  }
}
