import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { createCompressor, MemoryStore, type ChatState, type StateStore, type Summarizer } from '../src/index.js';
import { openaiChatLens } from '../src/formats/openai-chat/lens.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { Fingerprints } from '../src/runtime/fingerprints.js';
import { pairingProblems } from './helpers/oracle.js';
import { PROPERTY_SEED, propertyRuns } from './helpers/property-runs.js';

/**
 * The compressor under random use and random faults: requests interleaved with edits, object
 * replacements and appends to the caller's array while summary jobs run; summarizers that throw,
 * return nothing, run slow or hang ignoring their signal; stores whose reads and writes fail or lag.
 */

type Behaviour = 'ok' | 'slow' | 'throw' | 'empty' | 'hang';
type StoreFault = 'none' | 'get-throws' | 'commit-throws' | 'slow';
type Op =
  | { readonly kind: 'request' }
  | { readonly kind: 'edit'; readonly at: number }
  | { readonly kind: 'append'; readonly tool: boolean }
  | { readonly kind: 'wait'; readonly ms: number }
  | { readonly kind: 'store'; readonly fault: StoreFault };

const JOB_TIMEOUT_MS = 40;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A summarizer that folds the texts it is given (so a stale fact would show in the view) and misbehaves on cue. */
function faultySummarizer(script: Behaviour[]): Summarizer {
  let call = 0;
  return {
    name: 'faulty',
    inputBudgetTokens: 1_000_000,
    async summarize(req) {
      const behaviour = script[call++ % script.length];
      if (behaviour === 'hang') return new Promise<string>(() => undefined); // ignores its signal, never settles
      await sleep(behaviour === 'slow' ? JOB_TIMEOUT_MS * 2 : 2);
      if (behaviour === 'throw') throw new Error('summarizer exploded');
      if (behaviour === 'empty') return '  ';
      return [req.previousSummary ?? '', ...req.messages.map((m) => m.text)].filter(Boolean).join(' | ');
    },
  };
}

class FaultyStore implements StateStore {
  readonly inner = new MemoryStore();
  fault: StoreFault = 'none';
  async get(chatId: string) {
    if (this.fault === 'get-throws') throw new Error('store down');
    if (this.fault === 'slow') await sleep(5);
    return this.inner.get(chatId);
  }
  async commit(state: ChatState, expected: number) {
    if (this.fault === 'commit-throws') throw new Error('store down');
    if (this.fault === 'slow') await sleep(5);
    return this.inner.commit(state, expected);
  }
  async delete(chatId: string) { return this.inner.delete(chatId); }
  async close() { return this.inner.close(); }
}

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ kind: 'request' as const }) },
  { weight: 2, arbitrary: fc.nat().map((at) => ({ kind: 'edit' as const, at })) },
  { weight: 3, arbitrary: fc.boolean().map((tool) => ({ kind: 'append' as const, tool })) },
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 3 * JOB_TIMEOUT_MS }).map((ms) => ({ kind: 'wait' as const, ms })) },
  { weight: 1, arbitrary: fc.constantFrom<StoreFault>('none', 'get-throws', 'commit-throws', 'slow').map((fault) => ({ kind: 'store' as const, fault })) },
);

describe('the compressor under random edits and faults', () => {
  test('every view is valid and current, summaries cover what they were made from, drain and close settle', async () => {
    const runs = Math.min(40, Math.max(20, Math.floor(propertyRuns() / 20)));
    let requests = 0;
    let summariesApplied = 0;
    let summariesDone = 0;
    await fc.assert(fc.asyncProperty(
      fc.array(fc.constantFrom<Behaviour>('ok', 'ok', 'ok', 'slow', 'throw', 'empty', 'hang'), { minLength: 1, maxLength: 6 }),
      fc.array(opArb, { minLength: 10, maxLength: 32, size: 'max' }),
      async (script, ops) => {
        const store = new FaultyStore();
        const c = createCompressor({ maxContextTokens: 260, compressionThresholdTokens: 120, keepLast: 2, summarizer: faultySummarizer(script), store, jobTimeoutMs: JOB_TIMEOUT_MS });
        const done: { coveredIds: readonly string[] }[] = [];
        c.on('summary:done', (e) => { summariesDone++; done.push({ coveredIds: e.coveredIds }); });
        let fact = 0;
        const history: OpenAIChatMessage[] = [{ role: 'system', content: 'Answer briefly.' }];
        const superseded = new Set<string>(); // facts edited away: must never reach the model again
        const sentHistories: OpenAIChatMessage[][] = [];
        const addTurn = (tool: boolean) => {
          const id = `call_${fact}`;
          history.push({ role: 'user', content: `Remember FACT-${fact++} please. ${'filler '.repeat(12)}` });
          if (tool) {
            history.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'lookup', arguments: `{"fact":${fact}}` } }] });
            history.push({ role: 'tool', tool_call_id: id, content: `FACT-${fact++} found. ${'data '.repeat(10)}` });
          }
          history.push({ role: 'assistant', content: `Noted FACT-${fact++}.` });
        };
        addTurn(false);
        const chat = c.wrap(async (req: { chatId: string; messages: OpenAIChatMessage[] }) => req.messages);
        for (const op of ops) {
          if (op.kind === 'append') addTurn(op.tool);
          else if (op.kind === 'store') store.fault = op.fault;
          else if (op.kind === 'wait') await sleep(op.ms);
          else if (op.kind === 'edit') {
            // Replace a user message with a new object, as an editing client does.
            const users = history.map((m, i) => (m.role === 'user' && /FACT-\d+/.test(String(m.content)) ? i : -1)).filter((i) => i >= 0);
            const at = users[op.at % users.length];
            const old = String(history[at].content).match(/FACT-\d+/)![0];
            superseded.add(old);
            history[at] = { role: 'user', content: `Remember FACT-${fact++} instead. ${'filler '.repeat(12)}` };
          } else {
            history.push({ role: 'user', content: `Question ${requests}?` });
            sentHistories.push(history.slice());
            const view = await chat({ chatId: 'fuzz', messages: history });
            requests++;
            expect(pairingProblems(view)).toEqual([]);
            const text = JSON.stringify(view);
            for (const f of superseded) expect({ stale: f, seen: text.includes(`${f} `) || text.includes(`${f}.`) || text.includes(`${f}"`) }).toEqual({ stale: f, seen: false });
            if (text.includes('[Summary of')) summariesApplied++;
            history.push({ role: 'assistant', content: `Answer ${requests}.` });
          }
        }
        // Both settle within the job timeout plus a margin, whatever the summarizer does.
        const bound = JOB_TIMEOUT_MS * 4 + 1000;
        let timer: ReturnType<typeof setTimeout> | undefined;
        const late = new Promise<'late'>((r) => { timer = setTimeout(() => r('late'), bound); });
        store.fault = 'none';
        expect(await Promise.race([c.drain().then(() => 'settled', () => 'settled'), late])).toBe('settled');
        expect(await Promise.race([c.close().then(() => 'settled'), late])).toBe('settled');
        clearTimeout(timer);
        // Every committed summary covers, right after the head, ids of a history it was made from.
        const fingerprints = new Fingerprints();
        const idsOfSent = sentHistories.map((h) => fingerprints.idsOf(h, openaiChatLens));
        for (const d of done) {
          const found = idsOfSent.some((ids) => d.coveredIds.every((id, k) => ids[1 + k] === id));
          expect({ covered: d.coveredIds.length, foundInASentHistory: found }).toEqual({ covered: d.coveredIds.length, foundInASentHistory: true });
        }
      },
    ), { seed: PROPERTY_SEED, numRuns: runs });
    // The runs reached what they are about.
    expect(requests).toBeGreaterThan(2 * runs);

    expect(summariesDone).toBeGreaterThan(runs / 4);
    expect(summariesApplied).toBeGreaterThan(runs / 4);
  }, 180_000);
});
