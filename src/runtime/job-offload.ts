import type { ChatState, StateStore } from '../store/state.js';
import type { BodyHistory } from './body-history.js';
import type { SummaryDoneEvent, SummaryJobContext, SummaryStaleEvent, SummaryStartEvent } from './summary-job.js';
import { runSummaryJob } from './summary-job.js';

/**
 * What a summary job worked out elsewhere: the state to commit on `baseVersion`, and the events
 * its start and its commit are reported with. The job that made it never wrote anything.
 */
export interface OffloadedFold {
  readonly start: SummaryStartEvent;
  /** The state to commit, but for its `coveredIds`: those are `coveredIds`, one string. */
  readonly next: Omit<ChatState, 'coveredIds'>;
  /**
   * Every id the summary covers, joined by line breaks (ids never hold one): one string is posted
   * between threads as a copy of its bytes, where 100k strings would each be rebuilt.
   */
  readonly coveredIds: string;
  readonly baseVersion: number;
  /** The done event, but for the ids: those the job added are `coveredIds` from `newlyFrom` on. */
  readonly done: Omit<SummaryDoneEvent, 'coveredIds' | 'newlyCovered'>;
  readonly newlyFrom: number;
}

/**
 * Where a compressor runs the CPU-heavy part of a summary job on a `BodyHistory` (a worker
 * thread): `fold` reads the history out of the bytes, plans and summarizes it on the chat's
 * `state` as the compressor would, and resolves with what to commit (undefined: nothing to fold).
 * The store, the lease and the one-job-per-chat rule stay with the compressor.
 */
export interface JobOffload {
  fold(chatId: string, history: BodyHistory, state: ChatState | undefined, signal: AbortSignal): Promise<OffloadedFold | undefined>;
}

/** Hooks of one offloaded job, as `runSummaryJob` takes them. */
type JobHooks = Pick<SummaryJobContext, 'onStart' | 'onDone' | 'onStale' | 'onCommitting'>;

/**
 * A summary job whose fold runs in `offload`: reads the chat's state from `store`, has the fold
 * made there, then commits it compare-and-set here, as `runSummaryJob` does (the same events, the
 * same abort check right before the commit). A lost race, an abort or a failure writes nothing.
 */
export async function runOffloadedJob(offload: JobOffload, store: StateStore, hooks: JobHooks, chatId: string, history: BodyHistory, signal: AbortSignal): Promise<void> {
  const state = await store.get(chatId);
  signal.throwIfAborted();
  const fold = await offload.fold(chatId, history, state, signal);
  if (fold === undefined) return;
  hooks.onStart?.(fold.start);
  const coveredIds = fold.coveredIds === '' ? [] : fold.coveredIds.split('\n');
  signal.throwIfAborted();
  hooks.onCommitting?.();
  if (!(await store.commit({ ...fold.next, coveredIds }, fold.baseVersion))) {
    hooks.onStale?.({ chatId, expectedVersion: fold.baseVersion } satisfies SummaryStaleEvent);
    return;
  }
  hooks.onDone?.({ ...fold.done, coveredIds, newlyCovered: coveredIds.slice(fold.newlyFrom) });
}

/**
 * The worker's side of `runOffloadedJob`: runs `runSummaryJob` on `state` against a store that
 * keeps the commit instead of writing it, and resolves with it (undefined when the job folded
 * nothing). `context` is the summary job's context without its store.
 */
export async function foldForOffload<M>(context: FoldContext, chatId: string, messages: readonly M[], state: ChatState | undefined, signal: AbortSignal): Promise<OffloadedFold | undefined> {
  let kept: { next: ChatState; baseVersion: number } | undefined;
  let start: SummaryStartEvent | undefined;
  let done: SummaryDoneEvent | undefined;
  const keeping: StateStore = {
    get: async () => state,
    commit: async (next, baseVersion) => {
      kept = { next, baseVersion };
      return true;
    },
    delete: async () => undefined,
    close: async () => undefined,
  };
  await runSummaryJob({ ...context, store: keeping, onStart: (e) => { start = e; }, onDone: (e) => { done = e; } }, chatId, messages, signal);
  if (kept === undefined || start === undefined || done === undefined) return undefined;
  const { coveredIds, ...next } = kept.next;
  const { coveredIds: _all, newlyCovered, ...event } = done;
  return { start, next, coveredIds: coveredIds.join('\n'), baseVersion: kept.baseVersion, done: event, newlyFrom: coveredIds.length - newlyCovered.length };
}

/** The part of a summary job's context `foldForOffload` takes: the compressor's summarizer and planning. */
export type FoldContext = Omit<SummaryJobContext, 'store' | 'onStart' | 'onDone' | 'onStale' | 'onCommitting' | 'onCovered'>;

/** The key under which a compressor lends its fold context (see `foldContextOf`). */
export const FOLD_CONTEXT = Symbol('ctxfold.foldContext');

/** A compressor that lends its summarizer and planning, so a worker folds exactly as it would. */
export interface LendsFoldContext {
  readonly [FOLD_CONTEXT]: () => FoldContext | undefined;
}

/** The fold context of a compressor made by `createCompressor` (undefined when it summarizes nothing). */
export function foldContextOf(compressor: object): FoldContext | undefined {
  const lend = (compressor as Partial<LendsFoldContext>)[FOLD_CONTEXT];
  return typeof lend === 'function' ? lend() : undefined;
}
