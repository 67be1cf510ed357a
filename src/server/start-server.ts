import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { defaultSummarizer } from './default-summarizer.js';
import type { StateStore } from '../store/state.js';
import { createCompressorPool, type CompressorPool } from './compressor-pool.js';
import { fingerprintText } from '../runtime/fingerprints.js';
import { serveFold, keyFor, type ProxyContext } from './fold-request.js';
import { clientGoneSignal, forward } from './forward.js';
import { sendError } from './json-errors.js';
import { createLogger } from './logger.js';
import { createMetrics } from './metrics.js';
import { openStore } from './open-store.js';
import { resolveServerOptions, type ServerOptions } from './options.js';
import { ROUTES, routeFor, servedRoutes, type Route } from './routes.js';
import { ChatActivity } from './chat-activity.js';
import { serveChat } from './chat-route.js';
import { serveChatList } from './chats-route.js';
import type { ChatSources } from './chat-json.js';
import { serveUi, uiPage } from './ui-page.js';
import { createBodyReuse } from './body-reuse.js';
import { InFlight } from './in-flight.js';
import { createUpstreamAgent } from './upstream-agent.js';
import { startFoldThreads } from './start-fold-threads.js';
import { answerPrimary, isServeWorker, startWorkers } from './cluster.js';
import type { FoldThreadSettings } from './fold-thread-tasks.js';

/** A running proxy. */
export interface RunningServer {
  /** `http://HOST:PORT`: clients use `${url}/v1` as their base URL. */
  readonly url: string;
  /** The port it listens on (the one picked, for port 0). */
  readonly port: number;
  /** Waits until no summary job runs or waits (for tests and batch use). */
  drain(): Promise<void>;
  /**
   * Graceful stop: stops accepting connections, lets in-flight requests finish (cutting those
   * still open after `shutdownGraceMs`), then lets summary jobs finish (aborting those still
   * running after the same grace), then closes the store. Idempotent.
   */
  close(): Promise<void>;
}

/** The paths of the proxy's own probes: served, but not counted in `ctxfold_requests_in_flight`. */
const OWN_PROBES = new Set(ROUTES.filter((r) => r.kind === 'healthz' || r.kind === 'metrics').map((r) => r.path));

function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/**
 * Starts the OpenAI-compatible proxy (Node's own `http` server and client, a keep-alive pool upstream):
 * `POST /v1/chat/completions`, `/v1/responses` and `/v1/messages` have their history folded to
 * the model's window, `GET /v1/models` is passed through, `GET /healthz`, `GET /metrics` and the
 * caller's chats (`GET /v1/ctxfold/chats`, `GET /v1/ctxfold/chats/:id`; `GET /ui` with the `ui`
 * option) are its own, anything else is a 404 in the OpenAI error shape. Resolves once it listens; rejects
 * (having opened nothing that stays open) when an option is wrong or the port is taken.
 */
export async function startServer(given: ServerOptions): Promise<RunningServer> {
  const options = resolveServerOptions(given);
  const logger = options.logger ?? createLogger(options.logLevel, options.logDestination);
  // `workers`: this process forks the ones that serve (each runs this script, and so this call, again).
  if (options.workers > 1 && !isServeWorker()) return startWorkers(options, logger);
  const inFlight = new InFlight();
  const opened = typeof options.store === 'string' ? await openStore(options.store) : { store: options.store };
  const store: StateStore = opened.store;
  if (opened.warning !== undefined) logger.warn({ store: 'redis' }, opened.warning);
  // The gauges read the pool when scraped, which is never before it exists.
  const bodies = createBodyReuse({ maxBytes: options.bodyMemoryBytes });
  // What every compressor plans with, in this thread and in the fold threads alike.
  const planning: FoldThreadSettings['pool'] = {
    config: options.config,
    maxContextTokens: options.maxContextTokens,
    compressionThresholdTokens: options.compressionThresholdTokens,
    keepFirst: options.keepFirst,
    keepLast: options.keepLast,
    keepLastYields: options.keepLastYields,
    lowWaterMark: options.lowWaterMark,
    toolOutputTrim: options.toolOutputTrim,
    tokenizerModel: options.tokenizerModel,
    repair: options.repair,
  };
  const threads = startFoldThreads(options, planning, store, logger);
  const activity = new ChatActivity();
  const metrics = createMetrics({ jobs: () => pool.jobs(), inFlight: () => inFlight.served, bodies: () => bodies.stats() });
  const pool: CompressorPool = createCompressorPool({
    ...planning,
    store,
    summarizer: options.summarizer === undefined ? defaultSummarizer(options.tokenizerModel) : options.summarizer,
    concurrency: options.concurrency,
    jobTimeoutMs: options.jobTimeoutMs,
    maxQueuedJobs: options.maxQueuedJobs,
    recall: options.recall,
    offload: threads?.offload,
    onCreate: (compressor, limits) => {
      metrics.watch(compressor);
      activity.watch(compressor);
      compressor.on('summary:failed', (e) => logger.warn({ chat: fingerprintText(e.chatId), err: { message: e.error instanceof Error ? e.error.message : String(e.error) } }, 'summary job failed'));
      compressor.on('warning', (w) => logger.warn({ code: w.code, chat: w.chatId === undefined ? undefined : fingerprintText(w.chatId) }, w.message));
      logger.debug({ maxContextTokens: limits.maxContextTokens, source: limits.source }, 'compressor made for a new window');
    },
  });
  try {
    // A wrong compressor option fails here, before anything listens.
    pool.forModel(undefined);
  } catch (error) {
    await threads?.close();
    await store.close();
    throw error;
  }
  const agent = createUpstreamAgent(options.upstream, options.upstreamKeepAliveMs);
  const ctx: ProxyContext = { options, pool, metrics, logger, agent, bodies, threads };
  const chats: ChatSources = {
    store, activity, rule: { proxyHoldsKey: options.upstreamKey !== undefined, tenantHeader: options.tenantHeader },
    jobState: (chatId) => pool.all().map((c) => c.jobState(chatId)).reduce((a, b) => (a === 'running' || b === 'running' ? 'running' : a === 'queued' || b === 'queued' ? 'queued' : 'idle'), 'idle'),
  };
  const routes = servedRoutes(options);
  const page = options.ui === true ? uiPage(options.tenantHeader) : '';
  let closing = false;

  const own = async (route: Route, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    switch (route.kind) {
      case 'fold':
        return serveFold(ctx, route, req, res, url);
      case 'pass': {
        const result = await forward(req, res, {
          upstream: options.upstream, agent, path: url.pathname, search: url.search, method: 'GET', key: keyFor(options, route.errors),
          timeoutMs: options.upstreamTimeoutMs, errors: route.errors, clientGone: clientGoneSignal(res),
        });
        if (result.upstreamSeconds !== undefined) metrics.upstreamLatency(route.name, result.upstreamSeconds);
        metrics.request(route.name, result.status);
        logger.info({ route: route.name, status: result.status, complete: result.complete, problem: result.problem }, 'request');
        return;
      }
      case 'healthz':
        sendJson(res, closing ? 503 : 200, { status: closing ? 'shutting down' : 'ok' });
        return metrics.request(route.name, closing ? 503 : 200);
      case 'metrics': {
        const { body, contentType } = await metrics.render();
        res.writeHead(200, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
        res.end(body);
        return metrics.request(route.name, 200);
      }
      case 'chats':
        return metrics.request(route.name, await serveChatList(chats, logger, req, res));
      case 'chat':
        return metrics.request(route.name, await serveChat(chats, logger, req, res, url));
      case 'ui':
        return metrics.request(route.name, serveUi(res, page));
    }
  };

  // Idle keep-alive connections stay open longer than a load balancer's usual 60 s, so it never
  // sends a request on a connection the proxy is closing at that moment.
  const server = createServer({ noDelay: true, keepAliveTimeout: 65_000 }, (req, res) => {
    const own = OWN_PROBES.has((req.url ?? '').split('?', 1)[0]);
    const finished = inFlight.enter(res, own);
    void handle(req, res).catch((error: unknown) => {
      logger.error({ err: { name: (error as Error)?.name, message: (error as Error)?.message } }, 'internal error');
      sendError(res, 'openai', { status: 500, message: 'internal error in the ctxfold proxy', code: 'ctxfold_internal' });
    }).finally(finished);
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://proxy.invalid');
    const route = routeFor(url.pathname, routes);
    const shape = route?.errors ?? (url.pathname.startsWith('/v1/messages') ? 'anthropic' : 'openai');
    if (closing) res.setHeader('connection', 'close');
    if (route === undefined) {
      req.resume();
      sendError(res, shape, { status: 404, message: `no route ${req.method} ${url.pathname}: the proxy serves POST /v1/chat/completions, POST /v1/responses, POST /v1/messages, GET /v1/models, GET /healthz, GET /metrics, GET /v1/ctxfold/chats`, code: 'ctxfold_not_found' });
      return metrics.request('not_found', 404);
    }
    if (req.method !== route.method) {
      req.resume();
      sendError(res, shape, { status: 405, message: `${url.pathname} takes ${route.method}, got ${req.method}`, code: 'ctxfold_method_not_allowed' }, { allow: route.method });
      return metrics.request(route.name, 405);
    }
    if (closing && route.kind !== 'healthz' && route.kind !== 'metrics') {
      req.resume();
      sendError(res, shape, { status: 503, message: 'the proxy is shutting down; retry on another instance', code: 'ctxfold_shutting_down' });
      return metrics.request(route.name, 503);
    }
    await own(route, req, res, url);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch(async (error: unknown) => {
    agent.destroy();
    await pool.close(0);
    await threads?.close();
    throw error;
  });
  server.on('error', (error) => logger.error({ err: { message: error.message } }, 'server error'));
  const address = server.address() as AddressInfo;
  const hostForUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${hostForUrl}:${address.port}`;
  logger.info({ url, upstream: options.upstream.origin, store: typeof options.store === 'string' ? options.store.replace(/\/\/[^@/]*@/, '//***@') : 'custom' }, 'listening');

  let closed: Promise<void> | undefined;
  const running: RunningServer = {
    url,
    port: address.port,
    drain: async () => {
      for (const c of pool.all()) await c.drain().catch(() => undefined);
    },
    close() {
      closed ??= (async () => {
        closing = true;
        logger.info({ inFlight: inFlight.count }, 'shutting down: no new connections, finishing in-flight requests');
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        inFlight.onIdleConnection(() => server.closeIdleConnections());
        if (!(await inFlight.idle(options.shutdownGraceMs))) logger.warn({ inFlight: inFlight.count }, 'shutdown grace over: cutting the requests still open');
        // Nothing in flight now (or past the grace): the connections left carry no request being
        // answered, such as one a client's pool opened and never used (Node does not count it
        // idle, and would wait for its 60 s header timeout).
        server.closeAllConnections();
        await stopped;
        agent.destroy();
        const jobs = pool.jobs();
        logger.info({ waiting: jobs.waiting, running: jobs.running }, 'draining summary jobs');
        const ended = await pool.close(options.shutdownGraceMs);
        await threads?.close();
        const { running, waiting } = ended.abandoned;
        logger.info(
          { finished: ended.finished, failed: ended.failed, abandonedRunning: running, abandonedWaiting: waiting },
          `summary jobs at shutdown: ${ended.finished} finished${ended.failed > 0 ? ` (${ended.failed} failed)` : ''}, ${running + waiting} abandoned (${running} running, ${waiting} waiting)${running + waiting > 0 ? ': their chats keep the summary they had' : ''}`,
        );
        logger.info('stopped');
      })();
      return closed;
    },
  };
  if (isServeWorker()) answerPrimary(running);
  return running;
}
