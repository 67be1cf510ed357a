import type { TriggerOutcome } from './scheduler.js';
import type { ChatJobState, CompressorJobStats } from './compressor-types.js';

/**
 * Summary jobs of one compressor at this moment, for `stats().jobs`: a chat is waiting from its
 * trigger until its job's work starts (a job that starts inside the trigger itself, on a free
 * concurrency slot, never waited), running until its work settles; a trigger that finds its chat
 * busy is a coalesced follow-up, waiting too. Counts only: it decides nothing.
 */
export class JobCounts {
  private readonly waiting = new Set<string>();
  private readonly followUps = new Set<string>();
  /** Jobs whose work is running, per chat (more than one only while a job past its time limit still settles). */
  private readonly runningChats = new Map<string, number>();
  private running = 0;
  private coalesced = 0;
  private backlogFull = 0;
  private triggering: string | undefined;
  private ranAtOnce = false;

  /** Runs `trigger` (the scheduler's) for `chatId` and records how it was taken. */
  triggered(chatId: string, trigger: () => TriggerOutcome): TriggerOutcome {
    this.triggering = chatId;
    this.ranAtOnce = false;
    let outcome: TriggerOutcome;
    try {
      outcome = trigger();
    } finally {
      this.triggering = undefined;
    }
    if (outcome === 'started' && !this.ranAtOnce) this.waiting.add(chatId);
    else if (outcome === 'coalesced') {
      this.followUps.add(chatId);
      this.coalesced++;
    }
    return outcome;
  }

  /** A job's work for `chatId` starts. */
  started(chatId: string): void {
    if (chatId === this.triggering) this.ranAtOnce = true;
    else if (!this.waiting.delete(chatId)) this.followUps.delete(chatId);
    this.running++;
    this.runningChats.set(chatId, (this.runningChats.get(chatId) ?? 0) + 1);
  }

  /** A job's work for `chatId` settled. */
  finished(chatId: string): void {
    this.running--;
    const left = (this.runningChats.get(chatId) ?? 1) - 1;
    if (left > 0) this.runningChats.set(chatId, left);
    else this.runningChats.delete(chatId);
  }

  /** Where `chatId`'s summary job stands: `running` while its work runs, else `queued` while one waits (a first job or a follow-up), else `idle`. */
  stateOf(chatId: string): ChatJobState {
    if (this.runningChats.has(chatId)) return 'running';
    return this.waiting.has(chatId) || this.followUps.has(chatId) ? 'queued' : 'idle';
  }

  /** A job was refused because the queue was full (a new trigger, or a follow-up whose turn came then). */
  refused(): void {
    this.backlogFull++;
  }

  /** The scheduler closed: what was still waiting never starts. */
  clear(): void {
    this.waiting.clear();
    this.followUps.clear();
  }

  /**
   * Jobs waiting (a first job or a follow-up), running, triggers coalesced and jobs refused so far;
   * `queue` is the scheduler's own figures (jobs waiting for a slot now, their peak, the bound).
   */
  stats(queue: Pick<CompressorJobStats, 'queued' | 'queuedPeak' | 'maxQueuedJobs'>): CompressorJobStats {
    return { waiting: this.waiting.size + this.followUps.size, running: this.running, coalesced: this.coalesced, backlogFull: this.backlogFull, ...queue };
  }
}
