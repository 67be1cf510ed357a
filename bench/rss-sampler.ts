/**
 * Worker thread: samples the process RSS every few milliseconds and keeps the highest value in a
 * shared buffer, so the main thread can learn the peak reached during a synchronous call.
 */
import { workerData } from 'node:worker_threads';

const peak = new Float64Array(workerData.buffer as SharedArrayBuffer);
const intervalMs = (workerData.intervalMs as number | undefined) ?? 5;

setInterval(() => {
  const rss = process.memoryUsage.rss();
  if (rss > peak[0]) peak[0] = rss;
}, intervalMs);
