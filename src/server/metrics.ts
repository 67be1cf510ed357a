import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Compressor } from '../runtime/compressor.js';

/** The proxy's metrics, on a registry of its own (never prom-client's global one). */
export interface ProxyMetrics {
  readonly registry: Registry;
  /** Counts one answered request. */
  request(route: string, status: number): void;
  /** Adds a folded request's token counts (the history as received, the view as sent). */
  tokens(route: string, before: number, after: number): void;
  /** Seconds from one upstream call to its response headers (a request with recall rounds makes several calls, each observed). */
  upstreamLatency(route: string, seconds: number): void;
  /** Seconds the proxy spent before forwarding (body read, parse, compress, serialize). */
  proxyOverhead(route: string, seconds: number): void;
  /** Subscribes to a compressor's summary and warning events. */
  watch(compressor: Compressor): void;
  /** The exposition text and its content type. */
  render(): Promise<{ readonly body: string; readonly contentType: string }>;
}

/** What the gauges read at scrape time. */
export interface MetricSources {
  /** Summary jobs waiting, running, triggers coalesced, and jobs refused on a full queue (over all compressors). */
  jobs(): { readonly waiting: number; readonly running: number; readonly coalesced: number; readonly backlogFull: number };
  /** Requests being served right now, the proxy's own `/metrics` and `/healthz` left out. */
  inFlight(): number;
  /** The body memory: bodies read, history items reused from a chat's last body, bytes held. */
  bodies(): { readonly bodies: number; readonly reusedItems: number; readonly bytes: number };
}

/**
 * Creates the metrics (names prefixed `ctxfold_`; see docs/proxy.md for the list):
 * requests by route and status, tokens before/after folding, summary jobs by outcome, summary
 * queue depth and running jobs, triggers that found their chat's job busy, store failures and
 * other warnings, upstream latency and the proxy's own time before forwarding, the body memory
 * (bytes held, items reused), plus Node's process metrics. Gauges are read when scraped.
 */
export function createMetrics(sources: MetricSources): ProxyMetrics {
  const registry = new Registry();
  const registers = [registry];
  collectDefaultMetrics({ register: registry, prefix: 'ctxfold_' });

  const requests = new Counter({ name: 'ctxfold_requests_total', help: 'Requests answered, by route and HTTP status.', labelNames: ['route', 'status'], registers });
  const tokensBefore = new Counter({ name: 'ctxfold_tokens_before_total', help: 'Tokens of the histories received (before folding), by route.', labelNames: ['route'], registers });
  const tokensAfter = new Counter({ name: 'ctxfold_tokens_after_total', help: 'Tokens of the views sent upstream (after folding), by route.', labelNames: ['route'], registers });
  const summaries = new Counter({ name: 'ctxfold_summaries_total', help: 'Background summary jobs by outcome: started, done, failed, stale (lost the compare-and-set to a newer summary), skipped (another process held the chat\'s lease, the chat\'s jobs kept failing, or the queue was full).', labelNames: ['outcome'], registers });
  for (const outcome of ['started', 'done', 'failed', 'stale', 'skipped']) summaries.inc({ outcome }, 0);
  const warnings = new Counter({ name: 'ctxfold_warnings_total', help: 'Compressor warnings by code (store-unavailable: a request was served without its stored summary because the store did not answer).', labelNames: ['code'], registers });
  warnings.inc({ code: 'store-unavailable' }, 0);
  new Gauge({
    name: 'ctxfold_summary_queue_depth', help: 'Summary jobs asked for and not started yet (waiting for a concurrency slot, or for their chat\'s running job).', registers,
    collect() { this.set(sources.jobs().waiting); },
  });
  new Gauge({
    name: 'ctxfold_summary_jobs_running', help: 'Summary jobs running now.', registers,
    collect() { this.set(sources.jobs().running); },
  });
  new Counter({
    name: 'ctxfold_summary_lock_contended_total', help: 'Summary triggers that found their chat\'s job already running or queued (the per-chat lock was held) and were folded into its one follow-up.', registers,
    collect() { this.reset(); this.inc(sources.jobs().coalesced); },
  });
  new Counter({
    name: 'ctxfold_summary_backlog_full_total', help: 'Summary jobs not queued because --max-queued-jobs jobs already waited for a slot (the request was served as always; the chat asks again on its next request).', registers,
    collect() { this.reset(); this.inc(sources.jobs().backlogFull); },
  });
  new Gauge({
    name: 'ctxfold_body_memory_bytes', help: 'Bytes of recent request bodies kept so a chat\'s next body parses only what it added (--body-memory-bytes bounds it).', registers,
    collect() { this.set(sources.bodies().bytes); },
  });
  new Counter({
    name: 'ctxfold_body_items_reused_total', help: 'History items taken from a chat\'s last body instead of being parsed again.', registers,
    collect() { this.reset(); this.inc(sources.bodies().reusedItems); },
  });
  new Gauge({
    name: 'ctxfold_requests_in_flight', help: 'Requests being served now (the proxy\'s own /metrics and /healthz not counted).', registers,
    collect() { this.set(sources.inFlight()); },
  });
  const buckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
  const upstream = new Histogram({ name: 'ctxfold_upstream_latency_seconds', help: 'Seconds from each call to the upstream to its response headers, by route (a request with recall rounds makes several calls).', labelNames: ['route'], buckets, registers });
  const overhead = new Histogram({
    name: 'ctxfold_proxy_overhead_seconds', help: 'Seconds the proxy spent on a request before forwarding it (read, parse, fold, serialize), by route.', labelNames: ['route'],
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1], registers,
  });

  return {
    registry,
    request: (route, status) => requests.inc({ route, status: String(status) }),
    tokens(route, before, after) {
      tokensBefore.inc({ route }, before);
      tokensAfter.inc({ route }, after);
    },
    upstreamLatency: (route, seconds) => upstream.observe({ route }, seconds),
    proxyOverhead: (route, seconds) => overhead.observe({ route }, seconds),
    watch(compressor) {
      compressor.on('summary:start', () => summaries.inc({ outcome: 'started' }));
      compressor.on('summary:done', () => summaries.inc({ outcome: 'done' }));
      compressor.on('summary:failed', () => summaries.inc({ outcome: 'failed' }));
      compressor.on('summary:stale', () => summaries.inc({ outcome: 'stale' }));
      compressor.on('summary:skipped', () => summaries.inc({ outcome: 'skipped' }));
      compressor.on('warning', (w) => warnings.inc({ code: w.code }));
    },
    async render() {
      return { body: await registry.metrics(), contentType: registry.contentType };
    },
  };
}
