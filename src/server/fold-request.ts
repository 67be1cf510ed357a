import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { isFields, type Fields } from '../runtime/endpoints.js';
import { InputError } from '../errors.js';
import type { CompressResult } from '../runtime/compress.js';
import { fingerprintText } from '../runtime/fingerprints.js';
import { chatFromHeaders, chatOf } from './chat-id.js';
import type { CompressorPool } from './compressor-pool.js';
import { CLIENT_CLOSED, clientGoneSignal, forward, type ForwardResult } from './forward.js';
import { sendError } from './json-errors.js';
import type { ProxyMetrics } from './metrics.js';
import type { ResolvedServerOptions } from './options.js';
import type { BodyReuse } from './body-reuse.js';
import { BodyAbortedError, BodyTooLargeError, readBody } from './read-body.js';
import { logRepairs } from './repair-log.js';
import { forwardAnsweringRecall, proxyRecallDialect, type RecallExchange, type RecallExchangeResult } from './recall-exchange.js';
import { forwardStreamAnsweringRecall } from './stream-recall-exchange.js';
import type { FoldRoute } from './routes.js';
import { bodyPath, routeHistory } from './route-history.js';
import { tenantOf } from './tenant.js';
import type { UpstreamAgent } from './upstream-agent.js';
import type { UpstreamKey } from './upstream.js';
import { usageWatch, type UsageWatch } from './usage-watch.js';
import { viewBody } from './view-body.js';
import type { FoldThreads, ThreadFold } from './fold-threads.js';
import { bodyHistory } from '../runtime/body-history.js';

/** Bodies kept per tenant and route for requests that name no chat (their next body is read against the one it shares the most with). */
const UNNAMED_CHAT_BODIES = 8;

/** What every request handler of the proxy shares. */
export interface ProxyContext {
  readonly options: ResolvedServerOptions;
  readonly pool: CompressorPool;
  readonly metrics: ProxyMetrics;
  readonly logger: Logger;
  /** The connection pool towards the upstream. */
  readonly agent: UpstreamAgent;
  /** Reads request bodies, reusing what a chat's previous body parsed. */
  readonly bodies: BodyReuse;
  /** Fold threads for large bodies (see fold-threads.ts); absent: every body folds on this thread. */
  readonly threads?: FoldThreads;
}

/** The key the proxy adds for `route`, when it holds one: Anthropic's header on its route, a bearer token elsewhere. */
export function keyFor(options: ResolvedServerOptions, errors: FoldRoute['errors']): UpstreamKey | undefined {
  if (options.upstreamKey === undefined) return undefined;
  return { value: options.upstreamKey, header: errors === 'anthropic' ? 'x-api-key' : 'bearer' };
}


/**
 * Serves one request of a folding route: reads the body (at most `maxBodyBytes`), replaces its
 * history by the compressor's view for the caller's chat (scoped by tenant), forwards it with
 * every other field as it came (the client's own bytes when the view is the whole history),
 * relays the answer as it arrives, and once the whole answer has reached the client and did not
 * say the model failed, tells the compressor (`afterResponse`: calibration and the background
 * summary). A body without a history to fold (a Responses call continuing `previous_response_id`)
 * is forwarded as it came. A history of a type the route does not take (`messages` not a list),
 * or that ctxfold cannot read, is a 400 naming the field, and nothing goes upstream; any other
 * failure of the compressor forwards the request untouched (logged), so no request is lost to it.
 * What the compressor repaired in the history (an orphan result removed, ...) is logged at debug level.
 */
export async function serveFold(ctx: ProxyContext, route: FoldRoute, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const started = performance.now();
  const { options, logger, metrics } = ctx;
  const clientGone = clientGoneSignal(res);
  const done = (status: number, fields: Record<string, unknown>) => {
    metrics.request(route.name, status);
    logger.info({ route: route.name, status, ms: Math.round(performance.now() - started), ...fields }, 'request');
  };

  let raw: Buffer;
  try {
    raw = await readBody(req, options.maxBodyBytes, ctx.threads?.minBytes);
  } catch (error) {
    if (error instanceof BodyTooLargeError) {
      sendError(res, route.errors, { status: 413, message: error.message, code: 'ctxfold_body_too_large' }, { connection: 'close' });
      return done(413, { problem: 'body too large' });
    }
    if (error instanceof BodyAbortedError) {
      res.destroy();
      return done(CLIENT_CLOSED, { problem: error.message });
    }
    throw error;
  }
  const tenant = tenantOf(req.headers, { proxyHoldsKey: options.upstreamKey !== undefined, tenantHeader: options.tenantHeader });
  const base = { upstream: options.upstream, agent: ctx.agent, path: url.pathname, search: url.search, method: 'POST', key: keyFor(options, route.errors), timeoutMs: options.upstreamTimeoutMs, errors: route.errors, clientGone };
  type Report = CompressResult<unknown>['report'];
  let fold: { chatId: string; source: string; report: Report; compressorAfter: (facts: { billedInputTokens?: number }, last?: Report) => void; recall?: RecallExchange } | undefined;
  let outBody: Uint8Array = raw;
  let contentType: string | undefined;
  let model: string | undefined;
  let streamed = false;
  // A large body folds in a thread, as bytes: this thread, which serves every chat, never parses it.
  const threaded = ctx.threads?.takes(raw.byteLength) ? await foldInThread(ctx, route, req, raw, tenant) : undefined;
  if (threaded) {
    ({ fold, model } = threaded);
    if (threaded.body) {
      outBody = threaded.body;
      contentType = 'application/json';
    }
  } else {
  let body: unknown;
  try {
    // Keyed by tenant and the chat's header when sent: a chat's next body parses only what it
    // added. Without one, the tenant's last few bodies on this route are candidates.
    const named = chatFromHeaders(req.headers, options.chatIdHeader);
    body = ctx.bodies.parse(`${route.name}\n${tenant}\n${named ?? ''}`, route.endpoint.listField, raw, named === undefined ? UNNAMED_CHAT_BODIES : 1);
  } catch (error) {
    sendError(res, route.errors, { status: 400, message: `the request body is not valid JSON: ${(error as Error).message}`, code: 'ctxfold_invalid_json' });
    return done(400, { problem: 'invalid JSON' });
  }
  if (!isFields(body)) {
    sendError(res, route.errors, { status: 400, message: 'the request body must be a JSON object', code: 'ctxfold_invalid_json' });
    return done(400, { problem: 'body not an object' });
  }

  /** A history ctxfold cannot read: 400, the body field named when the error names one. */
  const refuse = (error: InputError) => {
    const param = bodyPath(route, error.path);
    const message = param === undefined ? error.message : `${param}: ${error.rule}`;
    sendError(res, route.errors, { status: 400, message: `ctxfold could not read this request: ${message}`, code: 'ctxfold_invalid_input', ...(param === undefined ? {} : { param }) });
    return done(400, { tenant, problem: message });
  };
  let history: readonly unknown[] | undefined;
  try {
    history = routeHistory(route, body);
  } catch (error) {
    if (InputError.isInstance(error)) return refuse(error);
    throw error;
  }
  if (history === undefined) {
    metrics.proxyOverhead(route.name, (performance.now() - started) / 1000);
    const result = await forward(req, res, { ...base, body: raw });
    if (result.upstreamSeconds !== undefined) metrics.upstreamLatency(route.name, result.upstreamSeconds);
    return done(result.status, { folded: false, complete: result.complete, problem: result.problem });
  }

  model = typeof body.model === 'string' && body.model !== '' ? body.model : undefined;
  streamed = body.stream === true;
  try {
    const chat = chatOf(req.headers, body, history, tenant, options.chatIdHeader);
    const { compressor } = ctx.pool.forModel(model);
    // Recall (--recall): offered, and answered here, on Chat Completions, Responses and Messages, streamed or not.
    const dialect = proxyRecallDialect(route, body, compressor);
    const extras = { ...route.endpoint.extras(body), ...(compressor.recall && !dialect ? { recall: false } : {}) };
    const { messages: view, report, tools } = await compressor.compress(chat.chatId, history as unknown[], extras);
    logRepairs(logger, route, tenant, chat.chatId, report.repaired);
    const out = viewBody(body, route.endpoint.listField, history, view, tools);
    if (out) {
      outBody = out;
      contentType = 'application/json';
    }
    fold = {
      chatId: chat.chatId,
      source: chat.source,
      report,
      compressorAfter: (facts, last = report) => compressor.afterResponse(chat.chatId, history, last, { billedInputTokens: facts.billedInputTokens, model }),
      ...(dialect && tools ? { recall: { compressor, dialect, route, chatId: chat.chatId, history, extras, body, report } } : {}),
    };
    metrics.tokens(route.name, report.tokensBefore, report.tokensAfter);
  } catch (error) {
    if (InputError.isInstance(error)) return refuse(error);
    // Nothing is lost to a failure of ctxfold itself: the request goes out as it came.
    logger.error({ route: route.name, tenant, err: { name: (error as Error)?.name, message: (error as Error)?.message } }, 'compress failed: forwarding the request untouched');
  }
  }
  metrics.proxyOverhead(route.name, (performance.now() - started) / 1000);

  let watch: UsageWatch | undefined;
  let recalled: RecallExchangeResult | undefined;
  const exchange = fold?.recall;
  const answering = streamed ? forwardStreamAnsweringRecall : forwardAnsweringRecall;
  const result: ForwardResult = exchange ? (recalled = await answering(req, res, { ...base, body: outBody, contentType }, exchange)) : await forward(req, res, {
    ...base,
    body: outBody,
    contentType,
    watch: (status, type) => {
      if (fold === undefined || status < 200 || status >= 300) return undefined;
      watch = usageWatch(route, type);
      return (chunk) => watch!.push(chunk);
    },
  });
  // One observation per upstream call: a recall exchange makes several for one request.
  for (const seconds of recalled ? recalled.upstreamCalls : result.upstreamSeconds !== undefined ? [result.upstreamSeconds] : []) metrics.upstreamLatency(route.name, seconds);
  const facts = recalled ? recalled.facts : result.complete && watch ? watch.end() : undefined;
  // Summaries follow answers the client received whole; a failed or cut answer schedules nothing.
  if (fold && facts && !facts.failed) {
    try {
      fold.compressorAfter(facts, recalled?.report);
    } catch (error) {
      logger.error({ route: route.name, tenant, err: { name: (error as Error)?.name, message: (error as Error)?.message } }, 'afterResponse failed: no summary scheduled for this answer');
    }
  }
  const report = fold?.report;
  done(result.status, {
    tenant,
    chat: fold ? fingerprintText(fold.chatId) : undefined,
    chatSource: fold?.source,
    model,
    folded: fold !== undefined,
    tokensBefore: report?.tokensBefore,
    tokensAfter: report?.tokensAfter,
    messagesBefore: report?.messagesBefore,
    messagesAfter: report?.messagesAfter,
    summaryApplied: report?.summary.applied,
    recallRounds: recalled?.rounds,
    billedInputTokens: facts?.billedInputTokens,
    upstreamMs: result.upstreamSeconds !== undefined ? Math.round(result.upstreamSeconds * 1000) : undefined,
    complete: result.complete,
    problem: result.problem,
  });
}

/**
 * Folds a large body in a fold thread: the chat, the report and the body to send, with what the
 * compressor does after the answer (its job on the body's bytes, folded in a thread too when the
 * threads fold jobs). Undefined when this thread must read the body itself: the thread said so
 * (not JSON, no history, a history ctxfold refuses), or failed (logged).
 */
async function foldInThread(ctx: ProxyContext, route: FoldRoute, req: IncomingMessage, raw: Buffer, tenant: string) {
  const { logger, metrics } = ctx;
  let answer: ThreadFold | undefined;
  try {
    answer = await ctx.threads!.fold(route, req.headers, tenant, raw);
  } catch (error) {
    logger.warn({ route: route.name, tenant, err: { name: (error as Error)?.name, message: (error as Error)?.message } }, 'fold thread failed: folding on the serving thread');
    return undefined;
  }
  if (answer === undefined) return undefined;
  const { chatId, source, model, report } = answer;
  for (const w of answer.warnings) logger.warn({ code: w.code, chat: fingerprintText(chatId) }, w.message);
  logRepairs(logger, route, tenant, chatId, report.repaired);
  metrics.tokens(route.name, report.tokensBefore, report.tokensAfter);
  const { compressor } = ctx.pool.forModel(model);
  // The job reads the history out of the body's bytes; with jobs folded here, out of a parse of them.
  const history = ctx.threads!.offload ? bodyHistory(raw, { route: route.name, model }) : undefined;
  // Without, only a plan that asks for a summary parses it here (a model-written summarizer's job).
  const compressorAfter = (facts: { billedInputTokens?: number }, last = report) => {
    compressor.afterResponse(chatId, history ?? (last.summarize ? parsedHistory(route, raw) : []), last, { billedInputTokens: facts.billedInputTokens, model });
  };
  return { model, body: answer.body, fold: { chatId, source, report, compressorAfter } };
}

/** The history of a body already read and found to carry one (a job folded on this thread). */
function parsedHistory(route: FoldRoute, raw: Buffer): readonly unknown[] {
  return routeHistory(route, JSON.parse(raw.toString('utf8')) as Fields) ?? [];
}
