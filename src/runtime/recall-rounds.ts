import type { CompressResult } from './compress.js';
import type { CompressorRecall, RequestExtras } from './compressor.js';
import { isFields, type Fields, type RecallRoundDialect, type RecallView } from '../recall/dialect.js';
import { totalUsage } from '../recall/usage-sum.js';

type Report = CompressResult<unknown>['report'];

export type { RecallView } from '../recall/dialect.js';

/** What answering recall rounds needs: the compressor, the call's chat, history and extras, and a way to ask the model again. */
export interface RecallRounds<R> {
  /** The compressor that made the first view (its `compress`, and its `recall`: without it, nothing is answered). */
  readonly compressor: { readonly recall?: CompressorRecall; compress<M>(chatId: string, messages: M[], request?: RequestExtras): Promise<CompressResult<M> & { readonly tools?: unknown[] }> };
  readonly dialect: RecallRoundDialect;
  readonly chatId: string;
  /** The application's history (the recall rounds are appended to a copy, never to it). */
  readonly history: readonly unknown[];
  readonly extras: RequestExtras;
  /** A reply in the dialect's shape, or undefined when it cannot be read (it is then returned as is). Default: the reply itself. */
  readonly read?: (reply: R) => unknown;
  /**
   * Sends the same request again with this view, and resolves to the model's reply.
   * `earlierUsage`: the usage of every reply before this call's, added up (with `usage`).
   */
  readonly ask: (view: RecallView, earlierUsage: Fields | undefined) => Promise<R>;
  /** The usage a reply reports (each call is billed: the rounds add them up); absent, none is counted. */
  readonly usage?: (reply: R) => Fields | undefined;
  /**
   * True for a reply that is an error answer, where `ask` returns one instead of throwing (the
   * proxy's upstream statuses). The final call past the rounds falls back when it gets one.
   */
  readonly refused?: (reply: R) => boolean;
}

/** True for an error an HTTP client throws for an error status (`status` or `statusCode` of 400 or more: the OpenAI SDK, the AI SDK, LangChain's providers). */
export function hasErrorStatus(error: unknown): boolean {
  if (!isFields(error)) return false;
  const status = typeof error.status === 'number' ? error.status : error.statusCode;
  return typeof status === 'number' && status >= 400;
}

/** How the rounds ended. Invariant: `pending` is true exactly when `reply` still holds recall calls (pass it through `dialect.without`). */
export interface RecallOutcome<R> {
  readonly reply: R;
  /** The report of the last view sent. */
  readonly report: Report;
  /** Rounds answered (requests sent again), the final call past the rounds included. */
  readonly rounds: number;
  /** True when the reply holds recall calls that were not answered (mixed with the application's calls, or past the rounds). */
  readonly pending: boolean;
  /** The usage of every reply before `reply`, added up (what the application's usage is raised by); undefined with none. */
  readonly earlierUsage?: Fields;
}

/**
 * Answers the `ctxfold_recall` calls of a reply and asks the model again, up to
 * `compressor.recall.rounds` times. Rule: a reply the dialect calls answerable is answered (the
 * model's turn and one result per call are appended to a copy of the history, each answer bounded
 * by its share of the room the window leaves above the smallest view, the whole is compressed
 * again within the budget, and `ask` sends it with the new view and tools); any other reply is
 * returned, `pending` when it still holds recall calls (one that mixes them with the
 * application's calls, or one the window has no room left to answer): the caller removes them, so
 * nothing the application would run is ever dropped. Past the rounds, a reply that only recalls is
 * answered once more and the model asked with `final` (no tool call allowed), so the application
 * gets an answer rather than an empty reply; a final reply that recalls anyway is `pending`. So
 * `ask` is called at most `rounds + 1` times. The final call is best effort: when it fails with an
 * error status (thrown, or a `refused` reply: a server that does not take `tool_choice` none), the
 * reply before it is returned, `pending`, with its own report and usage, as if it had not been
 * made. With `usage`, the outcome's `earlierUsage` adds up the replies before the last (each call
 * is billed). Endpoint-neutral: the adapter, the proxy and `wrap` use it.
 */
export async function answerRecallRounds<R>(first: R, report: Report, round: RecallRounds<R>): Promise<RecallOutcome<R>> {
  const recall = round.compressor.recall;
  if (!recall) return { reply: first, report, rounds: 0, pending: false };
  let earlierUsage: Fields | undefined;
  const { dialect } = round;
  const read = round.read ?? ((reply: R) => reply);
  let reply = first;
  let last = report;
  const added: unknown[] = [];
  const results = (items: unknown[]) => (dialect.combine ? dialect.combine(items) : items);
  for (let answered = 0; ; answered++) {
    const shaped = read(reply);
    const asked = isFields(shaped) ? dialect.read(shaped) : undefined;
    if (!asked) return { reply, report: last, rounds: answered, pending: false, earlierUsage };
    // Past the rounds, one final call, with no tool call allowed; a final reply that still recalls is passed on.
    const final = answered >= recall.rounds;
    if (!asked.answerable || answered > recall.rounds) return { reply, report: last, rounds: answered, pending: true, earlierUsage };
    const turn = dialect.turn(shaped as Record<string, unknown>);
    // The answers get the room the window leaves once this turn and its (empty) results are in
    // the smallest view: a recall round never pushes a view over the budget. No room: the calls
    // stay unanswered (pending), and the caller removes them.
    const probe = await round.compressor.compress(round.chatId, [...round.history, ...added, ...turn, ...results(asked.calls.map((call) => dialect.result(call, '')))], round.extras);
    const { maxContextTokens, reservedOutputTokens, minimumTokens } = probe.report;
    const room = maxContextTokens === undefined ? Infinity : minimumTokens === undefined ? 0 : maxContextTokens - reservedOutputTokens - minimumTokens;
    if (room < asked.calls.length) return { reply, report: last, rounds: answered, pending: true, earlierUsage };
    const share = room === Infinity ? undefined : Math.floor(room / asked.calls.length);
    const answers: unknown[] = [];
    for (const call of asked.calls) {
      const answer = await recall.answer(round.chatId, call.arguments, share === undefined ? undefined : { maxTokens: share });
      answers.push(dialect.result(call, answer.text));
    }
    added.push(...turn, ...results(answers));
    const view = await round.compressor.compress(round.chatId, [...round.history, ...added], round.extras);
    const before = { reply, report: last, earlierUsage };
    last = view.report;
    earlierUsage = totalUsage(earlierUsage, round.usage?.(reply));
    let answer: R;
    try {
      answer = await round.ask({ messages: view.messages, ...(view.tools ? { tools: view.tools } : {}), ...(final ? { final: true } : {}) }, earlierUsage);
    } catch (error) {
      if (!final || !hasErrorStatus(error)) throw error;
      return { ...before, rounds: answered, pending: true };
    }
    if (final && round.refused?.(answer)) return { ...before, rounds: answered, pending: true };
    reply = answer;
  }
}
