/**
 * Cold token counting throughput on identical work: `createTokenCounter().message()` over a history
 * (fresh counter: each distinct text is encoded once, repeats come from its cache) against raw
 * tiktoken `encode_ordinary` over the same distinct texts, each once (content, call names and
 * arguments, tool results), in MB of UTF-8 of those distinct texts per second. Each is run five
 * times, alternating; the fastest run counts.
 */
import { createTokenCounter, type OpenAIChatMessage } from '../src/index.js';
import { openaiChatLens } from '../src/core/index.js';
import { peerEncoder } from './peer-counter.js';

/** Throughput of both counters on one history. */
export interface CountingFigure {
  readonly messages: number;
  /** Distinct texts in the history: what both sides encode, once each. */
  readonly texts: number;
  readonly megabytes: number;
  readonly ctxfoldMBps: number;
  readonly rawMBps: number;
  /** ctxfold / raw throughput. */
  readonly ratio: number;
  /** Texts the cold counter encoded and texts it served from its cache (repeats inside the history). */
  readonly counterStats: { encoded: number; cachedHits: number };
}

/** Measures both counters on `history`. */
export function countingThroughput(history: readonly OpenAIChatMessage[]): CountingFigure {
  const texts: string[] = [];
  for (const m of history) {
    const t = openaiChatLens.read(m);
    if (t.text) texts.push(t.text);
    for (const c of t.calls) texts.push(c.name, c.arguments);
    for (const r of t.results) texts.push(r.content);
  }
  // Both sides do the same work: every distinct text encoded once.
  const distinct = [...new Set(texts)];
  let bytes = 0;
  for (const t of distinct) bytes += Buffer.byteLength(t, 'utf8');
  const enc = peerEncoder();
  let rawBest = Number.POSITIVE_INFINITY;
  let ctxBest = Number.POSITIVE_INFINITY;
  let stats = { encoded: 0, cachedHits: 0 };
  for (let round = 0; round < 5; round++) {
    let t0 = performance.now();
    let sink = 0;
    for (const t of distinct) sink += t.length === 0 ? 0 : enc.encode_ordinary(t).length;
    rawBest = Math.min(rawBest, performance.now() - t0);
    const counter = createTokenCounter();
    t0 = performance.now();
    for (const m of history) sink += counter.message(m, openaiChatLens);
    ctxBest = Math.min(ctxBest, performance.now() - t0);
    const s = counter.stats();
    stats = { encoded: s.encoded, cachedHits: s.cachedHits };
    if (sink < 0) throw new Error('unreachable');
  }
  const mb = bytes / 1e6;
  const ctxfoldMBps = mb / (ctxBest / 1000);
  const rawMBps = mb / (rawBest / 1000);
  return { messages: history.length, texts: distinct.length, megabytes: mb, ctxfoldMBps, rawMBps, ratio: ctxfoldMBps / rawMBps, counterStats: stats };
}
