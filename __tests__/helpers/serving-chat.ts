import { validateMessages } from '../../src/formats/profiles.js';
import { createCompressor } from '../../src/runtime/compressor.js';
import type { Compressor } from '../../src/runtime/compressor-types.js';
import type { StateStore } from '../../src/store/state.js';
import { summarizerFromFunction } from '../../src/summarize/from-function.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import { chatHistory, coveredHash, roughTokens } from './crash-chat.mjs';
import type { Ack } from './crash-rounds.js';

/** One request a `ServingChat` served (or failed). */
export interface ServedTurn {
  readonly turn: number;
  readonly ok: boolean;
  readonly violations: number;
  /** The view was served without the stored summary because the store did not answer. */
  readonly degraded: boolean;
  readonly error?: string;
  readonly ms: number;
}

/** A compressor serving one growing chat in this process, as an application would. */
export interface ServingChat {
  readonly compressor: Compressor;
  readonly chat: string;
  /** Every request, in order. */
  readonly served: ServedTurn[];
  /** The commits `summary:done` reported, in order. */
  readonly acks: Ack[];
  /** A summary job has started and not yet ended. */
  readonly jobRunning: () => boolean;
  /** Serves the chat at `turn` through `wrap` (a stand-in model answers); never throws, the failure is recorded. */
  serve(turn: number): Promise<ServedTurn>;
}

/**
 * A compressor (recall on, a stand-in summarizer taking `summarizerMs`, a rough counter) on
 * `store`, serving `chat` (crash-chat.mjs) through `wrap`. Records each request: failed, refused
 * by the provider's rules (`violations`), or degraded (the store did not answer).
 */
export function servingChat(store: StateStore, chat: string, summarizerMs: number): ServingChat {
  const summarizer = summarizerFromFunction(async ({ signal }) => {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(resolve, summarizerMs);
      signal.addEventListener('abort', () => { clearTimeout(timer); reject(signal.reason); }, { once: true });
    });
    return 'The user looked up records and compared them.';
  }, { name: 'stand-in', checkFacts: false });
  const compressor = createCompressor({
    maxContextTokens: 900, compressionThresholdTokens: 450, keepLast: 4, recall: true,
    store, summarizer, counter: createTokenCounter({ countText: roughTokens }),
  });
  const served: ServedTurn[] = [];
  const acks: Ack[] = [];
  let running = false;
  compressor.on('summary:start', () => { running = true; });
  compressor.on('summary:done', (e) => { running = false; acks.push({ version: e.version, count: e.coveredIds.length, hash: coveredHash(e.coveredIds) }); });
  compressor.on('summary:stale', () => { running = false; });
  compressor.on('summary:failed', () => { running = false; });
  let degraded = false;
  const handler = compressor.wrap(async (request: { chatId: string; messages: unknown[] }) => ({ violations: validateMessages(request.messages as never).length }));
  compressor.on('compressed', (e) => { degraded = e.report.notes.some((n) => n.startsWith('the store did not answer')); });
  return {
    compressor, chat, served, acks,
    jobRunning: () => running,
    async serve(turn) {
      const t0 = performance.now();
      let record: ServedTurn;
      try {
        const answer = await handler({ chatId: chat, messages: chatHistory(chat, turn) });
        record = { turn, ok: true, violations: answer.violations, degraded, ms: performance.now() - t0 };
      } catch (error) {
        record = { turn, ok: false, violations: 0, degraded, error: (error as Error).message, ms: performance.now() - t0 };
      }
      served.push(record);
      return record;
    },
  };
}
