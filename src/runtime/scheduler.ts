import PQueue from 'p-queue';
import { CtxfoldError, InputError, type CtxfoldErrorCode } from '../errors.js';
import { defaultMaxQueuedJobs } from './queue-bound.js';

/**
 * The work a scheduled job does for one chat; it must stop when `signal` aborts. A job that
 * commits calls `control.committing()` right after its last check of `signal`, in the same
 * synchronous step as the commit call: from then on `close()` lets it finish (for at most
 * `CLOSE_COMMIT_WAIT_MS`) instead of abandoning it.
 */
export type ChatJob<P> = (chatId: string, payload: P, signal: AbortSignal, control: JobControl) => Promise<void>;

/** What a running job tells its scheduler. */
export interface JobControl {
  /** The job passed its last abort check and is writing its result: it is no longer abandoned at close. */
  committing(): void;
}

/**
 * How long `close()` lets running jobs finish when no grace is given: long enough for a summary
 * call already answered to be written, short enough that a stop under a process manager's
 * usual time limit (ten seconds before the kill) never waits on a summarizer.
 */
export const DEFAULT_CLOSE_GRACE_MS = 5_000;

/**
 * After the grace, how long `close()` still waits for jobs that were writing their result when it
 * ran out (a store round trip); jobs still writing then are left to the store.
 */
export const CLOSE_COMMIT_WAIT_MS = 1_000;

/** Longest grace kept (about 24.8 days): `setTimeout` fires at once on a longer delay, so a longer grace (or Infinity) is this one. */
const MAX_GRACE_MS = 2 ** 31 - 1;

/** Scheduler settings. */
export interface SchedulerOptions {
  /** Jobs running at once across all chats (p-queue). Default 2. */
  readonly concurrency?: number;
  /** A job is aborted after this long and counts as failed. Default 120 s. */
  readonly jobTimeoutMs?: number;
  /**
   * Jobs waiting for a concurrency slot, at most: a trigger that would queue one more is refused
   * (`'backlog-full'`). Default `defaultMaxQueuedJobs(concurrency)`; 0 queues none (a job runs
   * only on a free slot).
   */
  readonly maxQueuedJobs?: number;
}

/**
 * How a trigger was taken: a new job started (running, or queued for a slot), folded into the one
 * running for that chat, passed over because the chat's last jobs failed (`backoff`, see
 * `ChatScheduler`), or refused because `maxQueuedJobs` jobs were already queued (`backlog-full`).
 */
export type TriggerOutcome = 'started' | 'coalesced' | 'closed' | 'backoff' | 'backlog-full';

/**
 * Triggers passed over after `failures` jobs of a chat failed in a row: none after the first
 * failure (the next trigger retries at once), then 1, 3, 7, then `MAX_TRIGGERS_PASSED_OVER` (15):
 * a chat failing for good is tried once in 16 triggers, and one whose trouble passes resumes soon.
 */
export function triggersPassedOver(failures: number): number {
  return failures <= 1 ? 0 : Math.min(MAX_TRIGGERS_PASSED_OVER, 2 ** (failures - 1) - 1);
}

/** Most triggers passed over between two attempts on a chat whose jobs keep failing. */
export const MAX_TRIGGERS_PASSED_OVER = 15;

/** Most chats whose failures are remembered at once; the ones failing longest ago are forgotten first. */
const MAX_FAILING_CHATS = 10_000;

/** What the scheduler tells its owner about each job. */
export interface SchedulerHooks {
  /** A job failed, timed out or was aborted; the chat's state is whatever it was before. */
  readonly onError?: (chatId: string, error: unknown) => void;
  /**
   * `close()` gave up a job: `running`, aborted at the grace's end before it began to commit
   * (nothing of it is ever committed); `waiting`, queued or a chat's follow-up, never started.
   */
  readonly onAbandoned?: (chatId: string, stage: 'running' | 'waiting') => void;
  /** A job was still writing its result when `close()` stopped waiting for it: whether it lands is the store's. */
  readonly onUnsettled?: (chatId: string) => void;
  /** A trigger was passed over: the chat's last `failures` jobs failed in a row (`triggersPassedOver`). */
  readonly onBackoff?: (chatId: string, failures: number) => void;
  /**
   * A job was not queued: `queued` jobs (the bound) were already waiting for a slot. Either a new
   * trigger, or a chat's follow-up whose turn came while the queue was full; the chat's next
   * trigger asks again.
   */
  readonly onBacklogFull?: (chatId: string, queued: number) => void;
  /**
   * Whether a failure counts toward the chat's backoff. Default: every failure. The compressor
   * leaves out store failures: those are the store's, not the chat's, and a job is retried at once
   * when the store is back.
   */
  readonly countsAsFailing?: (error: unknown) => boolean;
}

/** A chat whose last jobs failed: how many in a row, and how many triggers are still to pass over. */
interface Failing {
  failures: number;
  passOver: number;
}

/** A job whose work is running: its controller, and whether it began to commit. */
interface Active {
  readonly chatId: string;
  readonly controller: AbortController;
  committing: boolean;
  /** Aborted by `close()` (not by its time limit). */
  abandoned: boolean;
  /** Still writing when `close()` stopped waiting: reported then (`onUnsettled`), released from the scheduler. */
  unsettled: boolean;
}

/** Why `close()` aborted a job; also what a job refused at close is thrown with. */
class AbandonedJobError extends CtxfoldError {
  static override readonly kind: string = 'AbandonedJobError';
  static override readonly code: CtxfoldErrorCode = 'CTXFOLD_JOB_ABANDONED';
  constructor(readonly stage: 'running' | 'waiting') {
    super(stage === 'running' ? 'the compressor closed: this summary job was abandoned and commits nothing' : 'the compressor closed before this summary job started');
  }
}

/** A job `close()` stopped waiting for while it wrote its result; already reported, so no failure either. */
class UnsettledJobError extends CtxfoldError {
  static override readonly kind: string = 'UnsettledJobError';
  static override readonly code: CtxfoldErrorCode = 'CTXFOLD_JOB_UNSETTLED';
  constructor() {
    super('the compressor closed while this summary job was writing its result; whether it landed is up to the store');
  }
}

/** Resolves true when `work` settles within `ms`, false when the time ran out first. */
async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<false>((resolve) => { timer = setTimeout(() => resolve(false), ms); });
  try {
    return await Promise.race([work.then(() => true, () => true), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** A chat with a job running or queued; its presence in the map is the chat's lock. */
interface ChatSlot<P> {
  /** The newest payload that arrived while a job ran: at most one follow-up per chat. */
  next?: P;
}

/** A job past its time limit: what its signal is aborted with, and its failure. */
class JobTimeoutError extends CtxfoldError {
  static override readonly kind: string = 'JobTimeoutError';
  static override readonly code: CtxfoldErrorCode = 'CTXFOLD_JOB_TIMEOUT';
  constructor(readonly timeoutMs: number) {
    super(`summary job timed out after ${timeoutMs} ms (jobTimeoutMs)`);
  }
}

/**
 * Runs background jobs so that one chat never has two at once. A chat is taken by putting its slot
 * in the map in the same synchronous step as the check (JavaScript runs one step at a time), so two
 * quick triggers can never both start a job; a trigger
 * that finds the chat busy replaces the queued follow-up (newest history wins) and is run by the
 * job already holding the lock. Jobs of different chats share a global concurrency limit, are
 * time-limited, and are abandoned by `close()` once its grace is over. A chat whose jobs keep failing (a summarizer that
 * refuses its history every time, a message it cannot read) is tried less and less often: after
 * `n` failures in a row, `triggersPassedOver(n)` triggers are passed over before the next attempt,
 * and one job that succeeds clears the count. A failure leaves the chat's state as it was, so
 * nothing is lost by waiting; what is saved is a failing, possibly paid, call per request.
 *
 * The queue is bounded: at most `maxQueuedJobs` jobs wait for a slot at any time (`queued`). When
 * it is full, the newest trigger is refused rather than an older job dropped: the jobs queued
 * first have waited longest and are nearest to running, and a refused chat loses nothing (its
 * view is served as always, and its next request triggers again). A trigger on a busy chat is
 * still folded into that chat's follow-up, which takes no queue place until its turn; if the
 * queue is full at that moment (new triggers arrived while the chat's job ended), the follow-up
 * is refused the same way.
 */
export class ChatScheduler<P> {
  private readonly slots = new Map<string, ChatSlot<P>>();
  private readonly failing = new Map<string, Failing>();
  private readonly queue: PQueue;
  private readonly running = new Set<Promise<void>>();
  private readonly active = new Set<Active>();
  private readonly timeoutMs: number;
  private readonly concurrency: number;
  private readonly maxQueued: number;
  /** Jobs handed to the queue whose work has not begun (waiting for a slot). */
  private waitingForSlot = 0;
  /** The most jobs ever waiting for a slot at once. */
  private waitingPeak = 0;
  private closed = false;
  /** Set when the grace ran out: queued jobs are refused from then on. */
  private abandoning = false;

  constructor(private readonly job: ChatJob<P>, options: SchedulerOptions = {}, private readonly hooks: SchedulerHooks = {}) {
    const concurrency = options.concurrency ?? 2;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new InputError('options.concurrency', `must be an integer >= 1, got ${concurrency}`);
    this.timeoutMs = options.jobTimeoutMs ?? 120_000;
    if (!(this.timeoutMs > 0)) throw new InputError('options.jobTimeoutMs', `must be > 0, got ${this.timeoutMs}`);
    this.concurrency = concurrency;
    this.maxQueued = options.maxQueuedJobs ?? defaultMaxQueuedJobs(concurrency);
    if (!Number.isSafeInteger(this.maxQueued) || this.maxQueued < 0) throw new InputError('options.maxQueuedJobs', `must be an integer >= 0, got ${this.maxQueued}`);
    this.queue = new PQueue({ concurrency });
  }

  /** Jobs waiting for a concurrency slot now; never more than `maxQueuedJobs`. */
  get queued(): number {
    return this.waitingForSlot;
  }

  /** The most jobs that waited for a slot at once, since creation. */
  get queuedPeak(): number {
    return this.waitingPeak;
  }

  /** The bound on `queued` (`maxQueuedJobs`, or its default). */
  get maxQueuedJobs(): number {
    return this.maxQueued;
  }

  /** True when a job handed to the queue now would wait (no slot free), and `maxQueuedJobs` already do. */
  private full(): boolean {
    return this.waitingForSlot >= this.maxQueued && (this.waitingForSlot > 0 || this.queue.pending >= this.concurrency);
  }

  /** Asks for a job on `chatId` with `payload`. Never waits for the job. */
  trigger(chatId: string, payload: P): TriggerOutcome {
    if (this.closed) return 'closed';
    const busy = this.slots.get(chatId);
    if (busy) {
      busy.next = payload;
      return 'coalesced';
    }
    if (this.passOver(chatId)) return 'backoff';
    if (this.full()) {
      this.hooks.onBacklogFull?.(chatId, this.waitingForSlot);
      return 'backlog-full';
    }
    const slot: ChatSlot<P> = {};
    this.slots.set(chatId, slot); // the check above and this take are one synchronous step
    const run = this.drive(chatId, slot, payload);
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
    return 'started';
  }

  /** Resolves when no job is running or queued (including follow-ups started meanwhile). */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  /**
   * Stops taking triggers and lets running (and queued) jobs finish for `graceMs` (default
   * `DEFAULT_CLOSE_GRACE_MS`). Then every job still running is abandoned: aborted, reported
   * (`onAbandoned`), and never committed, even if its work ignores the signal; queued jobs and
   * follow-ups never start. A job already writing its result is waited for at most
   * `CLOSE_COMMIT_WAIT_MS` more. So close settles within `graceMs + CLOSE_COMMIT_WAIT_MS`,
   * whatever the jobs do. A grace that is not a number of milliseconds >= 0 is refused (an
   * `InputError`, before anything stops); one past `MAX_GRACE_MS` (Infinity) is that long.
   */
  async close(graceMs: number = DEFAULT_CLOSE_GRACE_MS): Promise<void> {
    if (typeof graceMs !== 'number' || Number.isNaN(graceMs) || graceMs < 0) {
      throw new InputError('graceMs', `must be a number of milliseconds >= 0, got ${String(graceMs)}`);
    }
    graceMs = Math.min(graceMs, MAX_GRACE_MS);
    this.closed = true;
    if (await settlesWithin(this.drain(), graceMs)) return;
    this.abandoning = true;
    for (const job of this.active) {
      if (job.committing) continue;
      job.abandoned = true;
      job.controller.abort(new AbandonedJobError('running'));
    }
    if (await settlesWithin(this.drain(), CLOSE_COMMIT_WAIT_MS)) return;
    // Released, so their timers do not keep the process up; the write itself cannot be called back.
    for (const job of [...this.active]) {
      job.unsettled = true;
      this.hooks.onUnsettled?.(job.chatId);
      job.controller.abort(new UnsettledJobError());
    }
  }

  private async drive(chatId: string, slot: ChatSlot<P>, first: P): Promise<void> {
    try {
      let payload: P | undefined = first;
      while (payload !== undefined) {
        const current: P = payload;
        slot.next = undefined;
        try {
          await this.enqueue(chatId, current);
          this.failing.delete(chatId);
        } catch (error) {
          if (error instanceof AbandonedJobError) this.hooks.onAbandoned?.(chatId, error.stage);
          else if (!(error instanceof UnsettledJobError)) {
            if (this.hooks.countsAsFailing?.(error) ?? true) this.failed(chatId);
            this.hooks.onError?.(chatId, error);
          }
        }
        // A job past its time limit releases the chat here even if its work ignores the abort:
        // whatever that work does later is discarded (the job checks its signal before it
        // commits, and the commit is a compare-and-set), so a hung summarizer stops nothing.
        payload = slot.next;
        if (payload !== undefined && this.closed) {
          this.hooks.onAbandoned?.(chatId, 'waiting');
          payload = undefined;
        }
        // A follow-up that arrived while a failing job ran is a trigger like any other.
        if (payload !== undefined && this.passOver(chatId)) payload = undefined;
        if (payload !== undefined && this.full()) {
          this.hooks.onBacklogFull?.(chatId, this.waitingForSlot);
          payload = undefined;
        }
      }
    } finally {
      if (this.slots.get(chatId) === slot) this.slots.delete(chatId);
    }
  }

  /** Hands one job to the queue; it counts as waiting for a slot from then until its work begins. */
  private enqueue(chatId: string, payload: P): Promise<void> {
    let begun = false;
    let counted = false;
    const done = this.queue.add(() => {
      begun = true;
      if (counted) this.waitingForSlot--;
      return this.runOnce(chatId, payload);
    });
    // p-queue begins a task inside `add` when a slot is free: such a job never waited.
    if (!begun) {
      counted = true;
      this.waitingForSlot++;
      this.waitingPeak = Math.max(this.waitingPeak, this.waitingForSlot);
    }
    return done;
  }

  /** Records a failed job of `chatId` (the most recent failures stay remembered, up to `MAX_FAILING_CHATS` chats). */
  private failed(chatId: string): void {
    const failures = (this.failing.get(chatId)?.failures ?? 0) + 1;
    this.failing.delete(chatId);
    this.failing.set(chatId, { failures, passOver: triggersPassedOver(failures) });
    if (this.failing.size > MAX_FAILING_CHATS) this.failing.delete(this.failing.keys().next().value!);
  }

  /** True when this trigger of `chatId` is to be passed over (and counts it). */
  private passOver(chatId: string): boolean {
    const failing = this.failing.get(chatId);
    if (failing === undefined || failing.passOver === 0) return false;
    failing.passOver--;
    this.hooks.onBackoff?.(chatId, failing.failures);
    return true;
  }

  private async runOnce(chatId: string, payload: P): Promise<void> {
    if (this.abandoning) throw new AbandonedJobError('waiting');
    const job: Active = { chatId, controller: new AbortController(), committing: false, abandoned: false, unsettled: false };
    const { controller } = job;
    this.active.add(job);
    let timer: ReturnType<typeof setTimeout> | undefined;
    // The race ends the job at the limit (or when close abandons it) even if the work ignores its signal.
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const e = new JobTimeoutError(this.timeoutMs);
        controller.abort(e);
        reject(e);
      }, this.timeoutMs);
      controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
    });
    try {
      const work = this.job(chatId, payload, controller.signal, { committing: () => { job.committing = !controller.signal.aborted; } });
      work.catch(() => undefined); // a late failure of abandoned work is not unhandled
      await Promise.race([work, limit]);
    } catch (error) {
      // Whatever the work rejected with once close abandoned it, the job was abandoned.
      if (job.unsettled) throw new UnsettledJobError();
      throw job.abandoned ? new AbandonedJobError('running') : error;
    } finally {
      clearTimeout(timer);
      this.active.delete(job);
      limit.catch(() => undefined);
    }
  }
}
