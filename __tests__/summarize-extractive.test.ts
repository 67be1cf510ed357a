import { describe, expect, test } from '@jest/globals';
import type { TranscriptEntry } from '../src/formats/lens.js';
import { openaiChatLens } from '../src/formats/openai-chat/lens.js';
import { createExtractiveSummarizer, foldEntries, LEDGER_SHARE, ledgerOf, writeSummary } from '../src/summarize/extractive.js';
import { emptyLedger, ledgerBuilder, ledgerStats, parseLedger } from '../src/summarize/ledger.js';
import { emptyMemory } from '../src/summarize/working-memory.js';
import { generateConversation } from '../bench/fixtures/conversation.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import { transcriptOf } from '../src/core/transcript.js';
import { InputError } from '../src/errors.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { corpusDescribe, loadCorpus } from './helpers/corpus.js';

const count = createTokenCounter().text;
const live = () => new AbortController().signal;

/** The items of one section of a summary (`Name:` header, then `- item` lines). */
function section(summary: string, name: string): string[] {
  const lines = summary.split('\n');
  const start = lines.indexOf(`${name}:`);
  if (start < 0) return [];
  const items: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith('- ')) break;
    items.push(line.slice(2));
  }
  return items;
}

/** The facts of a summary's ledger block, as `key: value`, in the order the block writes them. */
function ledgerFacts(summary: string): string[] {
  return parseLedger(summary).facts.map((f) => `${f.key}: ${f.value}`);
}

/** The values of every fact a summary holds: its ledger block's, and those its other sections state. */
function summaryValues(summary: string): string[] {
  return ledgerOf(summary).facts.map((f) => f.value);
}

function entries(messages: Parameters<typeof openaiChatLens.read>[0][]): TranscriptEntry[] {
  return transcriptOf(messages, openaiChatLens);
}

/** One round of a synthetic support chat about order `ORD-<n>`. */
function orderRound(n: number): TranscriptEntry[] {
  const order = `ORD-${1000 + n}`;
  const tracking = `TRK${String(n * 7919).padStart(6, '0')}X`;
  return [
    { role: 'user', text: `Where is my order ${order}? It was due last week.`, calls: [], results: [] },
    { role: 'assistant', text: '', calls: [{ id: `call_${n}`, name: 'lookup_order', arguments: JSON.stringify({ order_id: order }) }], results: [] },
    { role: 'tool', text: '', calls: [], results: [{ id: `call_${n}`, content: JSON.stringify({ order_id: order, status: 'shipped', tracking_number: tracking }) }] },
    { role: 'assistant', text: `Order ${order} has shipped with tracking number ${tracking}.`, calls: [], results: [] },
  ];
}

describe('extractive summarizer', () => {
  test('is deterministic: the same input gives the same text, whoever builds the summarizer', async () => {
    const input = [...orderRound(1), ...orderRound(2)];
    const a = await createExtractiveSummarizer({ countTokens: count }).summarize({ messages: input, signal: live() });
    const b = await createExtractiveSummarizer().summarize({ messages: structuredClone(input), signal: live() });
    expect(a).toBe(b);
    expect(a).toContain('Tool calls:');
  });

  test('keeps the request, each call as name(args), identifiers from results, and the conclusion', async () => {
    const summary = await createExtractiveSummarizer().summarize({ messages: orderRound(3), signal: live() });
    expect(section(summary, 'Goal')).toEqual(['Where is my order ORD-1003? It was due last week.']);
    expect(section(summary, 'Tool calls')).toEqual(['lookup_order(order_id=ORD-1003)']);
    const tracking = `TRK${String(3 * 7919).padStart(6, '0')}X`;
    expect(summaryValues(summary)).toEqual(expect.arrayContaining(['ORD-1003', tracking]));
    expect(section(summary, 'Conclusions').join(' ')).toContain('has shipped');
    // The request and the answer state the whole record, so the Facts block does not write it
    // again; its meta line counts both facts as kept.
    expect(ledgerFacts(summary)).toEqual([]);
    expect(ledgerStats(summary)).toEqual({ seen: 2, kept: 2 });
  });

  test('where no fact fits beside the goal, the summary still says how many it left out (its meta line)', async () => {
    const input = [...orderRound(1), ...orderRound(2), ...orderRound(3)];
    const goal = count(`Summary of earlier messages (working memory, oldest items first):\nGoal:\n- ${input[0].text}`);
    // Room for the goal and the meta line, not for a fact line.
    const summary = await createExtractiveSummarizer({ countTokens: count }).summarize({ messages: input, signal: live(), maxTokens: goal + 18 });
    expect(count(summary)).toBeLessThanOrEqual(goal + 18);
    expect(ledgerFacts(summary)).toEqual([]);
    const stats = ledgerStats(summary);
    expect(stats).toBeDefined();
    expect(stats!.seen).toBeGreaterThan(stats!.kept);
  });

  test('a record the other sections only partly state is written whole: its fields stay together', async () => {
    const round = orderRound(4);
    // The answer no longer states the tracking number: the record's line keeps both fields.
    round[3] = { ...round[3], text: 'Order ORD-1004 has shipped.' };
    const summary = await createExtractiveSummarizer().summarize({ messages: round, signal: live() });
    expect(ledgerFacts(summary)).toEqual(['order_id: ORD-1004', `tracking_number: TRK${String(4 * 7919).padStart(6, '0')}X`]);
  });

  test('records tool errors with the tool name (paired by the structure scan), and does not take data that mentions a failure for an error', async () => {
    const history: OpenAIChatMessage[] = [
      { role: 'assistant', content: null, tool_calls: [
        { id: 'a', type: 'function', function: { name: 'cancel_order', arguments: '{"order_id":"ZZZ999"}' } },
        { id: 'b', type: 'function', function: { name: 'get_logs', arguments: '{}' } },
      ] },
      { role: 'tool', tool_call_id: 'b', content: '{"status":"ok","note":"the previous export failed"}' },
      { role: 'tool', tool_call_id: 'a', content: 'Error: order ZZZ999 not found' },
    ];
    const summary = await createExtractiveSummarizer().summarize({ messages: transcriptOf(history, openaiChatLens), signal: live() });
    expect(section(summary, 'Errors')).toEqual(['cancel_order: Error: order ZZZ999 not found']);
  });

  test('redacts secrets in arguments and never copies them from results', async () => {
    const summary = await createExtractiveSummarizer().summarize({
      messages: [
        { role: 'assistant', text: '', calls: [{ id: 'a', name: 'login', arguments: '{"user_id":"ann_77","password":"hunter2-secret","max_tokens":50}' }], results: [] },
        { role: 'tool', text: '', calls: [], results: [{ id: 'a', content: '{"session_id":"S-99812","api_key":"sk-LIVE-000111","auth":{"access_token":"tok-ABC12345"}}' }] },
      ],
      signal: live(),
    });
    expect(summary).toContain('login(user_id=ann_77, password=[redacted], max_tokens=50)');
    expect(summary).toContain('S-99812');
    expect(summary).not.toContain('hunter2');
    expect(summary).not.toContain('sk-LIVE');
    expect(summary).not.toContain('tok-ABC');
  });

  test('rolling: a repeated fact appears once, moved to the newest end', async () => {
    const s = createExtractiveSummarizer();
    const first = await s.summarize({ messages: orderRound(1), signal: live() });
    const second = await s.summarize({ previousSummary: first, messages: [...orderRound(2), ...orderRound(1)], signal: live() });
    expect(summaryValues(second).filter((v) => v.includes('ORD-1001'))).toEqual(['ORD-1001']);
    const requests = section(second, 'User requests');
    expect(requests.filter((r) => r.includes('ORD-1001'))).toHaveLength(1);
    expect(requests.findIndex((r) => r.includes('ORD-1001'))).toBeGreaterThan(requests.findIndex((r) => r.includes('ORD-1002')));
    expect(section(second, 'Goal')).toEqual(section(first, 'Goal'));
  });

  test('rolling: older facts stay until the budget forces them out, then the newest are kept', async () => {
    const budget = 300;
    const s = createExtractiveSummarizer({ maxSummaryTokens: budget });
    let summary: string | undefined;
    const oldestKept: boolean[] = [];
    const sizes: number[] = [];
    for (let n = 1; n <= 40; n++) {
      summary = await s.summarize({ previousSummary: summary, messages: orderRound(n), signal: live() });
      // The goal (round 1's request) is never dropped: follow round 2's order instead.
      if (n >= 2) {
        sizes.push(count(summary));
        oldestKept.push(summaryValues(summary).includes('ORD-1002'));
      }
      expect(summary).toContain(`ORD-${1000 + n}`);
      expect(count(summary)).toBeLessThanOrEqual(budget);
    }
    const firstDrop = oldestKept.indexOf(false);
    // Kept for several rounds, dropped once the summary was full, and never back.
    expect(firstDrop).toBeGreaterThan(2);
    expect(oldestKept.slice(firstDrop).every((kept) => !kept)).toBe(true);
    expect(sizes[firstDrop]).toBeGreaterThan(budget * 0.8);
    // With room to spare nothing is dropped.
    const roomy = createExtractiveSummarizer({ maxSummaryTokens: 100_000 });
    let all: string | undefined;
    for (let n = 1; n <= 40; n++) all = await roomy.summarize({ previousSummary: all, messages: orderRound(n), signal: live() });
    for (let n = 1; n <= 40; n++) expect(summaryValues(all!)).toContain(`ORD-${1000 + n}`);
  });

  test.each([32, 64, 150])('a budget of %i tokens is met, and the goal is the last item to go', async (budget) => {
    const input = Array.from({ length: 20 }, (_, n) => orderRound(n)).flat();
    const summary = await createExtractiveSummarizer({ maxSummaryTokens: budget }).summarize({ messages: input, signal: live() });
    expect(count(summary)).toBeLessThanOrEqual(budget);
    expect(section(summary, 'Goal')).toHaveLength(1);
    expect(section(summary, 'Goal')[0]).toMatch(/^Where is my order/);
  });

  test('a previous summary of another shape is kept as earlier notes', async () => {
    const previous = 'The user is Ann (user_id ann_77) and wants a refund for order ORD-5.\nShe prefers email contact.';
    const summary = await createExtractiveSummarizer().summarize({ previousSummary: previous, messages: orderRound(4), signal: live() });
    expect(section(summary, 'Earlier notes')).toEqual(previous.split('\n'));
    expect(section(summary, 'Goal')).toEqual([]);
    expect(section(summary, 'User requests')).toHaveLength(1);
  });

  test('never returns an empty summary, even for messages with nothing to keep', async () => {
    const summary = await createExtractiveSummarizer().summarize({
      messages: [{ role: 'system', text: 'You are a helpful assistant.', calls: [], results: [] }],
      signal: live(),
    });
    expect(summary.trim().length).toBeGreaterThan(0);
    expect(summary).toContain('1 earlier message');
  });

  test('an already aborted signal rejects with its reason', async () => {
    const controller = new AbortController();
    const reason = new Error('job cancelled');
    controller.abort(reason);
    await expect(createExtractiveSummarizer().summarize({ messages: orderRound(1), signal: controller.signal })).rejects.toBe(reason);
  });

  test('an abort during the work stops it', async () => {
    const controller = new AbortController();
    const reason = new Error('timed out');
    let calls = 0;
    const countAndAbort = (text: string) => {
      if (++calls === 3) controller.abort(reason);
      return count(text);
    };
    const input = Array.from({ length: 30 }, (_, n) => orderRound(n)).flat();
    await expect(createExtractiveSummarizer({ countTokens: countAndAbort, maxSummaryTokens: 100 }).summarize({ messages: input, signal: controller.signal })).rejects.toBe(reason);
  });

  test('rejects a budget too small to hold anything', () => {
    expect(() => createExtractiveSummarizer({ maxSummaryTokens: 10 })).toThrow(InputError);
    expect(() => createExtractiveSummarizer({ inputBudgetTokens: 0 })).toThrow(/inputBudgetTokens/);
  });
});

corpusDescribe(describe)('extractive summarizer on real conversations', () => {
  const corpus = loadCorpus();

  /** `key=value` pairs of a call's arguments whose key names an id (`user_id`, `order_id`...). */
  function idArguments(args: string): string[] {
    const parsed = JSON.parse(args || '{}') as Record<string, unknown>;
    return Object.entries(parsed).filter(([k, v]) => /_id$/.test(k) && typeof v === 'string').map(([, v]) => v as string);
  }

  test('with room to spare, every tool name, id argument and tool error of every conversation is kept', async () => {
    const s = createExtractiveSummarizer({ maxSummaryTokens: 1_000_000 });
    let checkedIds = 0;
    let checkedErrors = 0;
    for (const conversation of corpus) {
      const summary = await s.summarize({ messages: entries(conversation.messages), signal: live() });
      const calls = section(summary, 'Tool calls').join('\n');
      const errors = section(summary, 'Errors').join('\n');
      for (const m of conversation.messages) {
        for (const call of m.tool_calls ?? []) {
          expect(calls).toContain(`${call.function.name}(`);
          for (const id of idArguments(call.function.arguments)) {
            expect(calls).toContain(id);
            checkedIds++;
          }
        }
        if (m.role === 'tool' && typeof m.content === 'string' && /^Error:/.test(m.content)) {
          expect(errors).toContain(m.content.split('\n')[0].slice(0, 60));
          checkedErrors++;
        }
      }
    }
    expect(checkedIds).toBeGreaterThan(500);
    expect(checkedErrors).toBeGreaterThan(20);
  });

  test('with the default budget, every summary fits 800 tokens and keeps the ids of the newest call', async () => {
    const s = createExtractiveSummarizer();
    for (const conversation of corpus) {
      const summary = await s.summarize({ messages: entries(conversation.messages), signal: live() });
      expect(count(summary)).toBeLessThanOrEqual(800);
      const lastCall = conversation.messages.flatMap((m) => m.tool_calls ?? []).at(-1);
      if (!lastCall) continue;
      for (const id of idArguments(lastCall.function.arguments)) expect(summary).toContain(id);
    }
  });

  test('rolling over a conversation in three parts keeps the ids of all parts when there is room', async () => {
    const s = createExtractiveSummarizer({ maxSummaryTokens: 1_000_000 });
    for (const conversation of corpus.slice(0, 40)) {
      const all = entries(conversation.messages);
      const third = Math.ceil(all.length / 3);
      let summary: string | undefined;
      for (let i = 0; i < all.length; i += third) {
        summary = await s.summarize({ previousSummary: summary, messages: all.slice(i, i + third), signal: live() });
      }
      const ids = conversation.messages.flatMap((m) => m.tool_calls ?? []).flatMap((c) => idArguments(c.function.arguments));
      for (const id of ids) expect(summary).toContain(id);
      // The conversation's first real request is the goal, whichever part it was folded in.
      expect(section(summary!, 'Goal')).toHaveLength(1);
    }
  });
});

describe('the extractive summarizer writes in steps', () => {
  test('the summary it writes with turns for the event loop is the text writeSummary writes in one go', async () => {
    const messages = generateConversation({ messages: 400, seed: 5 });
    const entries = transcriptOf(messages, openaiChatLens, 1, messages.length);
    for (const room of [300, 1200, 4000]) {
      const summarizer = createExtractiveSummarizer({ maxSummaryTokens: room, countTokens: count });
      const written = await summarizer.summarize({ messages: entries, signal: live() });
      const memory = emptyMemory();
      foldEntries(memory, entries, () => {});
      const ledger = ledgerBuilder(emptyLedger());
      ledger.add(entries, () => {});
      expect(written).toBe(writeSummary(memory, ledger.ledger(), room, count, LEDGER_SHARE));
      expect(count(written)).toBeLessThanOrEqual(room);
    }
  });
});
