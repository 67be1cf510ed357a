import { describe, expect, test } from '@jest/globals';
import { openaiChatLens } from '../src/formats/openai-chat/lens.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { Fingerprints } from '../src/runtime/fingerprints.js';

const idsOf: Fingerprints['idsOf'] = (...args) => new Fingerprints().idsOf(...args);
import { createCompressor } from '../src/runtime/compressor.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { corpusDescribe, loadCorpus } from './helpers/corpus.js';

const counter = createTokenCounter();

/**
 * Replays a conversation one message at a time, letting each background summary land, and
 * checks after every step that covered ids + the ids of the messages the view still sends are
 * exactly the ids of the whole history: nothing silently vanishes.
 */
async function replay(chatId: string, messages: OpenAIChatMessage[], compressor: ReturnType<typeof createCompressor>, store: MemoryStore) {
  let summaries = 0;
  const off = compressor.on('summary:done', (e) => {
    if (e.chatId === chatId) summaries++;
  });
  for (let k = 2; k <= messages.length; k++) {
    const history = messages.slice(0, k);
    compressor.schedule(chatId, history);
    await compressor.drain();
    const state = await store.get(chatId);
    const { messages: view, report } = await compressor.compress(chatId, history);
    expect(report.droppedCounts.budget).toBe(0);
    const position = new Map(history.map((m, i) => [m as object, i]));
    const sentIds = view.filter((m) => position.has(m)).map((m) => idsOf(history, openaiChatLens, position.get(m)!, position.get(m)! + 1)[0]);
    const union = new Set([...(report.summary.applied ? state!.coveredIds : []), ...sentIds]);
    const all = idsOf(history, openaiChatLens);
    expect([...union].sort()).toEqual([...all].sort());
    if (state) expect(state.coveredIds.every((id) => all.includes(id))).toBe(true);
  }
  off();
  return summaries;
}

corpusDescribe(describe)('traceability over the shared corpus', () => {
  test('every committed summary + head + tail accounts for every message, turn by turn', async () => {
    const store = new MemoryStore();
    const compressor = createCompressor({ compressionThresholdTokens: 1200, keepLast: 4, store, counter });
    let summaries = 0;
    let checked = 0;
    for (const conv of loadCorpus()) {
      summaries += await replay(conv.id, conv.messages, compressor, store);
      checked += conv.messages.length - 1;
    }
    await compressor.close();
    expect(checked).toBeGreaterThan(5000);
    // The threshold is low enough that most conversations are summarized, several times.
    expect(summaries).toBeGreaterThan(200);
  });
});
