/**
 * The proxy process of bench/proxy-stalls.ts: `startServer` (the built code) with the options
 * given as JSON in argv[2], and two watches of its event loop, read and reset over IPC: a 5 ms
 * `setInterval` ticker (each gap past 5 ms is a stall, caught whole, which
 * `monitorEventLoopDelay` can miss) and `monitorEventLoopDelay` itself (1 ms resolution).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startServer, type ServerOptions } from '../src/server/index.js';

const TICK_MS = 5;
const options = JSON.parse(process.argv[2]!) as ServerOptions;
const server = await startServer({ ...options, logLevel: 'silent' });

let gaps: number[] = [];
let last = performance.now();
setInterval(() => {
  const now = performance.now();
  gaps.push(now - last - TICK_MS);
  last = now;
}, TICK_MS);
const histogram = monitorEventLoopDelay({ resolution: 1 });
histogram.enable();

const quantile = (sorted: number[], q: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!);

process.on('message', (message: { op: string }) => {
  if (message.op === 'reset') {
    gaps = [];
    last = performance.now();
    histogram.reset();
    process.send!({ op: 'reset' });
  } else if (message.op === 'stats') {
    const sorted = gaps.slice().sort((a, b) => a - b);
    process.send!({
      op: 'stats',
      tickerP99Ms: Math.max(0, quantile(sorted, 0.99)),
      tickerMaxStallMs: Math.max(0, sorted.at(-1) ?? 0),
      ticks: sorted.length,
      loopDelayP99Ms: histogram.percentile(99) / 1e6,
      loopDelayMaxMs: histogram.max / 1e6,
    });
  } else if (message.op === 'close') {
    void server.close().finally(() => process.exit(0));
  }
});
process.send!({ op: 'listening', url: server.url });
