import { describe, expect, test } from '@jest/globals';
import OpenAI from 'openai';
import type { FunctionTool, ResponseInputItem } from 'openai/resources/responses/responses';
import { compressorOf, withCtxfold } from '../../src/adapters/openai/index.js';
import { validateMessages } from '../../src/formats/profiles.js';
import { recallToolDefinition } from '../../src/recall/tool-definition.js';
import type { CompressorEvents } from '../../src/runtime/compressor.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import { checkResponsesInput } from '../helpers/openai-responses-checker.js';
import { chatStandInForFile, type StandInReply } from './chat-stand-in.js';

const BUDGET = 2000;
const counter = createTokenCounter();
const FACT = 'Noted: the garden gate opens with code ZT-9083, written under the red mailbox.';

const bed = chatStandInForFile();
const { open } = bed;

/**
 * A Responses input of `turns` user/assistant pairs (about 70 tokens each) after a system message,
 * with one answered application call in turn 3; item #2 (the first answer) holds a sentence found nowhere else.
 */
function history(turns: number): ResponseInputItem[] {
  const out: ResponseInputItem[] = [{ role: 'system', content: 'You are a careful assistant.' }];
  for (let t = 0; t < turns; t++) {
    out.push({ role: 'user', content: `Question ${t} about shelf ${t % 7}. ${'Some filler words for the question. '.repeat(8)}` });
    if (t === 3) {
      out.push({ type: 'function_call', call_id: 'app_call_3', name: 'lookup', arguments: '{"q":"shelf 3"}' });
      out.push({ type: 'function_call_output', call_id: 'app_call_3', output: 'shelf 3 holds boxes' });
    }
    out.push({ role: 'assistant', content: t === 0 ? FACT : `Answer ${t}. ${'Some filler words for the answer. '.repeat(8)}` });
  }
  return out;
}

const APP_TOOL: FunctionTool = { type: 'function', name: 'lookup', description: 'Looks a thing up.', parameters: { type: 'object', properties: { q: { type: 'string' } } }, strict: false };

/** A wrapped client with recall on, whose chat "r" already has a summary covering its early items. */
async function withSummary(rounds?: number) {
  const client = withCtxfold(new OpenAI({ apiKey: 'k', baseURL: bed.server.baseURL, maxRetries: 0 }), {
    maxContextTokens: BUDGET, keepLast: 4, recall: rounds === undefined ? true : { rounds }, counter,
  });
  const compressor = compressorOf(client)!;
  open.push(compressor);
  const reports: CompressorEvents['compressed']['report'][] = [];
  compressor.on('compressed', (e) => reports.push(e.report));
  const input = history(24);
  await client.responses.create({ model: 'm', input, metadata: { chat_id: 'r' }, tools: [APP_TOOL] });
  await compressor.drain();
  return { client, compressor, input, reports };
}

type Body = Record<string, unknown>;
type Item = Record<string, unknown>;
const toolNames = (body: Body) => ((body.tools ?? []) as { name: string }[]).map((t) => t.name);
const inputOf = (body: Body) => body.input as Item[];
const texts = (body: Body) => inputOf(body).map((m) => (typeof m.content === 'string' ? m.content : ''));
const recallCall = (args: unknown) => ({ name: 'ctxfold_recall', arguments: args });
const ask = (input: ResponseInputItem[], text: string): ResponseInputItem[] => [...input, { role: 'user', content: text }];
/** Sends a turn and returns the response and the request bodies the stand-in got for it. */
async function turn(client: OpenAI, input: ResponseInputItem[], replies: StandInReply[]) {
  const before = bed.server.bodies.length;
  bed.server.enqueue(...replies);
  const response = await client.responses.create({ model: 'm', input, instructions: 'Be brief.', max_output_tokens: 300, metadata: { chat_id: 'r' }, tools: [APP_TOOL] });
  return { response, sent: bed.server.bodies.slice(before), paths: bed.server.paths.slice(before) };
}

describe('ctxfold/openai answers ctxfold_recall calls on responses.create (non-streamed)', () => {
  test('the model recalls #2: the second request carries the call (after its reasoning) and its output with the original text; the application gets the final answer only', async () => {
    const { client, input, reports } = await withSummary();
    const asked = ask(input, 'What opens the garden gate again?');
    const copy = structuredClone(asked);
    const { response, sent, paths } = await turn(client, asked, [
      { reasoning: 'The summary lacks the code; read #2 again.', calls: [recallCall({ ids: ['#2'] })] },
      { text: 'The code is ZT-9083.' },
    ]);

    expect(response.output_text).toBe('The code is ZT-9083.');
    expect(response.output.map((i) => i.type)).toEqual(['message']);
    // The response echoes the request's tools (as the API does): the application sees its own only.
    expect(response.tools.map((t) => (t as { name: string }).name)).toEqual(['lookup']);
    expect(asked).toEqual(copy); // the application's input list (and its items) never changed
    expect(paths).toEqual(['/v1/responses', '/v1/responses']);
    const [first, second] = sent;
    // The first view no longer holds the item: it was summarized away, and the summary says what can be recalled.
    expect(texts(first).some((c) => c.includes('red mailbox'))).toBe(false);
    expect(texts(first).find((c) => c.startsWith('[Summary of'))).toMatch(/#1-#\d+.*ctxfold_recall/);
    expect(toolNames(first)).toEqual(['lookup', 'ctxfold_recall']);
    expect((first.tools as unknown[])[1]).toEqual(recallToolDefinition('openai-responses'));
    // The second request ends with the model's output items, in order, then the call's output.
    const tail = inputOf(second).slice(-3);
    const n = bed.server.bodies.indexOf(second); // the stand-in numbers its replies from 1: the first view got reply n
    expect(tail[0]).toMatchObject({ type: 'reasoning', id: `rs_${n}` });
    expect(tail[1]).toMatchObject({ type: 'function_call', id: `fc_${n}_0`, call_id: `call_${n}_0`, name: 'ctxfold_recall' });
    expect(tail[2]).toMatchObject({ type: 'function_call_output', call_id: `call_${n}_0` });
    expect(tail[2].output).toContain(FACT);
    expect(tail[2].output).toContain('--- #2 (assistant) ---');
    // Same body otherwise: only the input (and the tools, recomputed to the same list) differ.
    const rest = ({ input: _i, ...others }: Body) => others;
    expect(rest(second)).toEqual(rest(first));
    // Both views are valid (ctxfold's profile and the independent checker) and within the budget.
    for (const body of [first, second]) {
      expect(validateMessages(inputOf(body), 'openai-responses')).toEqual([]);
      expect(checkResponsesInput(inputOf(body))).toEqual([]);
    }
    expect(reports.slice(-2).map((r) => r.format)).toEqual(['openai-responses', 'openai-responses']);
    for (const r of reports.slice(-2)) expect(r.tokensAfter).toBeLessThanOrEqual(BUDGET);
  });

  test('two recall calls in one response: one function_call_output per call, after both calls', async () => {
    const { client, input } = await withSummary();
    const { response, sent } = await turn(client, ask(input, 'The gate?'), [
      { calls: [recallCall({ ids: ['#1'] }), recallCall({ query: 'ZT-9083' })] },
      { text: 'found it' },
    ]);
    expect(response.output_text).toBe('found it');
    const tail = inputOf(sent[1]).slice(-4);
    const n = bed.server.bodies.indexOf(sent[1]);
    expect(tail.map((i) => [i.type, i.call_id])).toEqual([
      ['function_call', `call_${n}_0`], ['function_call', `call_${n}_1`], ['function_call_output', `call_${n}_0`], ['function_call_output', `call_${n}_1`],
    ]);
    expect(tail[3].output).toContain('red mailbox'); // the search found the item by its identifier
    expect(validateMessages(inputOf(sent[1]), 'openai-responses')).toEqual([]);
  });

  test('a response mixing recall with the application\'s call is passed on with the recall call removed (its reasoning kept)', async () => {
    const { client, input } = await withSummary();
    const { response, sent } = await turn(client, ask(input, 'Go.'), [
      { reasoning: 'Both.', calls: [recallCall({ ids: ['#2'] }), { name: 'lookup', arguments: { q: 'x' } }] },
    ]);
    expect(sent).toHaveLength(1);
    expect(response.output.map((i) => [i.type, 'name' in i ? i.name : undefined])).toEqual([['reasoning', undefined], ['function_call', 'lookup']]);
  });

  test('an answer with no recall call keeps the application\'s tools in its echo, without the recall tool', async () => {
    const { client, input } = await withSummary();
    const { response, sent } = await turn(client, ask(input, 'Hi.'), [{ text: 'Hello.' }]);
    expect(toolNames(sent[0])).toEqual(['lookup', 'ctxfold_recall']);
    expect(response.output_text).toBe('Hello.');
    expect(response.tools.map((t) => (t as { name: string }).name)).toEqual(['lookup']);
  });

  test('text next to a recall call is not answered: the application gets the text, without the call', async () => {
    const { client, input } = await withSummary();
    const { response, sent } = await turn(client, ask(input, 'Go.'), [{ say: 'Let me look.', calls: [recallCall({ ids: ['#2'] })] }]);
    expect(sent).toHaveLength(1);
    expect(response.output.map((i) => i.type)).toEqual(['message']);
    expect(response.output_text).toBe('Let me look.');
  });

  test('rounds are bounded: past them a reply that only recalls is answered once more and the model asked with tool_choice none', async () => {
    const { client, input } = await withSummary(2);
    const again: StandInReply = { reasoning: 'Once more.', calls: [recallCall({ ids: ['#1'] })] };
    const { response, sent } = await turn(client, ask(input, 'Go.'), [again, again, again, { text: 'Done.' }]);
    expect(sent).toHaveLength(4); // the first call, two answered rounds, the final call
    expect(sent.map((b) => b.tool_choice)).toEqual([undefined, undefined, undefined, 'none']);
    expect(response.output.map((i) => i.type)).toEqual(['message']);
    // Each round's view holds every earlier round, valid.
    expect(inputOf(sent[3]).filter((i) => i.type === 'function_call_output' && String(i.call_id).startsWith('call_'))).toHaveLength(3);
    for (const body of sent) expect(validateMessages(inputOf(body), 'openai-responses')).toEqual([]);
  });

  test('a final reply that recalls anyway comes back without recall calls (and without the reasoning that went with them)', async () => {
    const { client, input } = await withSummary(1);
    const again: StandInReply = { reasoning: 'Once more.', calls: [recallCall({ ids: ['#1'] })] };
    const { response, sent } = await turn(client, ask(input, 'Go.'), [again, again, again]);
    expect(sent).toHaveLength(3); // the first call, one answered round, the final call
    expect(sent[2].tool_choice).toBe('none');
    expect(response.output).toEqual([]);
  });

  test('previous_response_id and a string input get no recall tool and no recall note', async () => {
    const { client, input } = await withSummary();
    const before = bed.server.bodies.length;
    await client.responses.create({ model: 'm', input: ask(input, 'Go.').slice(-1), previous_response_id: 'resp_1', metadata: { chat_id: 'r' }, tools: [APP_TOOL] });
    await client.responses.create({ model: 'm', input: 'Go.', metadata: { chat_id: 'r' }, tools: [APP_TOOL] });
    const bodies = bed.server.bodies.slice(before);
    expect(bodies).toHaveLength(2);
    for (const body of bodies) {
      expect(toolNames(body)).toEqual(['lookup']);
      expect(JSON.stringify(body.input)).not.toContain('ctxfold_recall');
    }
    expect(bodies[1].input).toBe('Go.');
  });
});

describe('ctxfold/openai answers ctxfold_recall calls in streamed responses.create', () => {
  /** The text of a streamed response's output (the stream helper's final response carries no `output_text`). */
  const textOf = (output: { type: string; content?: { type: string; text?: string }[] }[]) =>
    output.flatMap((o) => (o.type === 'message' ? (o.content ?? []).map((c) => (c.type === 'output_text' ? c.text ?? '' : '')) : [])).join('');

  test('a recall call first: answered here; the application\'s stream has one response, the second answer, echoing its own tools', async () => {
    const { client, input } = await withSummary();
    const before = bed.server.bodies.length;
    bed.server.enqueue({ reasoning: 'Read #2 again.', calls: [recallCall({ ids: ['#2'] })] }, { text: 'The code is ZT-9083.' });
    const stream = client.responses.stream({ model: 'm', input: ask(input, 'What opens the gate?'), metadata: { chat_id: 'r' }, tools: [APP_TOOL] });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const final = await stream.finalResponse();
    expect(textOf(final.output)).toBe('The code is ZT-9083.');
    expect(final.output.map((i) => i.type)).toEqual(['message']);
    expect(final.tools.map((t) => (t as { name: string }).name)).toEqual(['lookup']);
    expect(types.filter((t) => t === 'response.created')).toHaveLength(1);
    const [first, second, ...more] = bed.server.bodies.slice(before);
    expect(more).toEqual([]);
    expect([first.stream, second.stream]).toEqual([true, true]);
    expect(toolNames(first)).toEqual(['lookup', 'ctxfold_recall']);
    const tail = inputOf(second).slice(-3);
    expect(tail.map((i) => i.type)).toEqual(['reasoning', 'function_call', 'function_call_output']);
    expect(String(tail[2].output)).toContain(FACT);
    for (const body of [first, second]) expect(validateMessages(inputOf(body), 'openai-responses')).toEqual([]);
  });

  test('recall mixed with the application\'s call: one request; the application gets its call alone, output indexes and sequence numbers unbroken', async () => {
    const { client, input } = await withSummary();
    const before = bed.server.bodies.length;
    bed.server.enqueue({ calls: [recallCall({ ids: ['#2'] }), { name: 'lookup', arguments: { q: 'x' } }] });
    const stream = await client.responses.create({ model: 'm', input: ask(input, 'Go.'), metadata: { chat_id: 'r' }, tools: [APP_TOOL], stream: true });
    const events: Record<string, unknown>[] = [];
    for await (const event of stream) events.push(event as unknown as Record<string, unknown>);
    expect(bed.server.bodies.length - before).toBe(1);
    expect(JSON.stringify(events)).not.toContain('ctxfold_recall');
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect([...new Set(events.filter((e) => typeof e.output_index === 'number').map((e) => e.output_index))]).toEqual([0]);
    const completed = events.at(-1)! as { type: string; response: { output: { name?: string }[] } };
    expect(completed.type).toBe('response.completed');
    expect(completed.response.output.map((o) => o.name)).toEqual(['lookup']);
  });

  test('text next to a recall call streams through; the call is removed, no second request', async () => {
    const { client, input } = await withSummary();
    const before = bed.server.bodies.length;
    bed.server.enqueue({ say: 'Let me look.', calls: [recallCall({ ids: ['#2'] })] });
    const final = await client.responses.stream({ model: 'm', input: ask(input, 'Go.'), metadata: { chat_id: 'r' }, tools: [APP_TOOL] }).finalResponse();
    expect(bed.server.bodies.length - before).toBe(1);
    expect(textOf(final.output)).toBe('Let me look.');
    expect(final.output.map((i) => i.type)).toEqual(['message']);
  });
});
