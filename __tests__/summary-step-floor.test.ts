import { afterAll, describe, expect, test } from '@jest/globals';
import { get_encoding } from 'tiktoken';
import { compressContext, compressWithSummary, createCompressor, createExtractiveSummarizer, createTokenCounter, type OpenAIChatMessage, type SummaryStartEvent } from '../src/index.js';
import { generateCodeAgentConversation, generateSupportAgentConversation } from '../bench/fixtures/domains/index.js';
import { modelRequestEnds } from '../bench/fixtures/conversation.js';

/**
 * A chat whose floor (a long system prompt and the kept tail) already stands above the low-water
 * mark: no fold can bring its view down to the mark, so its view stays at the trigger whatever is
 * folded. Folding whatever just became foldable then makes one summary per request, each of one
 * turn (a summarizer call, and a new summary text that rewrites the prompt prefix after it, every
 * request). Each background summary should fold at least a fold step's worth of turns
 * (`1 - lowWaterMark` of the trigger), as it does where the mark can be reached.
 *
 * Judged from outside: the `summary:start` events' ranges, each range's tokens counted here with
 * tiktoken on the messages' own text (not the project's counter), and summarizer calls per request.
 */

const BUDGET = 3_000;
const THRESHOLD = Math.floor(0.75 * BUDGET); // the compressor's default trigger
const LOW_WATER = 0.7;
const STEP = (1 - LOW_WATER) * THRESHOLD;

const enc = get_encoding('o200k_base');
afterAll(() => enc.free());

/** Tokens of a message's text and call arguments, give or take the few the wire format adds. */
function roughTokens(m: OpenAIChatMessage): number {
  let t = 4;
  if (typeof m.content === 'string') t += enc.encode_ordinary(m.content).length;
  else if (Array.isArray(m.content)) t += enc.encode_ordinary(JSON.stringify(m.content)).length;
  for (const c of m.tool_calls ?? []) t += enc.encode_ordinary(c.function.name + c.function.arguments).length + 4;
  return t;
}

/** A system prompt of about `tokens` tokens (plain instructions, repeated). */
function longSystemPrompt(tokens: number): OpenAIChatMessage {
  const sentence = 'Answer precisely, cite the record you used, and ask before any change that cannot be undone. ';
  const per = enc.encode_ordinary(sentence).length;
  return { role: 'system', content: sentence.repeat(Math.ceil(tokens / per)) };
}

async function replay(history: OpenAIChatMessage[], recall = false, keepLastYields = false): Promise<{ folds: SummaryStartEvent[]; requests: number; triggered: number }> {
  const compressor = createCompressor({
    maxContextTokens: BUDGET, lowWaterMark: LOW_WATER, keepLast: 4, keepLastYields, recall,
    summarizer: createExtractiveSummarizer(), counter: createTokenCounter(),
  });
  const folds: SummaryStartEvent[] = [];
  compressor.on('summary:start', (e) => { folds.push(e); });
  let requests = 0;
  let triggered = 0;
  try {
    for (const end of modelRequestEnds(history)) {
      const request = history.slice(0, end);
      const { report } = await compressor.compress('chat', request);
      requests++;
      if (report.tokensBefore >= THRESHOLD) triggered++;
      compressor.afterResponse('chat', request, report);
      await compressor.drain();
    }
  } finally {
    await compressor.close();
  }
  return { folds, requests, triggered };
}

describe('a chat whose floor stands above the low-water mark is summarized in steps, not one turn per request', () => {
  for (const [name, generate] of [['code agent', generateCodeAgentConversation], ['support agent', generateSupportAgentConversation]] as const) {
    test(name, async () => {
      const generated = generate({ messages: 160, seed: 4242 });
      // The system prompt alone is above the mark (0.7 x 2,250 = 1,575 tokens).
      const history = [longSystemPrompt(1_650), ...generated.filter((m) => m.role !== 'system')];
      // The kept tail sent whole (keepLastYields false): the floor stays above the mark.
      const { folds, triggered } = await replay(history);
      expect(triggered).toBeGreaterThan(20);
      expect(folds.length).toBeGreaterThan(0);
      // Folds are a step's worth of turns (a chat's first takes whatever there is; one whose
      // request had not even counted its oldest turns, because the newest alone passed the budget,
      // folds what that request dropped).
      const tokens = folds.slice(1).map((f) => history.slice(f.from, f.to).reduce((s, m) => s + roughTokens(m), 0)).sort((a, b) => a - b);
      expect(tokens[Math.floor(tokens.length / 2)]).toBeGreaterThanOrEqual(STEP);
      expect(tokens.filter((t) => t < 0.9 * STEP).length).toBeLessThanOrEqual(1);
      // So there are far fewer summaries than requests over the trigger.
      expect(folds.length).toBeLessThanOrEqual(Math.ceil(triggered / 2));
    });

    test(`${name}, the kept tail yielding to the budget (the default)`, async () => {
      const generated = generate({ messages: 160, seed: 4242 });
      const history = [longSystemPrompt(1_650), ...generated.filter((m) => m.role !== 'system')];
      const { folds, triggered } = await replay(history, false, true);
      expect(triggered).toBeGreaterThan(20);
      // A view the tail yielded to drops turns no summary covers yet, and the next fold takes
      // them, a step or not; folds are still a step's worth in the main, and far fewer than the
      // requests over the trigger.
      const tokens = folds.slice(1).map((f) => history.slice(f.from, f.to).reduce((s, m) => s + roughTokens(m), 0)).sort((a, b) => a - b);
      expect(tokens[Math.floor(tokens.length / 2)]).toBeGreaterThanOrEqual(STEP);
      expect(folds.length).toBeLessThanOrEqual(Math.ceil(triggered / 2));
    });
  }

  /** The code agent's history behind the long system prompt. */
  const history = () => [longSystemPrompt(1_650), ...generateCodeAgentConversation({ messages: 160, seed: 4242 }).filter((m) => m.role !== 'system')];

  test('with recall on, every trigger folds at once: what the view drops is recallable only once a summary covers it', async () => {
    const { folds, triggered } = await replay(history(), true);
    expect(folds.length).toBeGreaterThan(Math.ceil(triggered / 2));
  });

  test('a one-shot summary (compressWithSummary) folds what the request asks for, a step or not', async () => {
    // Short turns behind the long system prompt: the first requests over the trigger have little to fold.
    const h: OpenAIChatMessage[] = [longSystemPrompt(1_650)];
    for (let k = 0; k < 40; k++) h.push({ role: 'user', content: `Question ${k}: which release added option opt_${k}, and in which file?` }, { role: 'assistant', content: `Release 4.${k}.0 added opt_${k}, in src/options/part_${k}.ts line ${100 + k}.` });
    const planning = { maxContextTokens: BUDGET, compressionThresholdTokens: THRESHOLD, lowWaterMark: LOW_WATER, keepLast: 4, counter: createTokenCounter() };
    let checked = 0;
    for (let end = 2; end <= h.length; end += 2) {
      const request = h.slice(0, end);
      const asked = compressContext(request, planning).report.summarize;
      if (!asked?.belowStep) continue;
      const result = await compressWithSummary(request, { ...planning, summarizer: createExtractiveSummarizer() });
      expect(result.coveredIds.length).toBeGreaterThanOrEqual(asked.end - asked.start);
      if (++checked === 5) break;
    }
    expect(checked).toBeGreaterThan(0);
  });
});
