import type { OpenAI } from 'openai';
import type { Stream } from 'openai/core/streaming';
import type { CompressResult } from '../../runtime/compress.js';
import type { Compressor, RequestExtras } from '../../runtime/compressor.js';
import { chatIdOfBody, type ChatIdOf } from './chat-id.js';
import { CHAT_COMPLETIONS, endpointAt, isFields, RESPONSES, type Endpoint, type Fields } from '../../runtime/endpoints.js';
import { watchedStream } from './observe-stream.js';
import { CHAT_RECALL } from '../../recall/chat-dialect.js';
import { roundRequest, shownReply, type RecallDialect, type RecallView } from '../../recall/dialect.js';
import { RESPONSES_RECALL } from '../../recall/responses-dialect.js';
import { answerRecallRounds } from '../../runtime/recall-rounds.js';
import { usageOf, withEarlierUsage } from '../../recall/usage-sum.js';
import { recallStream } from './recall-stream.js';

/** The client's `post`, whose options may be a promise: the SDK's own resources call it with `{ body, ...options, stream }`. */
type Post = OpenAI['post'];
type PostOptions = Awaited<NonNullable<Parameters<Post>[1]>>;

/** What a wrapper needs to fold a call: its compressor, how it reads chat ids, and where it warns. */
export interface Folding {
  readonly compressor: Compressor;
  readonly chatId?: ChatIdOf;
  /** Called when a chat id had to be fingerprinted (the wrapper warns once). */
  readonly onFingerprint: () => void;
}

/** One folded call, kept until its response: what `afterResponse` is told. */
interface FoldedCall {
  readonly endpoint: Endpoint;
  readonly chatId: string;
  /** The history as the request carried it (the caller's objects; a copy of the list). */
  readonly history: readonly unknown[];
  readonly report: CompressResult<unknown>['report'];
  readonly model?: string;
  readonly stream: boolean;
  /** Set when this call's recall calls are answered here (recall on, an endpoint whose responses are read): how its responses read and what a new round sends. */
  readonly recall?: { readonly dialect: RecallDialect; readonly extras: RequestExtras; readonly body: Fields; readonly options: PostOptions };
  answered: boolean;
}

/** How each folded endpoint's responses carry recall calls. */
const RECALL_DIALECTS: ReadonlyMap<Endpoint, RecallDialect> = new Map<Endpoint, RecallDialect>([[CHAT_COMPLETIONS, CHAT_RECALL], [RESPONSES, RESPONSES_RECALL]]);

const isStream = (v: unknown): v is Stream<Fields> => isFields(v) && typeof (v as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function' && isFields(v.controller);

/**
 * Replaces the body's history by the compressor's view, in a copy of the request options (the
 * caller's body, list and messages are never changed). A body without a history to fold is sent as is.
 */
async function fold(endpoint: Endpoint, given: PostOptions | undefined, folding: Folding): Promise<{ options: PostOptions | undefined; call?: FoldedCall }> {
  const body = given?.body;
  if (!isFields(body)) return { options: given };
  // A Responses request with `previous_response_id` (or `conversation`) or a string `input` stops
  // here, recall included: the history it continues is kept by the server, so no summary (and no
  // recall note) of ours is in it to recall from, and an answered round could not be appended to it.
  const carried = endpoint.history(body);
  if (carried === undefined) return { options: given };
  const history = carried.slice();
  const { chatId, fingerprinted } = chatIdOfBody(body, history, folding.chatId);
  if (fingerprinted) folding.onFingerprint();
  const stream = given?.stream === true || body.stream === true;
  // Recall calls are answered on Chat Completions without legacy `functions` and on Responses
  // with an `input` list, streamed or not; elsewhere no recall tool or note is sent, so the
  // application never meets a recall call.
  const recallOn = folding.compressor.recall !== undefined;
  const dialect = RECALL_DIALECTS.get(endpoint);
  const answersRecall = recallOn && dialect !== undefined && !(endpoint === CHAT_COMPLETIONS && body.functions !== undefined);
  const extras: RequestExtras = { ...endpoint.extras(body), ...(recallOn && !answersRecall ? { recall: false } : {}) };
  const { messages, report, tools } = await folding.compressor.compress(chatId, history, extras);
  const model = typeof body.model === 'string' && body.model !== '' ? body.model : undefined;
  const options = { ...given, body: { ...body, [endpoint.listField]: messages, ...(tools ? { tools } : {}) } };
  return {
    options,
    call: { endpoint, chatId, history, report, model, stream, answered: false, ...(answersRecall && dialect ? { recall: { dialect, extras, body, options } } : {}) },
  };
}

/**
 * Tells the compressor the model answered: once per call, with the billed input tokens when the
 * response carries usage, and never for a response that says the model failed. A stream is told
 * once it has ended (its usage is read from the items as they pass). `ownUsage`, when given, is
 * the usage of the call that sent `call.report`'s view (after recall rounds, the response shows
 * every call's usage added up; the view is calibrated on its own).
 */
function answered<T>(data: T, call: FoldedCall, folding: Folding, client: object, ownUsage?: () => Fields | undefined): T {
  const billedOf = (response: Fields) => call.endpoint.billed(ownUsage ? { usage: ownUsage() } : response);
  const tell = (billedInputTokens: number | undefined) => {
    if (call.answered) return;
    call.answered = true;
    // Calibration is kept under the model the request named: the budget correction looks it up so.
    folding.compressor.afterResponse(call.chatId, call.history, call.report, { billedInputTokens, model: call.model });
  };
  if (call.stream && isStream(data)) {
    let billed: number | undefined;
    let failed = false;
    return watchedStream(data, client, {
      onItem: (item) => {
        const signal = isFields(item) ? call.endpoint.streamSignal(item) : {};
        billed = signal.billedInputTokens ?? billed;
        failed ||= signal.failed === true;
      },
      onEnd: () => {
        if (!failed) tell(ownUsage ? billedOf({}) : billed);
      },
    }) as T;
  }
  if (isFields(data) && !call.endpoint.failed(data)) tell(billedOf(data));
  return data;
}

/**
 * The `post` of a wrapped client: a call to a folded endpoint (`/chat/completions`, `/responses`)
 * sends the compressor's view of its history and reports the response to the compressor; every
 * other call is the client's own. It returns the SDK's own `APIPromise` (made by the client's
 * `post` and `_thenUnwrap`), so `.withResponse()`, `.asResponse()` and the SDK's helpers work.
 * A call that fails (HTTP error, connection, an error from `compress`) rejects as it would
 * without the wrapper and reports nothing.
 */
export function foldingPost(client: OpenAI, folding: Folding): Post {
  return function post<Rsp>(path: string, opts?: Parameters<Post>[1]) {
    const endpoint = endpointAt(path);
    if (endpoint === undefined) return client.post<Rsp>(path, opts);
    let call: FoldedCall | undefined;
    const folded = Promise.resolve(opts).then(async (given) => {
      const prepared = await fold(endpoint, given, folding);
      call = prepared.call;
      return prepared.options ?? {};
    });
    return client.post<Rsp>(path, folded)._thenUnwrap((data) => {
      if (!call) return data;
      const recall = call.recall;
      if (!recall) return answered(data, call, folding, client);
      // Recall calls are answered here and the model asked again: the application gets the last response.
      const first = call;
      const again = (view: RecallView) => ({ ...recall.options, body: roundRequest(recall.dialect, recall.body, view) });
      if (first.stream && isStream(data)) {
        // The last round's report and usage are what `afterResponse` is told, once the stream has ended.
        let last = first.report;
        let lastUsage: Fields | undefined;
        const streamed = recallStream(data, client, {
          compressor: folding.compressor,
          dialect: recall.dialect,
          chatId: first.chatId,
          history: first.history,
          extras: recall.extras,
          report: first.report,
          ask: async (view) => (await client.post(path, again(view))) as Stream<Fields>,
          onReport: (report, usage) => {
            last = report;
            lastUsage = usage;
          },
        });
        return answered(streamed, { ...first, get report() { return last; } }, folding, client, () => lastUsage) as unknown as Rsp;
      }
      return answerRecallRounds<unknown>(data, first.report, {
        compressor: folding.compressor,
        dialect: recall.dialect,
        chatId: first.chatId,
        history: first.history,
        extras: recall.extras,
        ask: (view) => client.post(path, again(view)),
        usage: (reply) => (isFields(reply) ? usageOf(reply) : undefined),
      }).then(({ reply, report, pending, earlierUsage }) => {
        const response = shownReply(recall.dialect, reply, pending);
        const own = isFields(reply) ? usageOf(reply) : undefined;
        // Every call is billed: the application is shown their usage added up.
        const whole = isFields(response) ? withEarlierUsage(response, earlierUsage) : response;
        return answered(whole as Rsp, { ...first, report }, folding, client, () => own);
      }) as unknown as Rsp;
    });
  };
}
