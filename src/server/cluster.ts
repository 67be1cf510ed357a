import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { CtxfoldError } from '../errors.js';
import type { ResolvedServerOptions } from './options.js';

/**
 * `workers` (`--workers N`): the process that calls `startServer` forks N processes with
 * node:cluster, each running the same script again, whose own `startServer` serves the shared
 * port; the first process only starts, restarts and stops them. The chats stay consistent across
 * them because they share a store that coordinates them (`checkWorkers`: each chat's summary job
 * runs under its lease, in one process at a time).
 */

/** Set in the environment of the processes a ctxfold primary forks. */
const WORKER_ENV = 'CTXFOLD_SERVE_WORKER';

/** What a worker and its primary tell each other. */
type WorkerMessage =
  | { readonly ctxfold: 'listening'; readonly url: string; readonly port: number }
  | { readonly ctxfold: 'drain'; readonly id: number }
  | { readonly ctxfold: 'drained'; readonly id: number }
  | { readonly ctxfold: 'close' };

/** The running proxy, as its processes see it (`RunningServer`'s shape). */
export interface ServingProxy {
  readonly url: string;
  readonly port: number;
  drain(): Promise<void>;
  close(): Promise<void>;
}

/** True in a process forked by a ctxfold primary (it serves; it never forks). */
export function isServeWorker(): boolean {
  return process.env[WORKER_ENV] === '1' && cluster.isWorker;
}

const isMessage = (m: unknown): m is WorkerMessage => typeof m === 'object' && m !== null && typeof (m as { ctxfold?: unknown }).ctxfold === 'string';

/** In a forked process: tells the primary where it listens, and drains or closes when the primary asks. */
export function answerPrimary(running: ServingProxy): void {
  process.send?.({ ctxfold: 'listening', url: running.url, port: running.port } satisfies WorkerMessage);
  process.on('message', (message: unknown) => {
    if (!isMessage(message)) return;
    if (message.ctxfold === 'drain') {
      const id = message.id;
      void running.drain().finally(() => process.send?.({ ctxfold: 'drained', id } satisfies WorkerMessage));
    } else if (message.ctxfold === 'close') {
      void running.close().finally(() => process.exit(0));
    }
  });
}

/**
 * Forks `options.workers` processes serving the port and resolves once every one listens; rejects
 * (having stopped them) when one exits first (a port taken, a store it cannot open: its own error
 * is on its standard error). A process that exits later is forked again. `close` asks each to stop
 * gracefully (as `RunningServer.close`) and waits for their exits.
 */
export async function startWorkers(options: ResolvedServerOptions, logger: Logger): Promise<ServingProxy> {
  let closing = false;
  const live = new Set<Worker>();
  let drains = 0;

  const fork = (): Promise<{ url: string; port: number }> => new Promise((resolve, reject) => {
    const worker = cluster.fork({ [WORKER_ENV]: '1' });
    live.add(worker);
    let listening = false;
    worker.on('message', (message: unknown) => {
      if (isMessage(message) && message.ctxfold === 'listening') {
        listening = true;
        resolve({ url: message.url, port: message.port });
      }
    });
    worker.once('exit', (code, signal) => {
      live.delete(worker);
      if (!listening) {
        reject(new CtxfoldError(`a --workers process exited before it listened (${signal ?? `code ${code}`}); its error is above`, { code: 'CTXFOLD_INTERNAL' }));
        return;
      }
      if (closing) return;
      logger.warn({ pid: worker.process.pid, code, signal }, 'a worker process exited: starting another');
      fork().catch((error: unknown) => logger.error({ err: { message: (error as Error).message } }, 'the worker process started in its place failed'));
    });
  });

  const stopAll = async (): Promise<void> => {
    closing = true;
    const exits = [...live].map((w) => new Promise<void>((resolve) => {
      if (w.isDead()) return resolve();
      w.once('exit', () => resolve());
      w.send({ ctxfold: 'close' } satisfies WorkerMessage);
    }));
    await Promise.all(exits);
  };

  let first: { url: string; port: number };
  try {
    [first] = await Promise.all(Array.from({ length: options.workers }, fork));
  } catch (error) {
    await stopAll();
    throw error;
  }
  logger.info({ url: first.url, workers: options.workers }, 'listening with worker processes');
  let closed: Promise<void> | undefined;
  return {
    url: first.url,
    port: first.port,
    async drain() {
      const id = ++drains;
      await Promise.all([...live].map((w) => new Promise<void>((resolve) => {
        const onMessage = (message: unknown) => {
          if (isMessage(message) && message.ctxfold === 'drained' && message.id === id) done();
        };
        const done = () => {
          w.off('message', onMessage);
          w.off('exit', done);
          resolve();
        };
        w.on('message', onMessage);
        w.once('exit', done);
        w.send({ ctxfold: 'drain', id } satisfies WorkerMessage);
      })));
    },
    close() {
      closed ??= stopAll();
      return closed;
    },
  };
}
