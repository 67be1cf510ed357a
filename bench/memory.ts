/**
 * Peak memory of one call: heap growth (heapUsed right after the call minus heapUsed right after a
 * forced GC before it: garbage not yet collected counts, a GC during the call lowers it) and the
 * peak RSS above the pre-call RSS, sampled every 5 ms by a worker thread.
 */
import { Worker } from 'node:worker_threads';

/** Memory figures of one call, in MB. */
export interface MemoryDelta {
  readonly heapDeltaMB: number;
  readonly rssPeakDeltaMB: number;
}

const gc = (globalThis as { gc?: () => void }).gc;

/** True when the process runs with --expose-gc (memory figures are taken only then). */
export const canMeasureMemory = typeof gc === 'function';

/** Samples RSS from a worker; `stop()` ends the worker. */
export class MemoryProbe {
  private readonly peak = new Float64Array(new SharedArrayBuffer(8));
  private readonly worker: Worker;
  private heapBefore = 0;
  private rssBefore = 0;

  constructor() {
    this.worker = new Worker(new URL('./rss-sampler.js', import.meta.url), { workerData: { buffer: this.peak.buffer, intervalMs: 5 } });
    this.worker.unref();
  }

  /** Collects garbage and records the baseline. */
  start(): void {
    gc?.();
    const m = process.memoryUsage();
    this.heapBefore = m.heapUsed;
    this.rssBefore = m.rss;
    this.peak[0] = m.rss;
  }

  /** Reads the figures since `start()`. */
  read(): MemoryDelta {
    const m = process.memoryUsage();
    const peak = Math.max(this.peak[0], m.rss);
    return { heapDeltaMB: (m.heapUsed - this.heapBefore) / 1e6, rssPeakDeltaMB: (peak - this.rssBefore) / 1e6 };
  }

  async stop(): Promise<void> {
    await this.worker.terminate();
  }
}
