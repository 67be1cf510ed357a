import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Fields } from '../runtime/endpoints.js';
import { roundRequest, type RecallDialect } from '../recall/dialect.js';
import { recallDialect } from '../recall/dialects.js';
import { answerRecallRounds, type RecallRounds } from '../runtime/recall-rounds.js';
import type { CompressResult } from '../runtime/compress.js';
import type { Compressor, RequestExtras } from '../runtime/compressor.js';
import { CLIENT_CLOSED, type ForwardCall, type ForwardResult } from './forward.js';
import { sendError } from './json-errors.js';
import type { FoldRoute } from './routes.js';
import { callUpstream, forwardHeaders, upstreamUrl, UpstreamError, type UpstreamResponse } from './upstream.js';
import type { AnswerFacts } from './usage-watch.js';
import { totalUsage, usageOf } from '../recall/usage-sum.js';
import { readWhole, sendWhole, wholeFacts, type WholeReply } from './whole-reply.js';

type Report = CompressResult<unknown>['report'];

/**
 * The dialect whose recall calls the proxy answers on this request, or undefined: recall off, or
 * legacy Chat `functions`. Chat Completions, Responses and Messages (Anthropic) are answered.
 * Streamed requests are answered too (`forwardStreamAnsweringRecall`). Invariant: undefined
 * exactly when the request gets no recall tool.
 */
export function proxyRecallDialect(route: FoldRoute, body: Fields, compressor: Compressor): RecallDialect | undefined {
  if (compressor.recall === undefined) return undefined;
  if (route.endpoint.format === 'openai' && body.functions !== undefined) return undefined;
  return recallDialect(route.endpoint.format);
}

/** What answering recall calls on one request needs: the request's chat, history and first view. */
export interface RecallExchange {
  readonly compressor: Compressor;
  readonly dialect: RecallDialect;
  readonly route: FoldRoute;
  /** The tenant-scoped chat id: recall answers read this chat's originals only. */
  readonly chatId: string;
  readonly history: readonly unknown[];
  readonly extras: RequestExtras;
  /** The client's body (its other fields are sent again on each round). */
  readonly body: Fields;
  /** The report of the first view. */
  readonly report: Report;
}

/** How the exchange ended: the forward result, what the last answer said, and the rounds answered. */
export interface RecallExchangeResult extends ForwardResult {
  /** Seconds until each upstream call's headers, one per call that answered, in order; `upstreamSeconds` is their sum. */
  readonly upstreamCalls: readonly number[];
  readonly facts?: AnswerFacts;
  readonly report: Report;
  readonly rounds: number;
}

/**
 * One upstream call of an exchange: the client's request (headers, path) with `body`, on the
 * call's pool, timeout and abort signal. Once the upstream answered, the seconds until its
 * headers are appended to `calls` (one entry per call that answered).
 */
export async function callRound(req: IncomingMessage, call: ForwardCall, body: Uint8Array | undefined, contentType: string | undefined, calls: number[]): Promise<UpstreamResponse> {
  const started = performance.now();
  const upstream = await callUpstream({
    url: upstreamUrl(call.upstream, call.path, call.search),
    method: call.method,
    headers: forwardHeaders(req.headers, call.key, contentType),
    body,
    agent: call.agent,
    clientGone: call.clientGone,
    timeoutMs: call.timeoutMs,
  });
  calls.push((performance.now() - started) / 1000);
  return upstream;
}

/** An exchange's upstream timings as its result reports them: each call's, and their sum (undefined when no call answered). */
export function upstreamTimes(calls: readonly number[]): { readonly upstreamCalls: readonly number[]; readonly upstreamSeconds?: number } {
  return calls.length === 0 ? { upstreamCalls: calls } : { upstreamCalls: calls, upstreamSeconds: calls.reduce((a, b) => a + b, 0) };
}

/**
 * The rounds of an exchange for `answerRecallRounds`: the request's chat, history and extras, and
 * `send` for each new round, given the client's body with the round's view (and tools) in place
 * and whether it is the final call past the rounds; `refused` tells an error answer (the final
 * call falls back to the answer before it).
 */
export function exchangeRounds<R>(exchange: RecallExchange, read: (reply: R) => unknown, send: (body: Uint8Array, contentType: string, final: boolean) => Promise<R>, refused: (reply: R) => boolean): RecallRounds<R> {
  const { dialect } = exchange;
  return {
    compressor: exchange.compressor,
    dialect,
    chatId: exchange.chatId,
    history: exchange.history,
    extras: exchange.extras,
    read,
    refused,
    ask: (view) => send(Buffer.from(JSON.stringify(roundRequest(dialect, exchange.body, view)), 'utf8'), 'application/json', view.final === true),
  };
}

/**
 * Forwards a non-streamed request whose view offers the recall tool, reading each answer whole:
 * while an answer holds only recall calls, they are answered from the caller's chat (`chatId`,
 * tenant-scoped) and the model is asked again with the new view, at most `recall.rounds` times
 * (the rules of `answerRecallRounds`); the client gets the last answer only, with its own bytes
 * when it holds no recall call and was the only one, else its JSON without them and with the
 * `usage` of every answer added up. Upstream failures are answered as
 * `forward` answers them (502, 504, 499); a failure of ctxfold in a round sends the last answer
 * received, without its recall calls: no answer is lost to it.
 */
export async function forwardAnsweringRecall(req: IncomingMessage, res: ServerResponse, call: ForwardCall, exchange: RecallExchange): Promise<RecallExchangeResult> {
  const { dialect, route } = exchange;
  const calls: number[] = [];
  let latest: WholeReply | undefined;
  /** The usage of every answer before `latest`, added up (the client is shown the whole). */
  let earlier: Fields | undefined;
  /** `earlier` as it was for the answer before `latest` (a refused final call falls back to that answer). */
  let earlierBefore: Fields | undefined;
  let rounds = 0;
  let report = exchange.report;
  const send = async (body: Uint8Array | undefined, contentType: string | undefined): Promise<WholeReply> => {
    earlierBefore = earlier;
    earlier = totalUsage(earlier, usageOf(latest?.json));
    latest = await readWhole(await callRound(req, call, body, contentType, calls));
    return latest;
  };
  let reply: WholeReply;
  let pending: boolean;
  let problem: string | undefined;
  try {
    const out = await answerRecallRounds<WholeReply>(await send(call.body, call.contentType), exchange.report, exchangeRounds(exchange, (r) => r.json, (body, type) => {
      rounds++;
      return send(body, type);
    }, (r) => r.status < 200 || r.status >= 300));
    ({ reply, report } = out);
    rounds = out.rounds;
    pending = out.pending;
    if (reply !== latest) {
      // The final call was refused: the answer before it goes out, with the usage up to it.
      earlier = earlierBefore;
      problem = `the final recall call (tool_choice none) was answered with status ${latest?.status}: sent the answer before it`;
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof UpstreamError || latest === undefined) {
      const failure = error instanceof UpstreamError ? error.failure : 'unreachable';
      if (failure === 'client-gone') {
        res.destroy();
        return { status: CLIENT_CLOSED, complete: false, ...upstreamTimes(calls), problem: message, report, rounds };
      }
      const status = failure === 'timeout' ? 504 : 502;
      sendError(res, call.errors, { status, message, code: failure === 'timeout' ? 'ctxfold_upstream_timeout' : 'ctxfold_upstream_unreachable' });
      return { status, complete: false, ...upstreamTimes(calls), problem: message, report, rounds };
    }
    reply = latest;
    pending = true;
    problem = `recall round failed, sent the last answer: ${message}`;
  }
  const complete = await sendWhole(res, reply, dialect, pending, call.extraHeaders, earlier);
  const facts = complete ? wholeFacts(route, reply) : undefined;
  const why = problem ?? (complete ? undefined : 'the client disconnected');
  const status = complete || !call.clientGone.aborted ? reply.status : CLIENT_CLOSED;
  return { status, complete, ...upstreamTimes(calls), ...(why !== undefined ? { problem: why } : {}), facts, report, rounds };
}
