import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { CHAT_RECALL_STREAM } from '../../src/recall/chat-stream.js';
import { RESPONSES_RECALL_STREAM } from '../../src/recall/responses-stream.js';
import { ANTHROPIC_RECALL_STREAM } from '../../src/recall/anthropic-stream.js';
import { propertyParams } from '../helpers/property-runs.js';

/**
 * Streams with recall calls removed, judged by what a client builds from them: the accumulators
 * below are written here, apart from the project's assemblers, the way the `openai` package
 * accumulates a stream (Chat: deltas placed by `index`; Responses: the events' `output_index`,
 * `sequence_number` and the completed response).
 */

type Fields = Record<string, unknown>;
const RECALL = 'ctxfold_recall';

interface Call { readonly name: string; readonly args: string }
const callArb = fc.record({ name: fc.constantFrom(RECALL, 'lookup', 'write_file'), args: fc.string({ maxLength: 30 }) });

/** Splits a text into 1-3 pieces at positions picked from `cuts`. */
function pieces(text: string, cuts: readonly number[]): string[] {
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const out: string[] = [];
  let from = 0;
  for (const c of at) {
    out.push(text.slice(from, c));
    from = c;
  }
  out.push(text.slice(from));
  return out;
}

/** The chunks of a streamed Chat Completions answer, as OpenAI sends them. */
function chatChunks(text: string, calls: readonly Call[], cuts: readonly number[], usage: boolean): Fields[] {
  const chunk = (delta: Fields, finish: string | null = null): Fields => ({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] });
  const out = [chunk({ role: 'assistant', content: '' })];
  if (text !== '') for (const p of pieces(text, cuts)) out.push(chunk({ content: p }));
  calls.forEach((c, k) => {
    out.push(chunk({ tool_calls: [{ index: k, id: `call_${k}`, type: 'function', function: { name: c.name, arguments: '' } }] }));
    for (const p of pieces(c.args, cuts)) out.push(chunk({ tool_calls: [{ index: k, function: { arguments: p } }] }));
  });
  out.push(chunk({}, calls.length > 0 ? 'tool_calls' : 'stop'));
  if (usage) out.push({ id: 'c1', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 7 } });
  return out;
}

/** What a client builds from chunks: the text, the calls by index (a hole is a broken stream), the finish. */
function clientChat(chunks: readonly Fields[]): { text: string; calls: (Call | undefined)[]; finish: unknown } {
  let text = '';
  const calls: (Call | undefined)[] = [];
  let finish: unknown = null;
  for (const c of chunks) {
    for (const choice of c.choices as Fields[]) {
      const d = choice.delta as Fields;
      if (typeof d.content === 'string') text += d.content;
      for (const t of (d.tool_calls ?? []) as Fields[]) {
        const i = t.index as number;
        const f = (t.function ?? {}) as Fields;
        const so = calls[i] ?? { name: '', args: '' };
        calls[i] = { name: so.name + ((f.name as string) ?? ''), args: so.args + ((f.arguments as string) ?? '') };
      }
      if (choice.finish_reason) finish = choice.finish_reason;
    }
  }
  return { text, calls: Array.from({ length: calls.length }, (_, i) => calls[i]), finish };
}

describe('Chat Completions stream without recall calls', () => {
  test('a client builds the same text, the application\'s calls in order at indexes 0..k-1, and stop when only recall calls were made', () => {
    fc.assert(fc.property(fc.string({ maxLength: 20 }), fc.array(callArb, { maxLength: 4 }), fc.array(fc.nat(40), { maxLength: 2 }), fc.boolean(), (text, calls, cuts, usage) => {
      const chunks = chatChunks(text, calls, cuts, usage);
      const strip = CHAT_RECALL_STREAM.strip();
      const out = chunks.map(strip).filter((c): c is Fields => c !== undefined);
      const got = clientChat(out);
      const kept = calls.filter((c) => c.name !== RECALL);
      expect(got.text).toBe(text);
      expect(got.calls).toEqual(kept);
      const onlyRecall = calls.length > 0 && kept.length === 0;
      expect(got.finish).toBe(onlyRecall ? 'stop' : calls.length > 0 ? 'tool_calls' : 'stop');
      expect(JSON.stringify(out)).not.toContain(RECALL);
      // Chunks without a recall call pass as the same objects; the usage chunk is never dropped.
      if (!calls.some((c) => c.name === RECALL)) expect(out).toEqual(chunks);
      if (usage) expect(out.at(-1)).toBe(chunks.at(-1));
    }), propertyParams());
  });

  test('the assembled response holds what the stream carried, recall calls included', () => {
    fc.assert(fc.property(fc.string({ maxLength: 20 }), fc.array(callArb, { maxLength: 4 }), fc.array(fc.nat(40), { maxLength: 2 }), (text, calls, cuts) => {
      const a = CHAT_RECALL_STREAM.assemble();
      for (const c of chatChunks(text, calls, cuts, true)) a.push(c);
      const message = ((a.response().choices as Fields[])[0].message) as Fields;
      expect(message.content).toBe(text);
      expect(((message.tool_calls ?? []) as { function: { name: string; arguments: string } }[]).map((c) => ({ name: c.function.name, args: c.function.arguments }))).toEqual(calls);
      expect(a.response().usage).toEqual({ prompt_tokens: 7 });
    }), propertyParams());
  });

  test('signal: the first telling chunk decides (text, a recall call, another call); role and empty chunks do not', () => {
    const [role, ...rest] = chatChunks('hi', [], [], false);
    expect(CHAT_RECALL_STREAM.signal(role)).toBeUndefined();
    expect(CHAT_RECALL_STREAM.signal(rest[0])).toBe('text');
    expect(CHAT_RECALL_STREAM.signal(chatChunks('', [{ name: RECALL, args: '' }], [], false)[1])).toBe('recall');
    expect(CHAT_RECALL_STREAM.signal(chatChunks('', [{ name: 'lookup', args: '' }], [], false)[1])).toBe('other');
    expect(CHAT_RECALL_STREAM.signal({ choices: [{ index: 1, delta: { content: 'x' } }] })).toBe('other');
  });
});

type Item = { readonly type: 'reasoning' } | { readonly type: 'message'; readonly text: string } | { readonly type: 'function_call'; readonly name: string; readonly args: string };
const itemArb: fc.Arbitrary<Item> = fc.oneof(
  fc.constant({ type: 'reasoning' as const }),
  fc.record({ type: fc.constant('message' as const), text: fc.string({ minLength: 1, maxLength: 10 }) }),
  fc.record({ type: fc.constant('function_call' as const), name: fc.constantFrom(RECALL, 'lookup'), args: fc.string({ maxLength: 10 }) }),
);

const itemObject = (item: Item, i: number): Fields => (item.type === 'reasoning'
  ? { type: 'reasoning', id: `rs_${i}`, summary: [] }
  : item.type === 'message'
    ? { type: 'message', id: `msg_${i}`, role: 'assistant', content: [{ type: 'output_text', text: item.text }] }
    : { type: 'function_call', id: `fc_${i}`, call_id: `call_${i}`, name: item.name, arguments: item.args });

const LOOKUP_TOOL: Fields = { type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } };
const RECALL_TOOL: Fields = { type: 'function', name: RECALL, parameters: { type: 'object', properties: {} } };

/** The events of a streamed Responses answer, written here as the API sends them (each response echoes the request's `tools`). */
function responsesEvents(items: readonly Item[], tools: readonly Fields[] = []): Fields[] {
  const output = items.map(itemObject);
  const events: Fields[] = [{ type: 'response.created', response: { id: 'r', status: 'in_progress', output: [], tools } }];
  output.forEach((item, i) => {
    events.push({ type: 'response.output_item.added', output_index: i, item });
    if (item.type === 'message') events.push({ type: 'response.output_text.delta', output_index: i, item_id: item.id, content_index: 0, delta: items[i].type === 'message' ? (items[i] as { text: string }).text : '' });
    if (item.type === 'function_call') events.push({ type: 'response.function_call_arguments.delta', output_index: i, item_id: item.id, delta: item.arguments });
    events.push({ type: 'response.output_item.done', output_index: i, item });
  });
  events.push({ type: 'response.completed', response: { id: 'r', status: 'completed', output, tools } });
  return events.map((e, n) => ({ ...e, sequence_number: n }));
}

describe('Responses stream without recall calls', () => {
  test('sequence numbers stay 0..n-1, output indexes 0..k-1 in order, no event names a recall call or the recall tool, the completed output drops them', () => {
    fc.assert(fc.property(fc.array(itemArb, { maxLength: 5 }), fc.boolean(), fc.subarray([LOOKUP_TOOL, RECALL_TOOL]), (items, knownFirst, tools) => {
      const events = responsesEvents(items, tools);
      const completed = events.at(-1)!.response as Fields;
      const strip = RESPONSES_RECALL_STREAM.strip(knownFirst ? completed : undefined);
      const out = events.map(strip).filter((e): e is Fields => e !== undefined);
      expect(out.map((e) => e.sequence_number)).toEqual(out.map((_, n) => n));
      const indexes = out.filter((e) => typeof e.output_index === 'number').map((e) => e.output_index as number);
      for (let k = 1; k < indexes.length; k++) expect(indexes[k] - indexes[k - 1]).toBeGreaterThanOrEqual(0);
      expect([...new Set(indexes)]).toEqual([...new Set(indexes)].map((_, k) => k));
      const outputs = (out.at(-1)!.response as Fields).output as Fields[];
      const added = out.filter((e) => e.type === 'response.output_item.added').map((e) => e.item as Fields);
      expect(JSON.stringify(added)).not.toContain(RECALL);
      expect(JSON.stringify(outputs)).not.toContain(RECALL);
      // The completed output is the original without recall calls, and without the reasoning they leave last.
      const expected = items.map(itemObject).filter((o) => o.name !== RECALL);
      if (items.some((i) => i.type === 'function_call' && i.name === RECALL)) while (expected.length > 0 && expected.at(-1)!.type === 'reasoning') expected.pop();
      expect(outputs).toEqual(expected);
      // Knowing the end first, the items added are exactly the completed output's.
      if (knownFirst) expect(added).toEqual(expected);
      // Every response an event carries echoes the application's tools only.
      for (const e of out.filter((x) => x.response !== undefined)) expect((e.response as Fields).tools).toEqual(tools.filter((t) => t !== RECALL_TOOL));
      if (!items.some((i) => i.type === 'function_call' && i.name === RECALL) && !tools.includes(RECALL_TOOL)) expect(out).toEqual(events);
    }), propertyParams());
  });

  test('signal: a recall call item, another call, text deltas; reasoning and message items wait', () => {
    const s = RESPONSES_RECALL_STREAM.signal;
    expect(s({ type: 'response.output_item.added', item: { type: 'function_call', name: RECALL } })).toBe('recall');
    expect(s({ type: 'response.output_item.added', item: { type: 'function_call', name: 'lookup' } })).toBe('other');
    expect(s({ type: 'response.output_item.added', item: { type: 'web_search_call' } })).toBe('other');
    expect(s({ type: 'response.output_item.added', item: { type: 'reasoning' } })).toBeUndefined();
    expect(s({ type: 'response.output_item.added', item: { type: 'message' } })).toBeUndefined();
    expect(s({ type: 'response.output_text.delta', delta: 'x' })).toBe('text');
    expect(s({ type: 'response.output_text.delta', delta: '' })).toBeUndefined();
    expect(s({ type: 'error', message: 'x' })).toBe('other');
  });
});

/** The events of a streamed Messages answer, as Anthropic sends them: optional thinking, text, then tool uses. */
function messagesEvents(thinking: boolean, text: string, calls: readonly Call[], cuts: readonly number[]): Fields[] {
  const out: Fields[] = [{ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], stop_reason: null, usage: { input_tokens: 7, output_tokens: 1 } } }];
  let index = 0;
  if (thinking) {
    out.push({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }, { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: 'hm' } }, { type: 'content_block_stop', index });
    index++;
  }
  if (text !== '') {
    out.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
    for (const p of pieces(text, cuts)) out.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: p } });
    out.push({ type: 'content_block_stop', index });
    index++;
  }
  calls.forEach((c, k) => {
    out.push({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: `toolu_${k}`, name: c.name, input: {} } });
    for (const p of pieces(JSON.stringify({ a: c.args }), cuts)) out.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: p } });
    out.push({ type: 'content_block_stop', index });
    index++;
  });
  out.push({ type: 'message_delta', delta: { stop_reason: calls.length > 0 ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } });
  out.push({ type: 'message_stop' });
  return out;
}

/** What a client builds from Messages events: blocks placed by `index` (a hole or an index out of order is a broken stream), the stop reason. */
function clientMessages(events: readonly Fields[]): { blocks: (Fields | undefined)[]; order: number[]; stop: unknown } {
  const blocks: (Fields | undefined)[] = [];
  const order: number[] = [];
  let stop: unknown;
  for (const e of events) {
    if (e.type === 'content_block_start') {
      order.push(e.index as number);
      blocks[e.index as number] = { ...(e.content_block as Fields) };
    }
    if (e.type === 'content_block_delta') {
      const b = blocks[e.index as number]!;
      const d = e.delta as Fields;
      if (d.type === 'text_delta') b.text = `${String(b.text)}${String(d.text)}`;
      if (d.type === 'input_json_delta') b.json = `${String(b.json ?? '')}${String(d.partial_json)}`;
    }
    if (e.type === 'message_delta') stop = (e.delta as Fields).stop_reason;
  }
  return { blocks, order, stop };
}

describe('Messages (Anthropic) stream without recall calls', () => {
  test('blocks keep indexes 0..k-1 in order, no event names a recall call, the stop reason is end_turn when only recall calls were used', () => {
    fc.assert(fc.property(fc.boolean(), fc.string({ maxLength: 20 }), fc.array(callArb, { maxLength: 4 }), fc.array(fc.nat(), { maxLength: 3 }), (thinking, text, calls, cuts) => {
      const events = messagesEvents(thinking, text, calls, cuts);
      const strip = ANTHROPIC_RECALL_STREAM.strip();
      const kept = events.map((e) => strip(e)).filter((e): e is Fields => e !== undefined);
      expect(JSON.stringify(kept)).not.toContain(RECALL);
      const got = clientMessages(kept);
      const whole = clientMessages(events);
      const expected = whole.blocks.filter((b) => !(b?.type === 'tool_use' && b.name === RECALL));
      expect(got.blocks).toEqual(expected);
      expect(got.order).toEqual(expected.map((_, i) => i));
      const others = calls.some((c) => c.name !== RECALL);
      expect(got.stop).toBe(calls.length === 0 ? 'end_turn' : others ? 'tool_use' : 'end_turn');
      // The assembler builds the message the stream carried, recall calls included, inputs parsed.
      const assembler = ANTHROPIC_RECALL_STREAM.assemble();
      for (const e of events) assembler.push(e);
      const message = assembler.response();
      expect((message.content as Fields[]).filter((b) => b.type === 'tool_use').map((b) => [b.name, b.input])).toEqual(calls.map((c) => [c.name, { a: c.args }]));
      expect(message.stop_reason).toBe(calls.length > 0 ? 'tool_use' : 'end_turn');
    }), propertyParams());
  });

  test('signal: a recall tool use, another tool use, text deltas; thinking and empty text wait', () => {
    fc.assert(fc.property(fc.boolean(), fc.string({ maxLength: 5 }), fc.array(callArb, { maxLength: 3 }), (thinking, text, calls) => {
      const events = messagesEvents(thinking, text, calls, []);
      const first = events.map((e) => ANTHROPIC_RECALL_STREAM.signal(e)).find((s) => s !== undefined);
      const expected = text !== '' ? 'text' : calls.length === 0 ? undefined : calls[0].name === RECALL ? 'recall' : 'other';
      expect(first).toBe(expected);
    }), propertyParams());
  });
});
