import { afterEach, describe, expect, test } from '@jest/globals';
import { InputError } from '../../src/errors.js';
import { createExtractiveSummarizer } from '../../src/summarize/extractive.js';
import { createCompressor, type ChatRequest, type Compressor, type CompressorOptions } from '../../src/runtime/compressor.js';
import { createTokenCounter } from '../../src/tokens/counter.js';

/**
 * `wrap(handler, { readResponse })`: with a response reader, `wrap` answers `ctxfold_recall` calls
 * itself and calls the handler again, so the application gets the final response only. Without
 * one, the first response comes back untouched, recall call included.
 */

const counter = createTokenCounter();
const FACT = 'Noted: the deploy script reads its settings from /etc/lantern/app.toml, key LX-5520.';
const open: Compressor[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close(200)));
});

type Msg = Record<string, unknown>;
type Request = ChatRequest<Msg> & { chatId: string; tools?: unknown[] };

/** `turns` user/assistant pairs (about 70 tokens each) after a system message; #2 holds `FACT`. */
function history(turns: number, assistant: (text: string) => Msg = (text) => ({ role: 'assistant', content: text })): Msg[] {
  const out: Msg[] = [{ role: 'system', content: 'You are a careful assistant.' }];
  for (let t = 0; t < turns; t++) {
    out.push({ role: 'user', content: `Question ${t} about module ${t % 7}. ${'Some filler words for the question. '.repeat(8)}` });
    out.push(assistant(t === 0 ? FACT : `Answer ${t}. ${'Some filler words for the answer. '.repeat(8)}`));
  }
  return out;
}

/** A Chat Completions response: a text, or tool calls. */
function completion(n: number, reply: string | { name: string; arguments: unknown }[]): Record<string, unknown> {
  const message = typeof reply === 'string'
    ? { role: 'assistant', content: reply }
    : { role: 'assistant', content: null, tool_calls: reply.map((c, k) => ({ id: `call_${n}_${k}`, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })) };
  return { id: `chatcmpl-${n}`, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: typeof reply === 'string' ? 'stop' : 'tool_calls' }], usage: { prompt_tokens: 100 } };
}

/** A Responses response: a text, or function calls. */
function responsesReply(n: number, reply: string | { name: string; arguments: unknown }[]): Record<string, unknown> {
  const output = typeof reply === 'string'
    ? [{ type: 'message', id: `msg_${n}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: reply, annotations: [] }] }]
    : reply.map((c, k) => ({ type: 'function_call', id: `fc_${n}_${k}`, call_id: `call_${n}_${k}`, name: c.name, arguments: JSON.stringify(c.arguments), status: 'completed' }));
  return { id: `resp_${n}`, object: 'response', status: 'completed', output, usage: { input_tokens: 100 } };
}

/** A Messages (Anthropic) response: a text, or tool use blocks. */
function messagesReply(n: number, reply: string | { name: string; arguments: unknown }[]): Record<string, unknown> {
  const content = typeof reply === 'string'
    ? [{ type: 'text', text: reply }]
    : reply.map((c, k) => ({ type: 'tool_use', id: `toolu_${n}_${k}`, name: c.name, input: c.arguments }));
  return { id: `msg_${n}`, type: 'message', role: 'assistant', content, stop_reason: typeof reply === 'string' ? 'end_turn' : 'tool_use', usage: { input_tokens: 100, output_tokens: 5 } };
}

/** A scripted model: each call takes the next reply (default a text `ok <n>`), and every request is kept. */
function scripted<Res>(make: (n: number, reply: string | { name: string; arguments: unknown }[]) => Res) {
  const requests: Request[] = [];
  const queue: (string | { name: string; arguments: unknown }[])[] = [];
  const handler = async (request: Request): Promise<Res> => {
    requests.push(structuredClone(request));
    return make(requests.length, queue.shift() ?? `ok ${requests.length}`);
  };
  return { requests, handler, enqueue: (...r: typeof queue) => void queue.push(...r) };
}

/** A compressor with recall on whose chat "w" has a summary over its early messages. */
async function summarizedCompressor(messages: Msg[], options: Partial<CompressorOptions<Request>> = {}) {
  // Summaries held to 300 tokens: the early fact is not in them, only recall brings it back.
  const compressor = createCompressor<Request>({ maxContextTokens: 2000, keepLast: 4, recall: true, counter, summarizer: createExtractiveSummarizer({ maxSummaryTokens: 300 }), ...options });
  open.push(compressor);
  await compressor.wrap(async () => completion(0, 'first'))({ chatId: 'w', messages });
  await compressor.drain();
  return compressor;
}

const recall = (args: unknown) => [{ name: 'ctxfold_recall', arguments: args }];
const ask = (messages: Msg[]): Request => ({ chatId: 'w', messages: [...messages, { role: 'user', content: 'Where are the settings?' }] });

describe('wrap answers recall calls when given a response reader', () => {
  test("readResponse 'openai': the handler is called again with #2's original text; the application gets the final response", async () => {
    const messages = history(24);
    const compressor = await summarizedCompressor(messages);
    const model = scripted(completion);
    model.enqueue(recall({ ids: ['#2'] }), 'The key is LX-5520.');
    const request = ask(messages);
    const copy = structuredClone(request);
    const response = await compressor.wrap(model.handler, { readResponse: 'openai' })(request);

    expect(response).toMatchObject({ choices: [{ message: { role: 'assistant', content: 'The key is LX-5520.' }, finish_reason: 'stop' }] });
    expect(request).toEqual(copy);
    expect(model.requests).toHaveLength(2);
    const [first, second] = model.requests;
    expect(JSON.stringify(first.messages)).not.toContain('deploy script reads its settings');
    expect((first.tools as { function: { name: string } }[]).map((t) => t.function.name)).toEqual(['ctxfold_recall']);
    const tail = second.messages.slice(-2);
    expect(tail[0]).toMatchObject({ role: 'assistant', tool_calls: [{ id: 'call_1_0', function: { name: 'ctxfold_recall' } }] });
    expect(tail[1]).toMatchObject({ role: 'tool', tool_call_id: 'call_1_0' });
    expect(tail[1].content).toContain(FACT);
  });

  test('a response in the API\'s own shape shows the usage of every call added up (each is billed); calibration reads the last call alone', async () => {
    const cases: [string, 'openai' | 'openai-responses' | 'anthropic', (n: number, reply: string | { name: string; arguments: unknown }[]) => Record<string, unknown>, Record<string, number>][] = [
      ['chat', 'openai', completion, { prompt_tokens: 200 }],
      ['responses', 'openai-responses', responsesReply, { input_tokens: 200 }],
      ['messages', 'anthropic', messagesReply, { input_tokens: 200, output_tokens: 10 }],
    ];
    for (const [, format, make, summed] of cases) {
      const messages = format === 'anthropic' ? history(24).slice(1) : history(24);
      const compressor = await summarizedCompressor(messages, { format });
      const samples: { billed: number }[] = [];
      compressor.on('calibration', (e) => samples.push(e));
      const model = scripted(make);
      model.enqueue(recall({ query: 'LX-5520' }), 'found');
      const response = await compressor.wrap(model.handler, { readResponse: format })(ask(messages));
      expect(model.requests).toHaveLength(2);
      expect(response.usage).toEqual(summed);
      expect(samples.map((e) => e.billed)).toEqual([100]);
    }
    // A reader's wrapper is the application's own object: it comes back as the handler returned it.
    const messages = history(24);
    const compressor = await summarizedCompressor(messages);
    const model = scripted((n, reply) => ({ data: completion(n, reply) }));
    model.enqueue(recall({ ids: ['#2'] }), 'found');
    const wrapped = await compressor.wrap(model.handler, { readResponse: { format: 'openai', read: (r) => r.data } })(ask(messages));
    expect(wrapped.data.usage).toEqual({ prompt_tokens: 100 });
  });

  test('past the rounds, the final call carries each dialect\'s tool_choice none, and its answer reaches the application', async () => {
    const cases: ['openai' | 'openai-responses' | 'anthropic', (n: number, reply: string | { name: string; arguments: unknown }[]) => Record<string, unknown>, unknown][] = [
      ['openai', completion, 'none'],
      ['openai-responses', responsesReply, 'none'],
      ['anthropic', messagesReply, { type: 'none' }],
    ];
    for (const [format, make, none] of cases) {
      const messages = format === 'anthropic' ? history(24).slice(1) : history(24);
      const compressor = await summarizedCompressor(messages, { format, recall: { rounds: 0 } });
      const model = scripted(make);
      model.enqueue(recall({ ids: ['#2'] }), 'The key is LX-5520.');
      const response = await compressor.wrap(model.handler, { readResponse: format })(ask(messages));
      expect(model.requests.map((r) => (r as { tool_choice?: unknown }).tool_choice)).toEqual([undefined, none]);
      // The final call answers the recall call it follows (with #2's original).
      expect(JSON.stringify(model.requests[1].messages)).toContain('--- #2 (');
      expect(JSON.stringify(response)).toContain('The key is LX-5520.');
      expect(JSON.stringify(response)).not.toContain('ctxfold_recall');
    }
  });

  test('a final call the handler fails with an error status falls back to the response before it; an error without one is thrown', async () => {
    const messages = history(24);
    const compressor = await summarizedCompressor(messages, { recall: { rounds: 0 } });
    const model = scripted(completion);
    model.enqueue(recall({ ids: ['#2'] }));
    const failing = (error: Error) => async (request: Request) => {
      if ((request as { tool_choice?: unknown }).tool_choice === 'none') throw error;
      return model.handler(request);
    };
    const refused = await compressor.wrap(failing(Object.assign(new Error('400 tool_choice'), { status: 400 })), { readResponse: 'openai' })(ask(messages)) as { choices: { message: Msg; finish_reason: string }[]; usage: unknown };
    expect(refused.choices[0].message.tool_calls).toBeUndefined();
    expect(refused.choices[0].finish_reason).toBe('stop');
    expect(refused.usage).toEqual({ prompt_tokens: 100 });

    model.enqueue(recall({ ids: ['#2'] }));
    await expect(compressor.wrap(failing(new Error('socket hang up')), { readResponse: 'openai' })(ask(messages))).rejects.toThrow('socket hang up');
  });

  test('{ format, read }: the reader finds the response inside what the handler returns; the last wrapper comes back', async () => {
    const messages = history(24);
    const compressor = await summarizedCompressor(messages);
    const model = scripted((n, reply) => ({ data: completion(n, reply), status: 200 }));
    model.enqueue(recall({ query: 'LX-5520' }), 'found');
    const response = await compressor.wrap(model.handler, { readResponse: { format: 'openai', read: (r) => r.data } })(ask(messages));
    expect(response).toMatchObject({ status: 200, data: { id: 'chatcmpl-2', choices: [{ message: { content: 'found' } }] } });
    expect(model.requests).toHaveLength(2);
    expect(model.requests[1].messages.at(-1)!.content).toContain(FACT);
  });

  test("readResponse 'openai-responses': Responses items, answered with a function_call_output", async () => {
    const messages = history(24);
    const compressor = await summarizedCompressor(messages, { format: 'openai-responses' });
    const model = scripted(responsesReply);
    model.enqueue(recall({ ids: ['#2'] }), 'The key is LX-5520.');
    const response = await compressor.wrap(model.handler, { readResponse: 'openai-responses' })(ask(messages));
    expect(response).toMatchObject({ id: 'resp_2', output: [{ type: 'message', content: [{ text: 'The key is LX-5520.' }] }] });
    const tail = model.requests[1].messages.slice(-2);
    expect(tail[0]).toMatchObject({ type: 'function_call', name: 'ctxfold_recall', call_id: 'call_1_0' });
    expect(tail[1]).toMatchObject({ type: 'function_call_output', call_id: 'call_1_0' });
    expect(tail[1].output).toContain(FACT);
  });

  test("readResponse 'anthropic': Messages blocks, the answers in one user message of tool_result blocks", async () => {
    const messages = history(24).slice(1);
    const compressor = await summarizedCompressor(messages, { format: 'anthropic' });
    const model = scripted(messagesReply);
    model.enqueue([{ name: 'ctxfold_recall', arguments: { query: 'LX-5520' } }, { name: 'ctxfold_recall', arguments: { ids: ['#1'] } }], 'The key is LX-5520.');
    const response = await compressor.wrap(model.handler, { readResponse: 'anthropic' })(ask(messages));
    expect(response).toMatchObject({ id: 'msg_2', content: [{ type: 'text', text: 'The key is LX-5520.' }], stop_reason: 'end_turn' });
    const tail = model.requests[1].messages.slice(-2);
    expect(tail[0]).toEqual({ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1_0', name: 'ctxfold_recall', input: { query: 'LX-5520' } }, { type: 'tool_use', id: 'toolu_1_1', name: 'ctxfold_recall', input: { ids: ['#1'] } }] });
    expect(tail[1].role).toBe('user');
    expect((tail[1].content as Msg[]).map((b) => [b.type, b.tool_use_id])).toEqual([['tool_result', 'toolu_1_0'], ['tool_result', 'toolu_1_1']]);
    expect(JSON.stringify(tail[1])).toContain('deploy script reads its settings');
    expect((model.requests[0].tools as { name: string; input_schema: unknown }[]).map((t) => t.name)).toEqual(['ctxfold_recall']);
  });

  test("readResponse 'openai-responses': a response echoing the request's tools comes back without the recall tool, with or without a round", async () => {
    const messages = history(24);
    const compressor = await summarizedCompressor(messages, { format: 'openai-responses' });
    const lookup = { type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } };
    const replies: (string | { name: string; arguments: unknown }[])[] = [recall({ ids: ['#2'] }), 'The key is LX-5520.', 'Hello.'];
    const sentTools: unknown[][] = [];
    // The handler returns what the Responses API does: the response echoes the tools it was sent.
    const handler = async (request: Request) => {
      sentTools.push(request.tools ?? []);
      return { ...responsesReply(sentTools.length, replies.shift()!), tools: request.tools ?? [] };
    };
    const wrapped = compressor.wrap(handler, { readResponse: 'openai-responses' });
    const answered = await wrapped({ ...ask(messages), tools: [lookup] }) as { tools: unknown[]; output: unknown[] };
    expect(sentTools).toHaveLength(2);
    expect(sentTools[0].map((t) => (t as { name: string }).name)).toEqual(['lookup', 'ctxfold_recall']);
    expect(answered.tools).toEqual([lookup]);
    const plain = await wrapped({ ...ask(messages), tools: [lookup] }) as { tools: unknown[] };
    expect(sentTools).toHaveLength(3);
    expect(plain.tools).toEqual([lookup]);
  });

  test('a response mixing recall with the application\'s call comes back without the recall call; rounds are bounded', async () => {
    const messages = history(24);
    const compressor = await summarizedCompressor(messages, { recall: { rounds: 1 } });
    const model = scripted(completion);
    model.enqueue([...recall({ ids: ['#2'] }), { name: 'lookup', arguments: { q: 'x' } }]);
    const mixed = await compressor.wrap(model.handler, { readResponse: 'openai' })(ask(messages)) as { choices: { message: { tool_calls: { function: { name: string } }[] } }[] };
    expect(model.requests).toHaveLength(1);
    expect(mixed.choices[0].message.tool_calls.map((c) => c.function.name)).toEqual(['lookup']);

    model.enqueue(recall({ ids: ['#2'] }), recall({ ids: ['#3'] }), recall({ ids: ['#4'] }));
    const past = await compressor.wrap(model.handler, { readResponse: 'openai' })(ask(messages)) as { choices: { message: Msg; finish_reason: string }[] };
    // One call, one answered round, and the final call the handler gets with tool_choice none.
    expect(model.requests.slice(1).map((r) => (r as { tool_choice?: unknown }).tool_choice)).toEqual([undefined, undefined, 'none']);
    expect(past.choices[0].message.tool_calls).toBeUndefined();
    expect(past.choices[0].finish_reason).toBe('stop');
  });
});

describe('without a reader, wrap is unchanged', () => {
  test('the first response comes back as it is, recall call included; the application answers it with compressor.recall.answer', async () => {
    const messages = history(24);
    const compressor = await summarizedCompressor(messages);
    const model = scripted(completion);
    model.enqueue(recall({ ids: ['#2'] }));
    const response = await compressor.wrap(model.handler)(ask(messages)) as { choices: { message: { tool_calls: { function: { name: string; arguments: string } }[] } }[] };
    expect(model.requests).toHaveLength(1);
    const call = response.choices[0].message.tool_calls[0];
    expect(call.function.name).toBe('ctxfold_recall');
    expect((await compressor.recall!.answer('w', call.function.arguments)).text).toContain(FACT);
  });

  test('a bad readResponse, or one whose format is not the compressor\'s, is an InputError naming options.readResponse', async () => {
    const compressor = createCompressor<Request>({ maxContextTokens: 2000, recall: true, counter, format: 'openai' });
    open.push(compressor);
    const handler = async () => ({});
    expect(() => compressor.wrap(handler, { readResponse: 'gemini' as never })).toThrow(InputError);
    expect(() => compressor.wrap(handler, { readResponse: { format: 'openai' } as never })).toThrow(/^options\.readResponse: must be/);
    expect(() => compressor.wrap(handler, { readResponse: 'openai-responses' })).toThrow(/^options\.readResponse: reads openai-responses responses, but the compressor's format is "openai"/);
  });

  test('tools given as a record, not a list, get no recall tool and the summary tells of none (they pass as they came)', async () => {
    const messages = history(24);
    const compressor = await summarizedCompressor(messages);
    const model = scripted(completion);
    const tools = { weather: { description: 'Weather in a city' } };
    await compressor.wrap(model.handler)({ ...ask(messages), tools: tools as never });
    expect(model.requests[0].tools).toEqual(tools);
    expect(JSON.stringify(model.requests[0].messages)).toContain('Summary of');
    expect(JSON.stringify(model.requests[0].messages)).not.toContain('ctxfold_recall');
  });
});
