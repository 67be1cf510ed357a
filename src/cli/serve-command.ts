import { InputError, StoreError } from '../errors.js';
import type { CliOptions } from './args.js';
import { CliError, EXIT } from './cli-error.js';
import { isServeWorker } from '../server/cluster.js';

/** The line printed on standard output once the proxy listens (tests and scripts read the URL from it). */
export const LISTENING_LINE = 'ctxfold serve listening on';

/**
 * `ctxfold serve`: starts the proxy with the flags' options, prints one line with the bound URL on
 * standard output, and on SIGINT or SIGTERM stops gracefully (no new connections, in-flight
 * requests finished, summary jobs drained, store closed), resolving with exit code 0. A second
 * signal during the stop exits at once (1). Bad flags or config are a `CliError` (exit 2).
 */
export async function runServe(options: CliOptions, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  if (options.upstream === undefined) {
    throw new CliError('serve needs --upstream URL: the base URL of the API to forward to, with its version (https://api.openai.com/v1)');
  }
  let upstreamUrl: URL | undefined;
  try {
    upstreamUrl = new URL(options.upstream);
  } catch {
    upstreamUrl = undefined;
  }
  if (upstreamUrl === undefined || (upstreamUrl.protocol !== 'http:' && upstreamUrl.protocol !== 'https:')) {
    throw new CliError(`--upstream must be an http:// or https:// base URL such as https://api.openai.com/v1, got ${JSON.stringify(options.upstream)}`);
  }
  let upstreamKey: string | undefined;
  if (options.upstreamKeyEnv !== undefined) {
    upstreamKey = env[options.upstreamKeyEnv];
    if (upstreamKey === undefined || upstreamKey.trim() === '') {
      throw new CliError(`--upstream-key-env ${options.upstreamKeyEnv}: that environment variable is not set or empty; export the upstream API key in it`);
    }
  }
  // Loaded here: the server and the tokenizer are needed by serve only.
  const [{ startServer, readConfigFile }, { summarizerOf }, { createTokenCounter }] = await Promise.all([
    import('../server/index.js'),
    import('./compress-command.js'),
    import('../tokens/counter.js'),
  ]);
  let server;
  try {
    const config = options.config !== undefined ? await readConfigFile(options.config) : undefined;
    // The extractive one is the server's own default (counting with --model), which fold threads rebuild.
    const summarizer = options.summarizer === 'none' ? null : options.summarizer === 'extractive' ? undefined : summarizerOf(options.summarizer, createTokenCounter({ model: options.model }), env);
    server = await startServer({
      upstream: options.upstream,
      port: options.port,
      host: options.host,
      maxContextTokens: options.maxContextTokens,
      compressionThresholdTokens: options.compressionThresholdTokens,
      keepFirst: options.keepFirst,
      keepLast: options.keepLast,
      keepLastYields: options.keepLastYields,
      lowWaterMark: options.lowWaterMark,
      toolOutputTrim: options.toolOutputTrim,
      repair: options.repair,
      tokenizerModel: options.model,
      config,
      store: options.store,
      recall: options.recall,
      ui: options.ui,
      summarizer,
      upstreamKey,
      tenantHeader: options.tenantHeader,
      chatIdHeader: options.chatIdHeader,
      maxBodyBytes: options.maxBodyBytes,
      bodyMemoryBytes: options.bodyMemoryBytes,
      upstreamTimeoutMs: options.upstreamTimeoutMs,
      upstreamKeepAliveMs: options.upstreamKeepAliveMs,
      maxQueuedJobs: options.maxQueuedJobs,
      foldThreads: options.foldThreads,
      foldThreadMinBytes: options.foldThreadMinBytes,
      workers: options.workers,
      logLevel: options.logLevel as never,
    });
  } catch (error) {
    // A bad option, or a store that cannot be opened (a missing package, an unwritable path): the user's to fix.
    if (InputError.isInstance(error) || StoreError.isInstance(error)) throw new CliError(error.message);
    const code = (error as { code?: unknown }).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      throw new CliError(`cannot listen on ${options.host ?? '127.0.0.1'}:${options.port ?? 8787} (${String(code)}): choose another --port or --host`);
    }
    throw error;
  }
  // Said once, by the process the user started (not by each --workers process).
  if (!isServeWorker()) process.stdout.write(`${LISTENING_LINE} ${server.url}\n`);

  const running = server;
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        process.stderr.write(`ctxfold: ${signal} again: exiting without waiting\n`);
        process.exit(1);
      }
      stopping = true;
      running.close().then(
        () => resolve(EXIT.ok),
        (error: unknown) => {
          process.stderr.write(`ctxfold: error while stopping: ${error instanceof Error ? error.message : String(error)}\n`);
          resolve(EXIT.internal);
        },
      ).finally(() => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
      });
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
