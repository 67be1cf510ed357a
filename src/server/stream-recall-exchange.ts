import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { isFields, type Fields } from '../runtime/endpoints.js';
import { answerRecallRounds } from '../runtime/recall-rounds.js';
import { CLIENT_CLOSED, type ForwardCall } from './forward.js';
import { sendError } from './json-errors.js';
import { callRound, exchangeRounds, upstreamTimes, type RecallExchange, type RecallExchangeResult } from './recall-exchange.js';
import { drained, relay } from './relay.js';
import { streamSignalOf } from './routes.js';
import { SseReader } from './sse-reader.js';
import { relayedHeaders, UpstreamError } from './upstream.js';
import type { AnswerFacts } from './usage-watch.js';
import { totalUsage, usageOf, withEarlierStreamUsage } from '../recall/usage-sum.js';
import { isJsonAnswer, readWhole, sendWhole, wholeFacts, type WholeReply } from './whole-reply.js';

/** One server-sent event: its data text, that text parsed when it is a JSON object, and its `event:` name. */
interface SseEvent {
  readonly data: string;
  readonly json?: Fields;
  readonly name?: string;
}

/** One upstream answer to a streamed request, once its stream has ended (or been relayed whole). */
interface StreamRound {
  /** Events not sent yet. `raw`: none was sent (they are stripped when sent); otherwise already stripped. */
  readonly pending: readonly SseEvent[];
  readonly raw: boolean;
  /** The whole response, when the round may be answered (undefined: nothing to answer, or text already sent where a round cannot continue it). */
  readonly response?: Fields;
  /** True when the upstream's answer was relayed as it came (an error status, or a body neither an event stream nor JSON). */
  readonly relayedWhole: boolean;
  /** False when the answer did not reach the client whole. */
  readonly complete: boolean;
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly facts?: AnswerFacts;
  /** True for the final call's error answer, not relayed: the answer before it goes out instead. */
  readonly refused?: boolean;
  /** The answer, read whole, when the upstream answered the streamed request with JSON (sent as a non-streamed answer is). */
  readonly whole?: WholeReply;
  /** This answer's own usage, when it reported one. */
  readonly usage?: Fields;
  /** The usage of the exchange's earlier answers, added up: what this round's usage is raised by before the client sees it. */
  readonly earlier?: Fields;
}

function sseBytes(event: SseEvent, payload: Fields | undefined): string {
  const data = payload === undefined || payload === event.json ? event.data : JSON.stringify(payload);
  return `${event.name !== undefined ? `event: ${event.name}\n` : ''}data: ${data}\n\n`;
}

/** The `data` of an SSE event parsed, when it is a JSON object (`[DONE]` and other text are not). */
function parsed(data: string): Fields | undefined {
  if (data === '[DONE]' || data === '') return undefined;
  try {
    const v: unknown = JSON.parse(data);
    return isFields(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Forwards a streamed request (`"stream": true`) whose view offers the recall tool, keeping the
 * stream a stream. Each answer's events are read as they come and held only until the first one
 * that tells what the answer is (`RecallStream.signal`): text or an application's call sends the
 * held events and relays the rest as it arrives, recall calls removed from them; a recall call
 * first holds the whole answer. An answer that holds only recall calls (the rules of
 * `answerRecallRounds`) is answered from the caller's chat and the model asked again, streamed,
 * at most `recall.rounds` times; on Chat Completions a round may also follow text already streamed
 * (the next round's deltas continue the same message; the finish, usage and `[DONE]` of a round
 * are held until it is known to be the last). The client gets one stream: the upstream's events,
 * without recall calls, any usage it carries raised by the earlier rounds' (the client sees the
 * whole exchange's). An upstream that answers with JSON instead is read whole and answered as
 * `forwardAnsweringRecall` answers (the client gets the last JSON answer, without recall calls).
 * An upstream error status is relayed as it came; a stream that breaks off
 * after events were sent ends the client's connection abruptly, never as if complete.
 */
export async function forwardStreamAnsweringRecall(req: IncomingMessage, res: ServerResponse, call: ForwardCall, exchange: RecallExchange): Promise<RecallExchangeResult> {
  const { dialect, route } = exchange;
  const stream = dialect.stream;
  const calls: number[] = [];
  let rounds = 0;
  let report = exchange.report;
  let latest: StreamRound | undefined;
  /** The usage of every answer before the current round's, added up. */
  let earlier: Fields | undefined;
  /** Later rounds read as the same answer (Chat: the first chunk's id). */
  const same = stream.continuation?.();

  const write = async (text: string): Promise<boolean> => res.write(text) || drained(res);
  const open = (headers: IncomingHttpHeaders, status: number) => {
    if (res.headersSent) return;
    const out: Record<string, string | string[]> = { ...relayedHeaders(headers), ...call.extraHeaders };
    delete out['content-length'];
    res.writeHead(status, out);
    res.flushHeaders();
  };

  const round = async (body: Uint8Array | undefined, contentType: string | undefined, final = false): Promise<StreamRound> => {
    earlier = totalUsage(earlier, latest?.usage);
    const raised = earlier;
    /** An event as the client is shown it: the usage of the earlier answers added to its own. */
    const raise = (payload: Fields | undefined) => (payload === undefined ? undefined : withEarlierStreamUsage(dialect.format, same ? same(payload) : payload, raised));
    const upstream = await callRound(req, call, body, contentType, calls);
    const { status, headers } = upstream;
    const type = String(headers['content-type'] ?? '').toLowerCase();
    if (final && (status < 200 || status >= 300)) {
      // The final call past the rounds is best effort: its error answer is not relayed.
      upstream.cancel();
      return { pending: [], raw: false, relayedWhole: false, complete: false, status, headers, refused: true };
    }
    if (status < 200 || status >= 300 || !type.startsWith('text/event-stream')) {
      if (res.headersSent) {
        // A round that continues a stream already sent cannot put another answer in it.
        upstream.cancel();
        res.destroy();
        return (latest = { pending: [], raw: false, relayedWhole: true, complete: false, status, headers });
      }
      if (isJsonAnswer(status, headers['content-type'])) {
        // JSON to a streamed request: read whole, its recall calls answered as a non-streamed answer's are.
        const whole = await readWhole(upstream);
        return (latest = { pending: [], raw: false, response: whole.json, relayedWhole: false, complete: true, status, headers, facts: wholeFacts(route, whole), whole, usage: usageOf(whole.json), earlier: raised });
      }
      const end = await relay(upstream, res, () => undefined, call.extraHeaders);
      return (latest = { pending: [], raw: false, relayedWhole: true, complete: end.complete, status, headers });
    }
    const assembler = stream.assemble();
    const strip = stream.strip();
    let billed: number | undefined;
    let failed = false;
    let mode: 'undecided' | 'hold' | 'relay' = 'undecided';
    let ended = false;
    const held: SseEvent[] = [];
    let out = '';
    const queue: SseEvent[] = [];
    const reader = new SseReader((data, name) => queue.push({ data, json: parsed(data), name }));
    /** Sends an event (stripped) now, or holds it (stripped) from the round's first terminal event on. */
    const pass = (event: SseEvent) => {
      const payload = event.json === undefined ? undefined : raise(strip(event.json));
      if (event.json !== undefined && payload === undefined) return;
      if (stream.continues && (ended ||= event.json !== undefined && stream.terminal(event.json))) held.push(payload === undefined || payload === event.json ? event : { ...event, data: JSON.stringify(payload), json: payload });
      else out += sseBytes(event, payload);
    };
    const take = () => {
      for (const event of queue.splice(0)) {
        if (event.json) {
          assembler.push(event.json);
          const signal = streamSignalOf(route, event.json);
          billed = signal.billedInputTokens ?? billed;
          failed ||= signal.failed === true;
        }
        if (mode === 'undecided' && event.json) {
          const seen = stream.signal(event.json);
          if (seen === 'recall') mode = 'hold';
          else if (seen !== undefined) {
            mode = 'relay';
            open(headers, status);
            for (const before of held.splice(0)) pass(before);
          }
        }
        if (mode === 'relay') pass(event);
        else held.push(event);
      }
    };
    try {
      for await (const chunk of upstream.chunks()) {
        reader.push(chunk);
        take();
        if (out !== '') {
          const text = out;
          out = '';
          if (!(await write(text))) {
            upstream.cancel();
            return (latest = { pending: [], raw: false, relayedWhole: false, complete: false, status, headers });
          }
        }
      }
    } catch (error) {
      // The stream broke off: an upstream failure, whatever was thrown (never a ctxfold one, whose answer would be sent).
      if (error instanceof UpstreamError) throw error;
      throw new UpstreamError(call.upstream, 'unreachable', `its stream broke off: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    reader.end();
    take();
    if (out !== '' && !(await write(out))) return (latest = { pending: [], raw: false, relayedWhole: false, complete: false, status, headers });
    const facts = { billedInputTokens: billed, failed };
    const relayed = (mode as string) === 'relay';
    // Text already sent can be continued by a round only where the stream's shape allows it.
    const answerable = !relayed || stream.continues;
    const whole = assembler.response();
    return (latest = { pending: held, raw: !relayed, response: answerable ? whole : undefined, relayedWhole: false, complete: true, status, headers, facts, usage: usageOf(whole), earlier: raised });
  };

  const raiseBy = (payload: Fields | undefined, by: Fields | undefined) => (payload === undefined ? undefined : withEarlierStreamUsage(dialect.format, same ? same(payload) : payload, by));

  /** Sends what a round still holds and ends the response (its recall calls removed; a JSON answer's only when `pending`); resolves true once it was all sent. */
  const finish = async (last: StreamRound, pending: boolean): Promise<boolean> => {
    if (last.relayedWhole || !last.complete) return last.complete;
    if (res.destroyed) return false;
    if (last.whole) return sendWhole(res, last.whole, dialect, pending, call.extraHeaders, last.earlier);
    open(last.headers, last.status);
    const strip = last.raw ? stream.strip(last.response) : undefined;
    let text = '';
    for (const event of last.pending) {
      const payload = strip && event.json !== undefined ? raiseBy(strip(event.json), last.earlier) : event.json;
      if (event.json !== undefined && payload === undefined) continue;
      text += sseBytes(event, payload);
    }
    if (text !== '' && !(await write(text))) return false;
    return new Promise((resolve) => {
      res.once('finish', () => resolve(true));
      res.once('close', () => resolve(res.writableFinished));
      res.end();
    });
  };

  let reply: StreamRound;
  let pending = true;
  let problem: string | undefined;
  try {
    const outcome = await answerRecallRounds<StreamRound>(await round(call.body, call.contentType), exchange.report, exchangeRounds(exchange, (r) => r.response, (body, type, final) => {
      rounds++;
      return round(body, type, final);
    }, (r) => r.refused === true));
    reply = outcome.reply;
    pending = outcome.pending;
    report = outcome.report;
    rounds = outcome.rounds;
    if (reply !== latest) problem = 'the final recall call (tool_choice none) was answered with an error status: sent the answer before it';
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof UpstreamError || latest === undefined) {
      const failure = error instanceof UpstreamError ? error.failure : 'unreachable';
      if (failure === 'client-gone' || res.headersSent) {
        // The client leaving is 499 whether or not a round's events had reached it; an upstream that broke off mid-stream keeps the status sent.
        const left = failure === 'client-gone' || call.clientGone.aborted || !res.headersSent;
        res.destroy();
        return { status: left ? CLIENT_CLOSED : res.statusCode, complete: false, ...upstreamTimes(calls), problem: message, report, rounds };
      }
      const status = failure === 'timeout' ? 504 : 502;
      sendError(res, call.errors, { status, message, code: failure === 'timeout' ? 'ctxfold_upstream_timeout' : 'ctxfold_upstream_unreachable' });
      return { status, complete: false, ...upstreamTimes(calls), problem: message, report, rounds };
    }
    // A failure of ctxfold itself in a round: the last answer received goes out, without its recall calls.
    reply = latest;
    problem = `recall round failed, sent the last answer: ${message}`;
  }
  const complete = await finish(reply, pending);
  const why = problem ?? (complete ? undefined : 'the client disconnected');
  const status = complete || !call.clientGone.aborted ? (res.headersSent ? res.statusCode : reply.status) : CLIENT_CLOSED;
  return { status, complete, ...upstreamTimes(calls), ...(why !== undefined ? { problem: why } : {}), facts: complete ? reply.facts : undefined, report, rounds };
}

