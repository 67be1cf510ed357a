import { existsSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { StoreError } from '../errors.js';
import type { BodyHistory } from '../runtime/body-history.js';
import type { JobOffload, OffloadedFold } from '../runtime/job-offload.js';
import type { ChatState } from '../store/state.js';
import { CHAT_ID_HEADER } from './chat-id.js';
import type { FoldAnswer, FoldTask, FoldThreadSettings, JobTask, StateAnswer } from './fold-thread-tasks.js';
import type { FoldRoute } from './routes.js';

/**
 * Request bodies from this many bytes on are folded in a fold thread (`foldThreadMinBytes`):
 * about 500 messages of chat. Under it a fold costs less than the hop to a thread and back (the
 * body's copy, the thread's parse of the whole body where the proxy's thread parses only what a
 * chat added, the answer's copy), and at most a few milliseconds of the proxy's thread.
 */
export const DEFAULT_FOLD_THREAD_MIN_BYTES = 256 * 1024;

/** Fold threads by default: one per core beyond the first (the proxy's own thread), at least one, at most four. */
export function defaultFoldThreads(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

/** A body folded in a thread, as the proxy forwards it. */
export type ThreadFold = Extract<FoldAnswer, { kind: 'folded' }>;

/** The proxy's fold threads (see fold-worker.ts). */
export interface FoldThreads {
  /** Bodies of this many bytes or more fold in a thread (`foldThreadMinBytes`). */
  readonly minBytes: number;
  /** True when a body of `bytes` bytes is folded in a thread (`minBytes` or more). */
  takes(bytes: number): boolean;
  /**
   * Folds a request body in a thread, reading the chat's state through `getState` on this
   * thread; undefined when this thread must read the body itself (see `FoldAnswer`). `raw` is
   * never changed (shared with the thread when it lies in a `SharedArrayBuffer`, else copied).
   */
  fold(route: FoldRoute, headers: IncomingHttpHeaders, tenant: string, raw: Uint8Array): Promise<ThreadFold | undefined>;
  /** Folds summary jobs in the threads (present when the proxy's summarizer can be rebuilt there: the built-in extractive one). */
  readonly offload?: JobOffload;
  /** Stops the threads (a task still running is ended). */
  close(): Promise<void>;
}

/** What `createFoldThreads` needs. */
export interface FoldThreadsOptions {
  readonly threads: number;
  readonly minBytes: number;
  readonly settings: FoldThreadSettings;
  /** Summary jobs fold in the threads too (the summarizer is the built-in extractive one). */
  readonly foldsJobs: boolean;
  /** Reads a chat's state for a thread (the proxy's store). */
  readonly getState: (chatId: string) => Promise<ChatState | undefined>;
  /** The thread's script; default fold-worker.js beside this file. */
  readonly workerFile?: string;
}

/**
 * `bytes` as a thread is handed them: bytes in a `SharedArrayBuffer` (the proxy gathers large
 * bodies in one, `readBody`) as they are, since posting them copies nothing; any others as a copy
 * in an ArrayBuffer of its own, transferred (the caller keeps its bytes).
 */
function forThread(bytes: Uint8Array): { bytes: Uint8Array; transfer: ArrayBuffer[] } {
  if (bytes.buffer instanceof SharedArrayBuffer) return { bytes, transfer: [] };
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return { bytes: copy, transfer: [copy.buffer] };
}

/** The script each thread runs, when it exists (it does in the built package; not when the sources run under a TypeScript loader). */
export function foldWorkerFile(): string | undefined {
  const file = fileURLToPath(new URL('./fold-worker.js', import.meta.url));
  return existsSync(file) ? file : undefined;
}

/**
 * Starts `threads` fold threads (piscina), each making its compressors from the proxy's options.
 * The body goes to a thread as bytes (shared, or a transferred copy), never as parsed objects; the chat's
 * state is read here and posted to the thread, which writes nothing. Undefined when the thread's
 * script is not there (`foldWorkerFile`).
 */
export function createFoldThreads(options: FoldThreadsOptions): FoldThreads | undefined {
  const filename = options.workerFile ?? foldWorkerFile();
  if (filename === undefined) return undefined;
  const piscina = new Piscina({
    filename,
    workerData: options.settings,
    minThreads: options.threads,
    maxThreads: options.threads,
    idleTimeout: Number.MAX_SAFE_INTEGER,
    atomics: 'async',
  });
  const chatHeaders = [options.settings.chatIdHeader, CHAT_ID_HEADER];

  const answerState = (port: MessageChannel['port1']) => {
    port.on('message', ({ chatId }: { chatId: string }) => {
      options.getState(chatId).then(
        (state) => port.postMessage({ state } satisfies StateAnswer),
        (error: unknown) => port.postMessage((StoreError.isInstance(error)
          ? { store: error.store, error: error.message.slice(error.store.length + 2) }
          : { store: 'store', error: error instanceof Error ? error.message : String(error) }) satisfies StateAnswer),
      );
    });
  };

  const offload: JobOffload = {
    fold(chatId: string, history: BodyHistory, state: ChatState | undefined, signal: AbortSignal): Promise<OffloadedFold | undefined> {
      const { bytes, transfer } = forThread(history.bytes);
      const task: JobTask = { bytes, route: history.where.route ?? '', model: history.where.model, chatId, ...(state === undefined ? {} : { state }) };
      return piscina.run(task, { name: 'job', transferList: transfer, signal });
    },
  };

  return {
    minBytes: options.minBytes,
    takes: (bytes) => bytes >= options.minBytes,
    async fold(route, headers, tenant, raw) {
      const { bytes, transfer } = forThread(raw);
      const { port1, port2 } = new MessageChannel();
      answerState(port1);
      const named: IncomingHttpHeaders = {};
      for (const name of chatHeaders) if (headers[name] !== undefined) named[name] = headers[name];
      const task: FoldTask = { bytes, route: route.name, headers: named, tenant, port: port2 };
      try {
        const answer = (await piscina.run(task, { name: 'fold', transferList: [...transfer, port2] })) as FoldAnswer;
        return answer.kind === 'folded' ? answer : undefined;
      } finally {
        port1.close();
      }
    },
    ...(options.foldsJobs ? { offload } : {}),
    close: () => piscina.destroy(),
  };
}
