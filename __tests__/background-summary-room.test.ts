import { describe, expect, test } from '@jest/globals';
import { createCompressor, createExtractiveSummarizer, createTokenCounter, type OpenAIChatMessage, type SummaryDoneEvent } from '../src/index.js';
import { generateCodeAgentConversation, generateSupportAgentConversation } from '../bench/fixtures/domains/index.js';
import { modelRequestEnds } from '../bench/fixtures/conversation.js';

/**
 * The room a background summary is given. A view right after a fold is held to the low-water mark
 * of the trigger; the fold leaves room under it for the next summary, and the summary may take
 * what the rest of the view leaves under the mark (never less than half of what a fold frees), so
 * a rolling summary is not squeezed into a fixed slice while the view it lands in has room, and
 * the next turns still append below the trigger. A rolling summary keeps the room the one it
 * replaces took wherever the view after the fold still leaves that share under the trigger (a
 * large result in the kept tail does not cut the ledger back). Judged from outside: the room each
 * `summary:done` event reports against the view the compressor sends right after that fold (the
 * same history compressed again), measured here from the view's own report. Where the fold wrote
 * its summary longer for the views right after it (`compactTokens`), the view is judged at the
 * compact size, the one the next turns append to.
 */

const BUDGET = 12_000;
const THRESHOLD = 9_000; // the trigger: the smaller of threshold and budget
const LOW_WATER = 0.7;
const MARK = Math.floor(LOW_WATER * THRESHOLD);
const SHARE = Math.floor(((1 - LOW_WATER) / 2) * THRESHOLD);
/** The summary's frame (its title line and covered-message count) and the request overhead. */
const FRAME_SLACK = 40;

interface Fold {
  readonly done: SummaryDoneEvent;
  /** The view right after the fold: its tokens, and the summary's share of them. */
  readonly viewTokens: number;
  readonly summaryTokens: number;
}

async function replay(history: OpenAIChatMessage[], lowWaterMark = LOW_WATER): Promise<Fold[]> {
  const compressor = createCompressor({
    maxContextTokens: BUDGET, compressionThresholdTokens: THRESHOLD, lowWaterMark, keepLast: 4,
    summarizer: createExtractiveSummarizer(), counter: createTokenCounter(),
  });
  const folds: Fold[] = [];
  let pending: SummaryDoneEvent | undefined;
  compressor.on('summary:done', (e) => { pending = e; });
  try {
    for (const end of modelRequestEnds(history)) {
      const request = history.slice(0, end);
      const { report } = await compressor.compress('chat', request);
      compressor.afterResponse('chat', request, report);
      await compressor.drain();
      if (pending) {
        // The same request again, now with the new summary in force: the view right after the fold.
        const after = (await compressor.compress('chat', request)).report;
        expect(after.summary.applied).toBe(true);
        // A summary written longer for the views right after the fold: those views stay within
        // the budget less a share, and what is judged below is the view at its compact size
        // (frame included), the one the next turns append to.
        const compact = pending.compactTokens;
        if (compact !== undefined) {
          expect(after.tokensAfter).toBeLessThanOrEqual(BUDGET - Math.floor(((1 - lowWaterMark) / 2) * THRESHOLD) + FRAME_SLACK);
          expect(compact).toBeLessThanOrEqual(pending.allowedTokens!);
        }
        const summaryTokens = compact === undefined ? after.summary.tokens! : Math.min(after.summary.tokens!, compact + FRAME_SLACK / 2);
        folds.push({ done: pending, viewTokens: after.tokensAfter - after.summary.tokens! + summaryTokens, summaryTokens });
        pending = undefined;
      }
    }
  } finally {
    await compressor.close();
  }
  return folds;
}

describe('a background summary takes the room its view leaves under the low-water mark', () => {
  for (const [name, generate] of [['code agent', generateCodeAgentConversation], ['support agent', generateSupportAgentConversation]] as const) {
    test(`${name}: every fold's room reaches the low-water mark, the view after it leaves room under the trigger, and a rolling summary keeps its room`, async () => {
      const folds = await replay(generate({ messages: 260, seed: 41 }));
      expect(folds.length).toBeGreaterThanOrEqual(4);
      let previous: Fold | undefined;
      let rolled = 0;
      let heldAboveMark = 0;
      for (const fold of folds) {
        const rest = fold.viewTokens - fold.summaryTokens;
        const room = fold.done.allowedTokens!;
        // The room is what the rest of the view leaves below the mark (never less than the share),
        // or the room of the summary it replaces while the view keeps a share under the trigger.
        const kept = previous ? Math.min(previous.summaryTokens, THRESHOLD - SHARE - rest) : 0;
        expect(room).toBeGreaterThanOrEqual(Math.max(SHARE, MARK - rest) - FRAME_SLACK);
        // Never more than that, unless the rest stood at the mark or above (no fold reaches the
        // mark there, or the fold took the kept tail in with its room): then at most what the
        // budget leaves less a share for the next turns.
        expect(room).toBeLessThanOrEqual(Math.max(SHARE, MARK - rest, kept, fold.done.newlyCovered.length > 0 ? BUDGET - SHARE - rest : 0) + FRAME_SLACK);
        expect(fold.viewTokens).toBeLessThanOrEqual(BUDGET - SHARE + FRAME_SLACK);
        // The summary fits its room, and the view right after the fold leaves room to append.
        expect(fold.summaryTokens).toBeLessThanOrEqual(room + FRAME_SLACK);
        expect(fold.viewTokens).toBeLessThanOrEqual(Math.max(MARK, rest + SHARE, THRESHOLD - SHARE) + FRAME_SLACK);
        expect(fold.viewTokens).toBeLessThan(THRESHOLD);
        // A rolling summary whose view still leaves a share under the trigger with the summary it
        // replaces (the rest of the view and that summary fit under it) is given at least the
        // room that summary took, even where the kept tail holds the view above the mark.
        if (previous && rest + previous.summaryTokens <= THRESHOLD - SHARE) {
          expect(room).toBeGreaterThanOrEqual(previous.summaryTokens - FRAME_SLACK);
          rolled++;
          if (rest + previous.summaryTokens > MARK) heldAboveMark++;
        }
        previous = fold;
      }
      expect(rolled).toBeGreaterThan(0);
      // At least one fold whose kept tail held the view above the mark kept its summary's room.
      expect(heldAboveMark).toBeGreaterThan(0);
      // Rolling summaries grew past the fixed share: the ledger they carry is not cut back each fold.
      expect(Math.max(...folds.map((f) => f.summaryTokens))).toBeGreaterThan(SHARE + FRAME_SLACK);
    });
  }

  test('without steps (lowWaterMark 1) a summary takes what the rest of the view leaves under the threshold, not the summarizer\'s minimum', async () => {
    const folds = await replay(generateCodeAgentConversation({ messages: 160, seed: 43 }), 1);
    expect(folds.length).toBeGreaterThanOrEqual(2);
    for (const fold of folds) {
      const rest = fold.viewTokens - fold.summaryTokens;
      expect(fold.done.allowedTokens!).toBeGreaterThanOrEqual(THRESHOLD - rest - FRAME_SLACK);
      expect(fold.done.allowedTokens!).toBeLessThanOrEqual(THRESHOLD - rest + FRAME_SLACK);
    }
    expect(Math.max(...folds.map((f) => f.summaryTokens))).toBeGreaterThan(500);
  });
});
