import type { IncomingHttpHeaders } from 'node:http';
import type { MessagePort } from 'node:worker_threads';
import type { CompressResult } from '../runtime/compress.js';
import type { ChatState } from '../store/state.js';
import type { ChatIdSource } from './chat-id.js';
import type { PoolOptions } from './compressor-pool.js';

/**
 * What the proxy's fold threads are told and answer (fold-threads.ts on the proxy's thread,
 * fold-worker.ts in each thread). Plain data only: everything here is posted between threads.
 */

/** How each thread makes its compressors: the proxy's own pool options, without what cannot be posted. */
export interface FoldThreadSettings {
  readonly pool: Omit<PoolOptions, 'store' | 'summarizer' | 'onCreate' | 'recall' | 'offload'>;
  /** The proxy's summarizer, as a thread rebuilds it: the default one (`defaultSummarizer`), or none (a summarizer without `shorten`). */
  readonly summarizer: 'extractive' | 'none';
  readonly chatIdHeader: string;
}

/** One request body to fold: the thread reads it, asks `port` for the chat's state, and folds it. */
export interface FoldTask {
  /** The body as it came (a copy: the proxy keeps its own). */
  readonly bytes: Uint8Array;
  /** The route's name (`chat.completions`, `responses`, `messages`). */
  readonly route: string;
  /** The headers that may name the chat. */
  readonly headers: IncomingHttpHeaders;
  readonly tenant: string;
  /** Answers `{ chatId }` with `StateAnswer`. */
  readonly port: MessagePort;
}

/** The proxy's answer to a thread asking for a chat's state. */
export type StateAnswer = { readonly state: ChatState | undefined } | { readonly store: string; readonly error: string };

/** A warning a thread's compressor raised while folding, for the proxy to log. */
export interface ThreadWarning {
  readonly code: string;
  readonly message: string;
}

/**
 * A fold task's answer: `main` when the proxy's thread must read the body itself (not JSON, not
 * an object, no history to fold, one ctxfold refuses: its errors are said there, as always);
 * else the chat, the report and the body to send (undefined: the body as it came).
 */
export type FoldAnswer =
  | { readonly kind: 'main' }
  | {
    readonly kind: 'folded';
    readonly chatId: string;
    readonly source: ChatIdSource;
    readonly model?: string;
    readonly report: ThreadReport;
    readonly body?: Uint8Array;
    readonly warnings: readonly ThreadWarning[];
  };

/** One background fold: the thread reads the history out of the body and folds it on `state`. */
export interface JobTask {
  readonly bytes: Uint8Array;
  readonly route: string;
  readonly model?: string;
  readonly chatId: string;
  readonly state?: ChatState;
}

/**
 * The report as a fold thread posts it: whole but for the list of every message left out
 * (`dropped`, empty) and the ids of those to summarize (`summarize.ids`, empty), which the serving
 * thread never reads (its logs, metrics and `afterResponse` use the counts and ranges) and which,
 * at 100k messages, are megabytes to copy and rebuild there.
 */
export type ThreadReport = CompressResult<unknown>['report'];

/** `report` as a thread posts it (`ThreadReport`); `dropped`, computed when first read, is never computed here. */
export function threadReport(report: CompressResult<unknown>['report']): ThreadReport {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(report)) if (key !== 'dropped') out[key] = (report as unknown as Record<string, unknown>)[key];
  out.dropped = [];
  if (report.summarize) out.summarize = { ...report.summarize, ids: [] };
  return out as unknown as ThreadReport;
}
