/**
 * The default bound on summary jobs waiting for a concurrency slot (`maxQueuedJobs`). No imports:
 * the CLI's flag table reads it without loading the scheduler.
 */

/**
 * Queued jobs allowed per concurrency slot by default (32 at the default concurrency of 2). A
 * queued job pins its chat's history (about 1.6 MB of heap at 2,000 messages) even after the
 * history cache lets it go, so the default backlog pins about 50 MB at most; and a stop rarely
 * drains more: at 2,000 messages an extractive job takes seconds, so a 30 s grace finishes about
 * ten. A deeper queue only holds more jobs to abandon at shutdown, while a refused chat loses
 * nothing (its next request triggers again).
 */
export const MAX_QUEUED_JOBS_PER_SLOT = 16;

/** The default bound on queued jobs for `concurrency` slots: `MAX_QUEUED_JOBS_PER_SLOT` each. */
export function defaultMaxQueuedJobs(concurrency: number): number {
  return MAX_QUEUED_JOBS_PER_SLOT * concurrency;
}
