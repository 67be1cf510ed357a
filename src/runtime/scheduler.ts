import PQueue from 'p-queue';
import { InputError } from '../errors.js';

/** The work a scheduled job does for one chat; it must stop when `signal` aborts. */
export type ChatJob<P> = (chatId: string, payload: P, signal: AbortSignal) => Promise<void>;

/** Scheduler settings. */
export interface SchedulerOptions {
  /** Jobs running at once across all chats (p-queue). Default 2. */
  readonly concurrency?: number;
  /** A job is aborted after this long and counts as failed. Default 120 s. */
  readonly jobTimeoutMs?: number;
}

/** How a trigger was taken: a new job started, or folded into the one running for that chat. */
export type TriggerOutcome = 'started' | 'coalesced' | 'closed';

/** What the scheduler tells its owner about each job. */
export interface SchedulerHooks {
  /** A job failed, timed out or was aborted; the chat's state is whatever it was before. */
  readonly onError?: (chatId: string, error: unknown) => void;
}

/** A chat with a job running or queued; its presence in the map is the chat's lock. */
interface ChatSlot<P> {
  /** The newest payload that arrived while a job ran: at most one follow-up per chat. */
  next?: P;
}

function timeoutError(ms: number): Error {
  const e = new Error(`summary job timed out after ${ms} ms`);
  e.name = 'TimeoutError';
  return e;
}

/**
 * Runs background jobs so that one chat never has two at once. A chat is taken by putting its slot
 * in the map in the same synchronous step as the check (JavaScript runs one step at a time), so two
 * quick triggers can never both start a job; a trigger
 * that finds the chat busy replaces the queued follow-up (newest history wins) and is run by the
 * job already holding the lock. Jobs of different chats share a global concurrency limit, are
 * time-limited, and are aborted by `close()`.
 */
export class ChatScheduler<P> {
  private readonly slots = new Map<string, ChatSlot<P>>();
  private readonly queue: PQueue;
  private readonly running = new Set<Promise<void>>();
  private readonly closing = new AbortController();
  private readonly timeoutMs: number;
  private closed = false;

  constructor(private readonly job: ChatJob<P>, options: SchedulerOptions = {}, private readonly hooks: SchedulerHooks = {}) {
    const concurrency = options.concurrency ?? 2;
    if (!Number.isInteger(concurrency) || concurrency < 1) throw new InputError('options.concurrency', `must be an integer >= 1, got ${concurrency}`);
    this.timeoutMs = options.jobTimeoutMs ?? 120_000;
    if (!(this.timeoutMs > 0)) throw new InputError('options.jobTimeoutMs', `must be > 0, got ${this.timeoutMs}`);
    this.queue = new PQueue({ concurrency });
  }

  /** Asks for a job on `chatId` with `payload`. Never waits for the job. */
  trigger(chatId: string, payload: P): TriggerOutcome {
    if (this.closed) return 'closed';
    const busy = this.slots.get(chatId);
    if (busy) {
      busy.next = payload;
      return 'coalesced';
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
   * Stops taking triggers and waits for running jobs. With `graceMs`, jobs still running then are
   * aborted (they commit nothing) and close returns after at most another `graceMs`, even if a
   * job's work ignores its signal.
   */
  async close(graceMs?: number): Promise<void> {
    this.closed = true;
    if (graceMs === undefined) return this.drain();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.closing.abort(new Error('scheduler closed'));
        timer = setTimeout(resolve, graceMs);
      }, graceMs);
    });
    try {
      await Promise.race([this.drain(), expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async drive(chatId: string, slot: ChatSlot<P>, first: P): Promise<void> {
    try {
      let payload: P | undefined = first;
      while (payload !== undefined) {
        const current: P = payload;
        slot.next = undefined;
        try {
          await this.queue.add(() => this.runOnce(chatId, current));
        } catch (error) {
          this.hooks.onError?.(chatId, error);
        }
        // A job past its time limit releases the chat here even if its work ignores the abort:
        // whatever that work does later is discarded (the job checks its signal before it
        // commits, and the commit is a compare-and-set), so a hung summarizer stops nothing.
        payload = this.closed ? undefined : slot.next;
      }
    } finally {
      if (this.slots.get(chatId) === slot) this.slots.delete(chatId);
    }
  }

  private async runOnce(chatId: string, payload: P): Promise<void> {
    if (this.closing.signal.aborted) throw this.closing.signal.reason;
    const controller = new AbortController();
    const onClose = () => controller.abort(this.closing.signal.reason);
    this.closing.signal.addEventListener('abort', onClose, { once: true });
    let timer: ReturnType<typeof setTimeout> | undefined;
    // The race ends the job at the limit even if the work ignores its signal.
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const e = timeoutError(this.timeoutMs);
        controller.abort(e);
        reject(e);
      }, this.timeoutMs);
      controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
    });
    try {
      const work = this.job(chatId, payload, controller.signal);
      work.catch(() => undefined); // a late failure of abandoned work is not unhandled
      await Promise.race([work, limit]);
    } finally {
      clearTimeout(timer);
      this.closing.signal.removeEventListener('abort', onClose);
      limit.catch(() => undefined);
    }
  }
}
