/**
 * The default bound on summary jobs waiting for a concurrency slot (`maxQueuedJobs`). No imports:
 * the CLI's flag table reads it without loading the scheduler.
 */

/**
 * Queued jobs allowed per concurrency slot by default (64 at the default concurrency of 2). A
 * queued job holds its chat's history (about 1 MB at 2,000 messages), so the default keeps a
 * backlog to tens of megabytes; and a job behind 32 others per slot already waits 32 jobs' time,
 * while its chat, if it comes back, triggers again on its next request. A deeper queue buys
 * nothing but memory and jobs left over at shutdown.
 */
export const MAX_QUEUED_JOBS_PER_SLOT = 32;

/** The default bound on queued jobs for `concurrency` slots: `MAX_QUEUED_JOBS_PER_SLOT` each. */
export function defaultMaxQueuedJobs(concurrency: number): number {
  return MAX_QUEUED_JOBS_PER_SLOT * concurrency;
}
