import { describe, expect, test } from '@jest/globals';
import { generateConversation } from '../bench/fixtures/conversation.js';
import type { TranscriptEntry } from '../src/formats/lens.js';
import { openaiChatLens } from '../src/formats/openai-chat/lens.js';
import { createExtractiveSummarizer } from '../src/summarize/extractive.js';
import { entryTokens, summarizeRolling } from '../src/summarize/rolling.js';
import type { SummarizeRequest, Summarizer } from '../src/summarize/summarizer.js';
import { createTokenCounter } from '../src/tokens/counter.js';

const count = createTokenCounter().text;
const live = () => new AbortController().signal;

/** What one summarizer call was given, and what it returned. */
interface Call {
  readonly previousSummary?: string;
  readonly messages: readonly TranscriptEntry[];
  readonly summary: string;
}

/** Wraps a summarizer and records every call it receives. */
function recording(inner: Summarizer): { summarizer: Summarizer; calls: Call[] } {
  const calls: Call[] = [];
  return {
    calls,
    summarizer: {
      name: inner.name,
      inputBudgetTokens: inner.inputBudgetTokens,
      async summarize(request: SummarizeRequest) {
        const summary = await inner.summarize(request);
        calls.push({ previousSummary: request.previousSummary, messages: request.messages, summary });
        return summary;
      },
    },
  };
}

/** Tokens a call was given, measured as the driver measures them. */
function inputTokens(call: Call): number {
  return (call.previousSummary ? count(call.previousSummary) : 0) + call.messages.reduce((n, e) => n + entryTokens(e, count), 0);
}

function transcript(messages: number, seed: number): TranscriptEntry[] {
  return generateConversation({ messages, seed }).map((m) => openaiChatLens.read(m));
}

const BUDGET = 3000;

async function fold(entries: readonly TranscriptEntry[]) {
  const { summarizer, calls } = recording(createExtractiveSummarizer({ inputBudgetTokens: BUDGET, maxSummaryTokens: 600, countTokens: count }));
  const result = await summarizeRolling(summarizer, { messages: entries, signal: live(), countTokens: count });
  return { result, calls };
}

describe('summarizeRolling', () => {
  test('2,000 messages: no call exceeds the budget, every message is folded once in order, summaries chain', async () => {
    const entries = transcript(2000, 11);
    const { result, calls } = await fold(entries);
    expect(result.calls).toBe(calls.length);
    expect(calls.length).toBeGreaterThan(10);
    for (const call of calls) expect(inputTokens(call)).toBeLessThanOrEqual(BUDGET);
    // Batches are consecutive and cover the input exactly; only oversized entries were replaced.
    const folded = calls.flatMap((c) => c.messages);
    expect(folded).toHaveLength(entries.length);
    let shortened = 0;
    folded.forEach((entry, i) => {
      if (entry === entries[i]) return;
      shortened++;
      expect(entry.role).toBe(entries[i].role);
      expect(entryTokens(entries[i], count)).toBeGreaterThan(BUDGET - 600);
    });
    expect(shortened).toBeLessThan(entries.length / 20);
    // Batches are full: adding the next message to any batch would have broken the budget.
    let next = 0;
    for (let i = 0; i < calls.length - 1; i++) {
      next += calls[i].messages.length;
      expect(inputTokens(calls[i]) + entryTokens(entries[next], count)).toBeGreaterThan(BUDGET);
    }
    expect(calls[0].previousSummary).toBeUndefined();
    for (let i = 1; i < calls.length; i++) expect(calls[i].previousSummary).toBe(calls[i - 1].summary);
    expect(result.summary).toBe(calls.at(-1)!.summary.trim());
    expect(count(result.summary)).toBeLessThanOrEqual(600);
  });

  test('calls grow linearly with the history: 500, 1,000, 2,000 messages', async () => {
    const counts: number[] = [];
    for (const n of [500, 1000, 2000]) counts.push((await fold(transcript(n, 5))).result.calls);
    const [c500, c1000, c2000] = counts;
    expect(c1000 / c500).toBeGreaterThan(1.6);
    expect(c1000 / c500).toBeLessThan(2.4);
    expect(c2000 / c1000).toBeGreaterThan(1.6);
    expect(c2000 / c1000).toBeLessThan(2.4);
  });

  test('a single message over the budget is passed shortened in the middle, within the budget', async () => {
    const words = Array.from({ length: 30_000 }, (_, i) => `w${(i * 2654435761) % 9973}`).join(' ');
    const huge: TranscriptEntry = {
      role: 'tool', text: '', calls: [], results: [{ id: 'call_9', name: 'export_logs', content: `BEGIN-OF-EXPORT ${words} END-OF-EXPORT` }],
    };
    const budget = 800;
    const before: TranscriptEntry = { role: 'user', text: 'Export the logs for order ORD-77.', calls: [], results: [] };
    const { summarizer, calls } = recording(createExtractiveSummarizer({ inputBudgetTokens: budget, maxSummaryTokens: 200, countTokens: count }));
    const original = structuredClone(huge);
    const result = await summarizeRolling(summarizer, { messages: [before, huge], signal: live(), countTokens: count });
    expect(entryTokens(huge, count)).toBeGreaterThan(budget);
    for (const call of calls) expect(inputTokens(call)).toBeLessThanOrEqual(budget);
    const passed = calls.flatMap((c) => c.messages).find((e) => e.role === 'tool')!;
    expect(passed).not.toBe(huge);
    expect(passed.results[0]).toMatchObject({ id: 'call_9', name: 'export_logs' });
    expect(passed.results[0].content).toMatch(/^BEGIN-OF-EXPORT /);
    expect(passed.results[0].content).toMatch(/ END-OF-EXPORT$/);
    expect(passed.results[0].content).toMatch(/chars cut/);
    expect(huge).toEqual(original);
    expect(result.summary).toContain('ORD-77');
  });

  test('a previous summary over half the budget is cut before it is carried', async () => {
    const previous = Array.from({ length: 400 }, (_, i) => `- fact ${i}: CODE${i}X`).join('\n');
    const { summarizer, calls } = recording(createExtractiveSummarizer({ inputBudgetTokens: 1000, maxSummaryTokens: 300, countTokens: count }));
    await summarizeRolling(summarizer, { previousSummary: previous, messages: transcript(40, 3), signal: live(), countTokens: count });
    expect(count(previous)).toBeGreaterThan(1000);
    expect(count(calls[0].previousSummary!)).toBeLessThanOrEqual(500);
    for (const call of calls) expect(inputTokens(call)).toBeLessThanOrEqual(1000);
  });

  test('an empty summary from the summarizer is an error, never a result', async () => {
    const blank: Summarizer = { name: 'blank', inputBudgetTokens: 10_000, summarize: async () => '  \n' };
    await expect(summarizeRolling(blank, { messages: transcript(10, 1), signal: live(), countTokens: count })).rejects.toThrow(/blank returned an empty summary/);
  });

  test('an abort stops the fold, even when the summarizer ignores the signal', async () => {
    const controller = new AbortController();
    const reason = new Error('job timed out');
    let calls = 0;
    const deaf: Summarizer = {
      name: 'deaf',
      inputBudgetTokens: 500,
      async summarize() {
        calls++;
        controller.abort(reason);
        return 'summary';
      },
    };
    await expect(summarizeRolling(deaf, { messages: transcript(200, 2), signal: controller.signal, countTokens: count })).rejects.toBe(reason);
    expect(calls).toBe(1);
  });

  test('no new messages: the previous summary stands with no call; with nothing at all it throws', async () => {
    const { summarizer, calls } = recording(createExtractiveSummarizer());
    await expect(summarizeRolling(summarizer, { previousSummary: 'kept', messages: [], signal: live() })).resolves.toEqual({ summary: 'kept', calls: 0 });
    expect(calls).toHaveLength(0);
    await expect(summarizeRolling(summarizer, { messages: [], signal: live() })).rejects.toThrow(/nothing to summarize/);
  });

  test('entryTokens counts the rendered entry, names and arguments included', () => {
    const bare: TranscriptEntry = { role: 'assistant', text: '', calls: [], results: [] };
    const withCall: TranscriptEntry = { ...bare, calls: [{ id: 'c1', name: 'get_order_details', arguments: '{"order_id":"ZFA04Y"}' }] };
    expect(entryTokens(withCall, count)).toBeGreaterThan(entryTokens(bare, count) + count('get_order_details'));
  });
});
