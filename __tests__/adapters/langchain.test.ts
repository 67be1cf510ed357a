import { afterEach, describe, expect, jest, test } from '@jest/globals';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { createAgent, summarizationMiddleware, tool } from 'langchain';
import { z } from 'zod';
import { fromLangChain } from '../../bench/langchain-convert.js';
import { ctxfoldMiddleware, type CtxfoldMiddleware } from '../../src/adapters/langchain/index.js';
import { modelNameOf } from '../../src/adapters/langchain/request-extras.js';
import { createMessageConverter } from '../../src/adapters/langchain/to-openai.js';
import { InputError } from '../../src/errors.js';
import { openaiChatLens } from '../../src/formats/openai-chat/lens.js';
import { validateMessages } from '../../src/formats/profiles.js';
import type { CompressReport } from '../../src/runtime/compress.js';
import { createCompressor } from '../../src/runtime/compressor.js';
import { createTokenCounter } from '../../src/tokens/counter.js';
import { createExtractiveSummarizer } from '../../src/summarize/extractive.js';
import { callsTools, RecordingChatModel } from '../helpers/langchain-model.js';
import { langchainHistory } from '../helpers/langchain-history.js';
import { pairingProblems } from '../helpers/oracle.js';

const counter = createTokenCounter();
const open: CtxfoldMiddleware[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((m) => m.compressor.close(200)));
});

/** A middleware closed after the test, with the reports of its compressions. */
function middleware(options: Parameters<typeof ctxfoldMiddleware>[0]) {
  const mw = ctxfoldMiddleware(options);
  open.push(mw);
  const reports: Array<{ chatId: string; report: CompressReport }> = [];
  mw.compressor.on('compressed', (e) => reports.push(e));
  return { mw, reports };
}

const answer = (text: string) => () => new AIMessage(text);
const ids = (messages: readonly BaseMessage[]) => messages.map((m) => m.id);
const isSummary = (m: BaseMessage) => typeof m.content === 'string' && m.content.startsWith('[Summary of');

/** `turns` question/answer pairs (about 70 tokens each), ids `q<n>` / `a<n>`; the first answer is `first` when given. */
function chatWith(first?: string, turns = 24): BaseMessage[] {
  const history: BaseMessage[] = [];
  for (let t = 0; t < turns; t++) {
    history.push(new HumanMessage({ content: `Question ${t} about module ${t % 7}. ${'Some filler words for the question. '.repeat(8)}`, id: `q${t}` }));
    history.push(new AIMessage({ content: t === 0 && first !== undefined ? first : `Answer ${t}. ${'Some filler words for the answer. '.repeat(8)}`, id: `a${t}` }));
  }
  return history;
}

/**
 * An agent with the middleware (recall `rounds`) over `chatWith(first)`: one turn, its summary
 * awaited, then the question; `script` answers each model call in turn. The model, the second
 * turn's state, and how many bindings the first turn made.
 */
async function recallTurns(thread: string, rounds: number, first: string | undefined, script: (() => AIMessage)[]) {
  const { mw } = middleware({ maxContextTokens: 2000, keepLast: 4, recall: { rounds }, counter });
  const model = new RecordingChatModel((messages, call) => (script[call] ?? answer('ok'))());
  const agent = createAgent({ model, tools: [], systemPrompt: 'You are a careful assistant.', middleware: [mw] });
  const once = await agent.invoke({ messages: chatWith(first) }, { configurable: { thread_id: thread } });
  await mw.compressor.drain();
  const binds = model.bindOptions.length;
  const result = await agent.invoke({ messages: [...once.messages, new HumanMessage({ content: 'Where are the settings?', id: 'next-q' })] }, { configurable: { thread_id: thread } });
  return { model, result, binds };
}

describe('ctxfoldMiddleware: the state stays, the model sees the view', () => {
  test('the state keeps every message as the same object; the model gets a valid, smaller view made of them', async () => {
    const { systemPrompt, history } = langchainHistory(120, 1);
    const snapshot = structuredClone(history);
    const model = new RecordingChatModel(answer('Done.'));
    const { mw, reports } = middleware({ maxContextTokens: 4000, keepLast: 4, counter });
    const agent = createAgent({ model, tools: [], systemPrompt, middleware: [mw] });
    const result = await agent.invoke({ messages: history }, { configurable: { thread_id: 'state-1' } });

    // The state: every input message, the same objects in order, then the answer.
    expect(result.messages).toHaveLength(history.length + 1);
    history.forEach((m, i) => expect(result.messages[i]).toBe(m));
    expect(structuredClone(history)).toEqual(snapshot);
    // The model: the agent's system message, then a shorter view of the caller's own objects.
    const received = model.received[0];
    expect(received[0]).toBeInstanceOf(SystemMessage);
    expect(received.length - 1).toBeLessThan(history.length);
    const inHistory = new Set<BaseMessage>(history);
    for (const m of received.slice(1)) expect(inHistory.has(m)).toBe(true);
    const sent = fromLangChain(received);
    expect(validateMessages(sent, 'openai')).toEqual([]);
    expect(pairingProblems(sent)).toEqual([]);
    expect(reports).toHaveLength(1);
    expect(reports[0].report.tokensAfter).toBeLessThanOrEqual(4000);
    expect(reports[0].report.droppedCounts.budget).toBeGreaterThan(0);
  });

  test('after a background summary, the view holds it as a HumanMessage (or a SystemMessage with summaryRole) while the state is unchanged', async () => {
    for (const summaryRole of ['user', 'system'] as const) {
      const { systemPrompt, history } = langchainHistory(160, 2);
      const model = new RecordingChatModel(answer('Noted.'));
      const { mw } = middleware({ maxContextTokens: 6000, compressionThresholdTokens: 3000, keepLast: 4, summaryRole, counter });
      const agent = createAgent({ model, tools: [], systemPrompt, middleware: [mw] });
      const first = await agent.invoke({ messages: history }, { configurable: { thread_id: `sum-${summaryRole}` } });
      await mw.compressor.drain();
      expect(mw.compressor.stats().summariesDone).toBe(1);
      const next = [...first.messages, new HumanMessage({ content: 'And now?', id: 'next-q' })];
      const second = await agent.invoke({ messages: next }, { configurable: { thread_id: `sum-${summaryRole}` } });
      const view = model.received[1];
      const summaries = view.filter(isSummary);
      expect(summaries).toHaveLength(1);
      expect(summaries[0]).toBeInstanceOf(summaryRole === 'user' ? HumanMessage : SystemMessage);
      expect(view.indexOf(summaries[0])).toBe(2); // after the system prompt and the first message (keepFirst)
      expect(view[1]).toBe(history[0]);
      expect(validateMessages(fromLangChain(view), 'openai')).toEqual([]);
      // The summary never enters the state.
      expect(second.messages.some(isSummary)).toBe(false);
      expect(ids(second.messages.slice(0, next.length))).toEqual(ids(next));
    }
  });

  test('with recall on, the model gets the recall tool and its recall calls are answered in the middleware: the state never holds them', async () => {
    const FACT = 'Noted: the deploy script reads its settings from /etc/lantern/app.toml, key LX-5520.';
    const history = chatWith(FACT);
    // A summary held to a small size, so the early fact is not in it and only recall can bring it back.
    const { mw } = middleware({ maxContextTokens: 2000, keepLast: 4, recall: true, counter, summarizer: createExtractiveSummarizer({ maxSummaryTokens: 300 }) });
    const script = [answer('first'), () => callsTools([['ctxfold_recall', { query: 'LX-5520' }, 'r1']]), answer('The key is LX-5520.')];
    const model = new RecordingChatModel((messages, call) => (script[call] ?? answer('ok'))());
    const agent = createAgent({ model, tools: [], systemPrompt: 'You are a careful assistant.', middleware: [mw] });
    const first = await agent.invoke({ messages: history }, { configurable: { thread_id: 'recall-on' } });
    await mw.compressor.drain();
    const result = await agent.invoke({ messages: [...first.messages, new HumanMessage({ content: 'Where are the settings?', id: 'next-q' })] }, { configurable: { thread_id: 'recall-on' } });

    expect(String(result.messages.at(-1)!.content)).toBe('The key is LX-5520.');
    expect(JSON.stringify(result.messages)).not.toContain('ctxfold_recall');
    expect(model.received).toHaveLength(3);
    const asked = model.received[1];
    expect(asked.some((m) => typeof m.content === 'string' && m.content.includes('ctxfold_recall'))).toBe(true);
    expect(JSON.stringify(asked)).not.toContain('deploy script reads its settings');
    const round = model.received[2];
    const call = round.at(-2) as AIMessage;
    expect(call.tool_calls).toEqual([expect.objectContaining({ id: 'r1', name: 'ctxfold_recall', args: { query: 'LX-5520' } })]);
    const reply = round.at(-1) as ToolMessage;
    expect(reply).toBeInstanceOf(ToolMessage);
    expect(reply.tool_call_id).toBe('r1');
    expect(String(reply.content)).toContain('deploy script reads its settings');
    expect(pairingProblems(fromLangChain(round))).toEqual([]);
    expect((model.boundTools as { function?: { name?: string } }[]).map((t) => t.function?.name)).toContain('ctxfold_recall');
  });

  test('with recall on, past the rounds a reply that only recalls is answered once more and the model bound with tool_choice none', async () => {
    const script = [answer('first'), () => callsTools([['ctxfold_recall', { query: 'no-such-thing' }, 'r1']]), () => callsTools([['ctxfold_recall', { query: 'LX-5520' }, 'r2']]), answer('The key is LX-5520.')];
    const { model, result, binds } = await recallTurns('recall-final', 1, 'Noted: the settings live in /etc/lantern/app.toml, key LX-5520.', script);

    expect(model.received).toHaveLength(4);
    expect(model.bindOptions.slice(binds).map((o) => o.tool_choice)).toEqual([undefined, undefined, 'none']);
    const final = model.received[3];
    expect(String((final.at(-1) as ToolMessage).content)).toContain('/etc/lantern/app.toml');
    expect(pairingProblems(fromLangChain(final))).toEqual([]);
    expect(String(result.messages.at(-1)!.content)).toBe('The key is LX-5520.');
    expect(JSON.stringify(result.messages)).not.toContain('ctxfold_recall');
  });

  test('with recall on, a final call the model refuses with an error status falls back to the answer before it, without its recall call', async () => {
    const refusal = Object.assign(new Error('tool_choice none is not supported'), { status: 400 });
    const script = [answer('first'), () => callsTools([['ctxfold_recall', { ids: ['#2'] }, 'r1']], 'Let me look.'), () => { throw refusal; }];
    const { model, result, binds } = await recallTurns('recall-refused', 0, undefined, script);
    expect(model.bindOptions.slice(binds).map((o) => o.tool_choice)).toEqual([undefined, 'none']);
    expect(String(result.messages.at(-1)!.content)).toBe('Let me look.');
    expect(JSON.stringify(result.messages)).not.toContain('ctxfold_recall');
  });

  test('with recall on, the answer after a recall round shows the usage of both calls; the chat is calibrated on the last call alone', async () => {
    const history: BaseMessage[] = [];
    for (let t = 0; t < 24; t++) {
      history.push(new HumanMessage({ content: `Question ${t}. ${'Some filler words for the question. '.repeat(8)}`, id: `q${t}` }));
      history.push(new AIMessage({ content: t === 0 ? 'Noted: key LX-5520.' : `Answer ${t}. ${'Some filler words for the answer. '.repeat(8)}`, id: `a${t}` }));
    }
    const { mw } = middleware({ maxContextTokens: 2000, keepLast: 4, recall: true, counter });
    const samples: { billed: number }[] = [];
    mw.compressor.on('calibration', (e) => samples.push(e));
    const billed = (message: AIMessage, input: number) => Object.assign(message, { usage_metadata: { input_tokens: input, output_tokens: 5, total_tokens: input + 5 } });
    const script = [answer('first'), () => billed(callsTools([['ctxfold_recall', { query: 'LX-5520' }, 'r1']]), 300), () => billed(new AIMessage('The key is LX-5520.'), 700)];
    const model = new RecordingChatModel((messages, call) => (script[call] ?? answer('ok'))());
    const agent = createAgent({ model, tools: [], systemPrompt: 'You are a careful assistant.', middleware: [mw] });
    const first = await agent.invoke({ messages: history }, { configurable: { thread_id: 'recall-usage' } });
    await mw.compressor.drain();
    const result = await agent.invoke({ messages: [...first.messages, new HumanMessage({ content: 'The key?', id: 'next-q' })] }, { configurable: { thread_id: 'recall-usage' } });
    const last = result.messages.at(-1) as AIMessage;
    expect(String(last.content)).toBe('The key is LX-5520.');
    expect(last.usage_metadata).toMatchObject({ input_tokens: 1000, output_tokens: 10, total_tokens: 1010 });
    expect(samples.map((s) => s.billed)).toEqual([700]);
  });

  test("with recall on, a recall call mixed with the agent's own tool call reaches the agent without it", async () => {
    const { systemPrompt, history } = langchainHistory(40, 5);
    const lookup = tool(async () => 'looked up', { name: 'lookup', description: 'Looks a thing up', schema: z.object({ q: z.string() }) });
    const { mw } = middleware({ maxContextTokens: 4000, keepLast: 4, recall: true, counter });
    const script = [() => callsTools([['ctxfold_recall', { query: 'x' }, 'r1'], ['lookup', { q: 'y' }, 'l1']]), answer('done')];
    const model = new RecordingChatModel((_messages, call) => (script[call] ?? answer('ok'))());
    const agent = createAgent({ model, tools: [lookup], systemPrompt, middleware: [mw] });
    const result = await agent.invoke({ messages: history }, { configurable: { thread_id: 'recall-mixed' } });
    const calls = result.messages.flatMap((m: BaseMessage) => (m instanceof AIMessage ? (m.tool_calls ?? []).map((c) => c.name) : []));
    expect(calls.filter((n: string) => n === 'ctxfold_recall')).toEqual([]);
    expect(calls).toContain('lookup');
    expect(result.messages.some((m: BaseMessage) => m instanceof ToolMessage && m.tool_call_id === 'l1')).toBe(true);
    expect(String(result.messages.at(-1)!.content)).toBe('done');
  });

  test('LangChain\'s summarizationMiddleware replaces the history in the state; ctxfold leaves it whole', async () => {
    const { systemPrompt, history } = langchainHistory(80, 3);
    const summarizer = new RecordingChatModel(answer('SUMMARY OF EARLIER MESSAGES'));
    const theirs = createAgent({
      model: new RecordingChatModel(answer('ok')),
      tools: [],
      systemPrompt,
      middleware: [summarizationMiddleware({ model: summarizer, trigger: { messages: 20 }, keep: { messages: 6 } })],
    });
    const replaced = await theirs.invoke({ messages: history.map((m) => m) }, { configurable: { thread_id: 'theirs' } });
    // Their state: a summary message and the last few, most original messages are gone from it.
    expect(replaced.messages.length).toBeLessThan(history.length / 2);
    expect(String(replaced.messages[0].content)).toContain('SUMMARY OF EARLIER MESSAGES');
    const kept = new Set(ids(replaced.messages));
    expect(history.filter((m) => !kept.has(m.id)).length).toBeGreaterThan(history.length / 2);

    const { systemPrompt: sp, history: again } = langchainHistory(80, 3);
    const model = new RecordingChatModel(answer('ok'));
    const { mw } = middleware({ maxContextTokens: 2500, keepLast: 4, counter });
    const ours = createAgent({ model, tools: [], systemPrompt: sp, middleware: [mw] });
    const whole = await ours.invoke({ messages: again }, { configurable: { thread_id: 'ours' } });
    // Our state: every original message, by id and by object; only the model's view was smaller.
    expect(ids(whole.messages.slice(0, again.length))).toEqual(ids(again));
    again.forEach((m, i) => expect(whole.messages[i]).toBe(m));
    expect(model.received[0].length - 1).toBeLessThan(again.length);
  });
});

describe('ctxfoldMiddleware: what the compressor writes comes back as LangChain messages', () => {
  test('a cleared tool result is a new ToolMessage with the same tool_call_id and name; its call stays paired', async () => {
    const bulky = 'row '.repeat(3000);
    const history: BaseMessage[] = [
      new HumanMessage({ content: 'Export the table.', id: 'u1' }),
      callsTools([['export_table', { table: 't1' }, 'call_a']]),
      new ToolMessage({ content: bulky, tool_call_id: 'call_a', name: 'export_table', id: 't1' }),
      new AIMessage({ content: 'Exported.', id: 'a2' }),
      new HumanMessage({ content: 'Thanks. Anything else in t1?', id: 'u2' }),
    ];
    history[1].id = 'a1';
    const model = new RecordingChatModel(answer('No.'));
    const { mw, reports } = middleware({ maxContextTokens: 1500, keepLast: 1, toolOutputTrim: { minChars: 500 }, counter });
    const agent = createAgent({ model, tools: [], middleware: [mw] });
    const result = await agent.invoke({ messages: history }, { configurable: { thread_id: 'trim' } });
    expect(reports[0].report.collapsed).toHaveLength(1);
    const view = model.received[0];
    const cleared = view.find((m) => ToolMessage.isInstance(m)) as ToolMessage;
    expect(cleared).not.toBe(history[2]);
    expect(cleared.tool_call_id).toBe('call_a');
    expect(cleared.name).toBe('export_table');
    expect(String(cleared.content)).toMatch(/^\[tool result cleared/);
    expect(view[view.indexOf(cleared) - 1]).toBe(history[1]);
    expect(pairingProblems(fromLangChain(view))).toEqual([]);
    // The state still holds the full result.
    expect(result.messages[2]).toBe(history[2]);
    expect(result.messages[2].content).toBe(bulky);
  });

  test('a call left without a result (an interrupted run) gets a synthetic ToolMessage in the view only', async () => {
    const dangling = callsTools([['lookup', { q: 'x' }, 'call_z']]);
    dangling.id = 'a1';
    const history: BaseMessage[] = [new HumanMessage({ content: 'Look x up.', id: 'u1' }), dangling, new HumanMessage({ content: 'Never mind, say hi.', id: 'u2' })];
    const model = new RecordingChatModel(answer('Hi.'));
    const { mw, reports } = middleware({ maxContextTokens: 4000, counter });
    const agent = createAgent({ model, tools: [], middleware: [mw] });
    const result = await agent.invoke({ messages: history }, { configurable: { thread_id: 'repair' } });
    const view = model.received[0]; // no system prompt: the view alone
    expect(view).toHaveLength(4);
    expect(view[0]).toBe(history[0]);
    expect(view[1]).toBe(dangling);
    expect(view[2]).toBeInstanceOf(ToolMessage);
    expect((view[2] as ToolMessage).tool_call_id).toBe('call_z');
    expect(String(view[2].content)).toMatch(/^Error: this tool call produced no result/);
    expect(view[3]).toBe(history[2]);
    expect(reports[0].report.repaired.length).toBeGreaterThan(0);
    expect(ids(result.messages.slice(0, 3))).toEqual(['u1', 'a1', 'u2']);
  });
});

describe('ctxfoldMiddleware: what is counted and reported', () => {
  test('the agent\'s system prompt, its tools and the model\'s reply limit are counted', async () => {
    const search = tool(async ({ query }: { query: string }) => `results for ${query}`, { name: 'search', description: 'Searches the index.', schema: z.object({ query: z.string() }) });
    const systemPrompt = 'You are a careful assistant. Answer in one sentence.';
    const model = new RecordingChatModel(answer('ok'), { maxTokens: 700 });
    const { mw, reports } = middleware({ maxContextTokens: 8000, counter });
    const agent = createAgent({ model, tools: [search], systemPrompt, middleware: [mw] });
    await agent.invoke({ messages: [new HumanMessage({ content: 'hello', id: 'u1' })] }, { configurable: { thread_id: 'extras' } });
    const { report } = reports[0];
    const toolTokens = counter.text(JSON.stringify(convertToOpenAITool(search))) + 8;
    expect(report.requestExtraTokens).toBe(toolTokens + counter.text(systemPrompt) + 4);
    expect(report.reservedOutputTokens).toBe(700);
    // The view itself is the one human message: the rest of tokensAfter is overhead and the extras.
    expect(report.tokensAfter).toBe(counter.requestOverhead + counter.message({ role: 'user', content: 'hello' }, openaiChatLens) + report.requestExtraTokens);
  });

  test('afterResponse gets the billed input tokens and the model name: calibration is recorded per model', async () => {
    const model = new RecordingChatModel(() => new AIMessage({ content: 'ok', usage_metadata: { input_tokens: 50, output_tokens: 1, total_tokens: 51 } }), { model: 'gpt-4o' });
    const { mw } = middleware({ maxContextTokens: 8000, counter });
    const samples: unknown[] = [];
    mw.compressor.on('calibration', (s) => samples.push(s));
    const agent = createAgent({ model, tools: [], systemPrompt: 'Be brief.', middleware: [mw] });
    await agent.invoke({ messages: [new HumanMessage({ content: 'hello there', id: 'u1' })] }, { configurable: { thread_id: 'cal' } });
    expect(samples).toHaveLength(1);
    expect(mw.compressor.stats().calibration.samples).toBe(1);
    expect(Object.keys(mw.compressor.stats().calibration.byModel)).toEqual(['gpt-4o']);
  });

  test('without maxContextTokens, the window comes from the model\'s name; an unknown model names the option', async () => {
    const { mw, reports } = middleware({ counter });
    const agent = createAgent({ model: new RecordingChatModel(answer('ok'), { model: 'gpt-4o-2024-08-06' }), tools: [], middleware: [mw] });
    await agent.invoke({ messages: [new HumanMessage({ content: 'hi', id: 'u1' })] }, { configurable: { thread_id: 'w' } });
    expect(reports).toHaveLength(1); // the listener added before the first call moved onto the compressor
    expect(reports[0].report.maxContextTokens).toBe(128_000);

    const unknown = middleware({}).mw;
    const agent2 = createAgent({ model: new RecordingChatModel(answer('ok'), { model: 'my-local-model' }), tools: [], middleware: [unknown] });
    await expect(agent2.invoke({ messages: [new HumanMessage('hi')] })).rejects.toThrow(/options\.maxContextTokens: is required: the model "my-local-model" is not in ctxfold's table/);
    const nameless = middleware({}).mw;
    const agent3 = createAgent({ model: new RecordingChatModel(answer('ok')), tools: [], middleware: [nameless] });
    await expect(agent3.invoke({ messages: [new HumanMessage('hi')] })).rejects.toThrow(/options\.maxContextTokens: is required: the model does not say its name/);
  });
});

describe('ctxfoldMiddleware: chat ids', () => {
  test('the thread id by default, options.chatId(state, runtime) when given, else a fingerprint with one warning', async () => {
    const { mw, reports } = middleware({ maxContextTokens: 8000, counter });
    const agent = createAgent({ model: new RecordingChatModel(answer('ok')), tools: [], middleware: [mw] });
    await agent.invoke({ messages: [new HumanMessage({ content: 'a', id: 'u1' })] }, { configurable: { thread_id: 'thread-9' } });
    expect(reports[0].chatId).toBe('thread-9');

    const seen: Array<{ messages: number; thread: unknown }> = [];
    const custom = middleware({ maxContextTokens: 8000, counter, chatId: (state, runtime) => {
      seen.push({ messages: state.messages.length, thread: runtime.configurable?.thread_id });
      return `user-42/${String(runtime.configurable?.thread_id)}`;
    } });
    const agent2 = createAgent({ model: new RecordingChatModel(answer('ok')), tools: [], middleware: [custom.mw] });
    await agent2.invoke({ messages: [new HumanMessage({ content: 'b', id: 'u1' })] }, { configurable: { thread_id: 't1' } });
    expect(custom.reports[0].chatId).toBe('user-42/t1');
    expect(seen).toEqual([{ messages: 1, thread: 't1' }]);

    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      const anon = middleware({ maxContextTokens: 8000, counter });
      const agent3 = createAgent({ model: new RecordingChatModel(answer('ok')), tools: [], middleware: [anon.mw] });
      await agent3.invoke({ messages: [new HumanMessage({ content: 'c', id: 'u1' })] });
      await agent3.invoke({ messages: [new HumanMessage({ content: 'c', id: 'u1' })] });
      expect(anon.reports.map((r) => r.chatId)).toEqual([anon.reports[0].chatId, anon.reports[0].chatId]);
      expect(anon.reports[0].chatId).toMatch(/^fp:/);
      const ours = warn.mock.calls.filter((call) => (call[1] as { code?: string } | undefined)?.code === 'CTXFOLD_NO_CHAT_ID');
      expect(ours).toHaveLength(1);
      expect(String(ours[0][0])).toMatch(/thread_id/);
    } finally {
      warn.mockRestore();
    }

    const bad = middleware({ maxContextTokens: 8000, counter, chatId: () => '' }).mw;
    const agent4 = createAgent({ model: new RecordingChatModel(answer('ok')), tools: [], middleware: [bad] });
    await expect(agent4.invoke({ messages: [new HumanMessage('d')] })).rejects.toThrow(/options\.chatId: must return a non-empty string or undefined/);
  });

  test('a shared compressor serves two agents, keyed by their threads', async () => {
    const compressor = createCompressor({ maxContextTokens: 8000, counter, format: 'openai' });
    const chats: string[] = [];
    compressor.on('compressed', (e) => chats.push(e.chatId));
    try {
      for (const thread of ['x', 'y']) {
        const agent = createAgent({ model: new RecordingChatModel(answer('ok')), tools: [], middleware: [ctxfoldMiddleware({ compressor })] });
        await agent.invoke({ messages: [new HumanMessage({ content: 'hi', id: 'u1' })] }, { configurable: { thread_id: thread } });
      }
      expect(chats).toEqual(['x', 'y']);
    } finally {
      await compressor.close();
    }
  });
});

describe('ctxfoldMiddleware: options', () => {
  test.each([
    [{ maxContextTokens: 1000, format: 'anthropic' }, /^options\.format: must be "openai" or left out/],
    [{ maxContextTokens: 1000, chatId: 'thread' }, /^options\.chatId: must be a function \(state, runtime\)/],
    [{ maxContextTokens: 1000, maxTokens: 10 }, /^options\.maxTokens: unknown option; did you mean maxContextTokens\?/],
    [{ maxContextTokens: 0 }, /^options\.maxContextTokens: must be an integer >= 1, got 0/],
    [{ keepLast: -1, maxContextTokens: 1000 }, /^options\.keepLast: must be an integer >= 0/],
    [{ compressor: {} }, /^options\.compressor: must be a Compressor/],
    [{ compressor: createCompressor({ summarizer: null }), maxContextTokens: 1000 }, /^options\.maxContextTokens: cannot be combined with options\.compressor/],
    ['fast', /^options: must be an options object/],
  ])('%j is refused, naming the option', (options, message) => {
    expect(() => ctxfoldMiddleware(options as never)).toThrow(InputError);
    expect(() => ctxfoldMiddleware(options as never)).toThrow(message);
  });
});

describe('reading LangChain messages', () => {
  test('content blocks: text and reasoning are counted as text, images as images, call blocks through tool_calls', () => {
    const converter = createMessageConverter();
    const pixel = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
    const human = new HumanMessage({ content: [{ type: 'text', text: 'What is this?' }, { type: 'image', mimeType: 'image/png', data: pixel }] });
    const ai = new AIMessage({
      content: [{ type: 'thinking', thinking: 'Looking at it.' }, { type: 'text', text: 'Let me check.' }, { type: 'tool_use', id: 'tu_1', name: 'inspect', input: { x: 1 } }],
      tool_calls: [{ id: 'tu_1', name: 'inspect', args: { x: 1 }, type: 'tool_call' }],
    });
    const result = new ToolMessage({ content: [{ type: 'text', text: 'a 1x1 image' }], tool_call_id: 'tu_1' });
    const [h, a, t] = converter.toOpenAI([human, ai, result], 'messages');
    expect(h).toEqual({ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${pixel}` } }] });
    expect(a).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'Looking at it.' }, { type: 'text', text: 'Let me check.' }],
      tool_calls: [{ id: 'tu_1', type: 'function', function: { name: 'inspect', arguments: '{"x":1}' } }],
    });
    expect(t).toEqual({ role: 'tool', tool_call_id: 'tu_1', content: [{ type: 'text', text: 'a 1x1 image' }] });
    // The same message is the same object on the next request, and maps back to its message.
    expect(converter.toOpenAI([human], 'messages')[0]).toBe(h);
    expect(converter.original(h)).toBe(human);
    // The image is counted as an image (tiles), not as its base64 text.
    expect(counter.message(h, openaiChatLens)).toBeGreaterThan(counter.message({ role: 'user', content: 'What is this?' }, openaiChatLens) + 60);
  });

  test('the model name comes from the model, from initChatModel\'s config, or from the model a binding wraps', () => {
    expect(modelNameOf(new RecordingChatModel(answer('ok'), { model: 'gpt-4o' }))).toBe('gpt-4o');
    expect(modelNameOf({ _defaultConfig: { model: 'claude-sonnet-4-5', modelProvider: 'anthropic' } })).toBe('claude-sonnet-4-5');
    expect(modelNameOf({ bound: { bound: { modelName: 'gpt-4.1' } } })).toBe('gpt-4.1');
    expect(modelNameOf(new RecordingChatModel(answer('ok')))).toBeUndefined();
  });

  test('a value that is not a LangChain message names its position', () => {
    expect(() => createMessageConverter().toOpenAI([new HumanMessage('ok'), { role: 'user' } as never], 'request.messages')).toThrow(/^request\.messages\[1\]: must be a LangChain message/);
  });
});
