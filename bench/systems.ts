/**
 * The systems compared, each as: prepare (untimed: a freshly parsed request body into the
 * system's own input), run (timed), view (untimed: the output in OpenAI Chat shape, for
 * validation and token counts). Every system gets the same budget and counts with tiktoken
 * `o200k_base` under the same per-message accounting.
 */
import { trimMessages } from '@langchain/core/messages';
import { pruneMessages, type ModelMessage } from 'ai';
import { compressContext, createCompressor, createTokenCounter, MemoryStore, type Compressor, type HistoryCache, type OpenAIChatMessage, type TokenCounter } from '../src/index.js';
import { openaiChatLens } from '../src/core/index.js';
import { fromModelMessages, toModelMessages } from './ai-sdk-convert.js';
import { fromLangChain, toLangChain } from './langchain-convert.js';
import { DeadlineExceeded, memoizedTextTokens, PEER_REQUEST_OVERHEAD, peerMessageTokens, peerTextCounter } from './peer-counter.js';

/** What a timed call is given besides its input. */
export interface RunContext {
  /** Token budget of the view. */
  readonly budget: number;
  /** performance.now() after which a peer aborts (ctxfold and slice are never cut short). */
  readonly deadline: number;
  readonly deadlineSeconds: number;
  /** The token counter ctxfold uses for this call (fresh for a cold call, shared for a replay). */
  readonly counter: TokenCounter;
  /** ctxfold's per-chat history cache (fresh for a cold call, shared for a replay) and the request's chat. */
  readonly historyCache: HistoryCache;
  readonly chatId: string;
}

/** One compared system. */
export interface BenchSystem<I = unknown, O = unknown> {
  readonly name: string;
  /** The exact call and settings, printed and written to the results. */
  readonly settings: string;
  /** True for the JSON.parse floor: it takes the body, not parsed messages, and has no view. */
  readonly floor?: boolean;
  /** True for a stateful system measured in the replay only (a cold call has no history before it). */
  readonly replayOnly?: boolean;
  /** The head and tail the system always sends whatever the budget (ctxfold's keepFirst / keepLast), for the "protected part alone over the budget" column. */
  readonly keeps?: { readonly keepFirst: number; readonly keepLast: number };
  prepare(body: string, parsed: OpenAIChatMessage[]): I;
  run(input: I, ctx: RunContext): O | Promise<O>;
  view(output: O): OpenAIChatMessage[] | undefined;
}

interface RequestBody {
  model: string;
  messages: OpenAIChatMessage[];
}

function checkDeadline(ctx: RunContext): void {
  if (performance.now() > ctx.deadline) throw new DeadlineExceeded(ctx.deadlineSeconds);
}

/** The head and tail ctxfold always sends by default (`keepFirst: 1`, `keepLast: 6`, as docs/options.md's table says). */
const CTXFOLD_DEFAULT_KEEPS = { keepFirst: 1, keepLast: 6 } as const;

const ctxfold: BenchSystem<OpenAIChatMessage[], OpenAIChatMessage[]> = {
  name: 'ctxfold',
  settings: 'compressContext(messages, { maxContextTokens: budget, counter, historyCache, chatId }); counter = createTokenCounter() (o200k_base) and historyCache = createHistoryCache(): fresh for a cold call, one per workload shared by every replay request, chatId one per conversation',
  prepare: (_body, parsed) => parsed,
  run: (messages, ctx) => compressContext(messages, { maxContextTokens: ctx.budget, counter: ctx.counter, historyCache: ctx.historyCache, chatId: ctx.chatId }).messages,
  view: (out) => out,
  keeps: CTXFOLD_DEFAULT_KEEPS,
};

/** One compressor per replay (keyed by the replay's counter), as one server process would have. */
const compressors = new WeakMap<object, Compressor>();

/**
 * The wrap's own token counter per replay (keyed by the replay's counter): it never shares
 * `compressContext`'s, so neither finds in its cache the texts the other has just counted.
 */
const wrapCounters = new WeakMap<object, TokenCounter>();
function wrapCounterOf(counter: object): TokenCounter {
  let c = wrapCounters.get(counter);
  if (!c) wrapCounters.set(counter, (c = createTokenCounter()));
  return c;
}

const ctxfoldWrap: BenchSystem<OpenAIChatMessage[], OpenAIChatMessage[]> = {
  name: 'ctxfold wrap',
  settings: "createCompressor({ maxContextTokens: 32000, compressionThresholdTokens: 24000, store: new MemoryStore(), counter }).wrap(handler), one compressor (with its own counter) per replayed workload, the request's chatId one per conversation (handler returns the view); extractive summaries run in the background between requests; replay only, and its budget is the workload's cap (32k), not each request's",
  replayOnly: true,
  keeps: CTXFOLD_DEFAULT_KEEPS,
  prepare: (_body, parsed) => parsed,
  run: async (messages, ctx) => {
    let compressor = compressors.get(ctx.counter);
    if (!compressor) {
      compressor = createCompressor({ maxContextTokens: WRAP_BUDGET, compressionThresholdTokens: 24_000, store: new MemoryStore(), counter: wrapCounterOf(ctx.counter), jobTimeoutMs: 600_000 });
      compressors.set(ctx.counter, compressor);
    }
    return compressor.wrap(async (request: { messages: OpenAIChatMessage[]; chatId: string }) => request.messages)({ messages, chatId: ctx.chatId });
  },
  view: (out) => out,
};

/** Waits for the background summaries of every replay compressor still alive (between workloads). */
export async function settleCompressors(counter: object): Promise<void> {
  const c = compressors.get(counter);
  if (c) await c.close();
  compressors.delete(counter);
}

const WRAP_BUDGET = 32_000;

/**
 * The text-count memos of the "+ memo" configurations: one Map per system and workload replay
 * (keyed by the replay's shared counter, then by the system's name), fresh for each cold call,
 * exactly as the process of a user running that one library would keep it. Two memoized peers
 * never share a Map: a text one of them counted would be free for the other.
 */
const textMemos = new WeakMap<object, Map<string, Map<string, number>>>();

function memoOf(counter: object, system: string): Map<string, number> {
  let bySystem = textMemos.get(counter);
  if (!bySystem) textMemos.set(counter, (bySystem = new Map()));
  let memo = bySystem.get(system);
  if (!memo) bySystem.set(system, (memo = new Map()));
  return memo;
}

/** The text counter of a peer `system`: tiktoken on its own encoder, through its own memo when it is a "+ memo" configuration. */
function textCounter(ctx: RunContext, system: string, memoized: boolean): (text: string) => number {
  return memoized ? memoizedTextTokens(memoOf(ctx.counter, system), peerTextCounter(system)) : peerTextCounter(system);
}

/** Names of the peer systems (each counts with its own encoder; the "+ memo" ones each have their own memo). */
const LANGCHAIN = 'langchain trimMessages';
const LANGCHAIN_MEMO = 'langchain trimMessages + memo';
const AI_SDK = 'ai-sdk pruneMessages';
const AI_SDK_MEMO = 'ai-sdk pruneMessages + memo';
const SLICE = 'slice(-N)';

/**
 * Shows each "+ memo" configuration's memo and the wrap's counter the texts of messages a server
 * saw between sampled requests (untimed), as ctxfold's counter is shown them: every system then
 * knows the same past.
 */
export function showPastMessages(counter: object, messages: readonly OpenAIChatMessage[]): void {
  const wrapCounter = wrapCounterOf(counter);
  for (const m of messages) wrapCounter.message(m, openaiChatLens);
  for (const system of [LANGCHAIN_MEMO, AI_SDK_MEMO]) {
    const count = memoizedTextTokens(memoOf(counter, system), peerTextCounter(system));
    for (const m of messages) {
      count(typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? ''));
      for (const c of m.tool_calls ?? []) {
        count(c.function.name);
        count(c.function.arguments);
      }
    }
  }
}

/** LangChain token counter of `system`: sums per message, memoized per message object within one call (and, with `memoized`, per text across requests in that system's memo). */
function langchainCounter(ctx: RunContext, system: string, memoized: boolean) {
  const text = textCounter(ctx, system, memoized);
  const memo = new WeakMap<object, number>();
  return (messages: import('@langchain/core/messages').BaseMessage[]): number => {
    checkDeadline(ctx);
    let total = PEER_REQUEST_OVERHEAD;
    for (const m of messages) {
      let n = memo.get(m);
      if (n === undefined) {
        const content = typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
        const calls = 'tool_calls' in m && Array.isArray(m.tool_calls) ? (m.tool_calls as { name: string; args: unknown }[]).map((c) => ({ name: c.name, args: JSON.stringify(c.args) })) : [];
        n = peerMessageTokens(content, calls, text);
        memo.set(m, n);
      }
      total += n;
    }
    return total;
  };
}

const langchain: BenchSystem<import('@langchain/core/messages').BaseMessage[], import('@langchain/core/messages').BaseMessage[]> = {
  name: LANGCHAIN,
  settings: "trimMessages(messages, { strategy: 'last', startOn: 'human', endOn: ['human', 'tool'], includeSystem: true, maxTokens: budget, tokenCounter }); tokenCounter sums tiktoken o200k_base counts per message (content + tool-call names and JSON.stringify(args), plus the same per-message, per-call and per-request overheads as ctxfold), memoized per message object within one call; OpenAI->LangChain conversion before and after is not timed",
  prepare: (_body, parsed) => toLangChain(parsed),
  run: (messages, ctx) => trimMessages(messages, {
    strategy: 'last', startOn: 'human', endOn: ['human', 'tool'], includeSystem: true, maxTokens: ctx.budget, tokenCounter: langchainCounter(ctx, LANGCHAIN, false),
  }),
  view: (out) => fromLangChain(out),
};

const langchainMemo: typeof langchain = {
  ...langchain,
  name: LANGCHAIN_MEMO,
  settings: `${langchain.settings}; plus a Map from text to token count kept across the requests of a workload (the memo a careful user adds)`,
  run: (messages, ctx) => trimMessages(messages, {
    strategy: 'last', startOn: 'human', endOn: ['human', 'tool'], includeSystem: true, maxTokens: ctx.budget, tokenCounter: langchainCounter(ctx, LANGCHAIN_MEMO, true),
  }),
};

/** Tokens of one AI SDK message; a tool message costs one message overhead per result part, as its OpenAI form does. */
function modelMessageTokens(m: ModelMessage, text: (t: string) => number): number {
  if (typeof m.content === 'string') return peerMessageTokens(m.content, [], text);
  if (m.role === 'tool') {
    let n = 0;
    for (const p of m.content) if (p.type === 'tool-result') n += peerMessageTokens(p.output.type === 'text' ? p.output.value : JSON.stringify(p.output), [], text);
    return n;
  }
  let body = '';
  const calls: { name: string; args: string }[] = [];
  for (const p of m.content) {
    if (p.type === 'text') body += p.text;
    else if (p.type === 'tool-call') calls.push({ name: p.toolName, args: JSON.stringify(p.input) });
  }
  return peerMessageTokens(body, calls, text);
}

const aiSdk: BenchSystem<ModelMessage[], ModelMessage[]> = {
  name: AI_SDK,
  settings: "pruneMessages({ messages, reasoning: 'before-last-message', toolCalls: 'before-last-2-messages', emptyMessages: 'remove' }), then count every message once (tiktoken o200k_base, same accounting) and drop the oldest message after a leading system message until the total fits the budget; OpenAI<->ModelMessage conversion is not timed",
  prepare: (_body, parsed) => toModelMessages(parsed),
  run: (messages, ctx) => aiSdkRun(messages, ctx, AI_SDK, false),
  view: (out) => fromModelMessages(out),
};

const aiSdkMemo: typeof aiSdk = {
  ...aiSdk,
  name: AI_SDK_MEMO,
  settings: `${aiSdk.settings}; plus a Map from text to token count kept across the requests of a workload (the memo a careful user adds)`,
  run: (messages, ctx) => aiSdkRun(messages, ctx, AI_SDK_MEMO, true),
};

function aiSdkRun(messages: ModelMessage[], ctx: RunContext, system: string, memoized: boolean): ModelMessage[] {
  const text = textCounter(ctx, system, memoized);
  {
    const pruned = pruneMessages({ messages, reasoning: 'before-last-message', toolCalls: 'before-last-2-messages', emptyMessages: 'remove' });
    const counts = pruned.map((m, i) => {
      if ((i & 255) === 0) checkDeadline(ctx);
      return modelMessageTokens(m, text);
    });
    let total = PEER_REQUEST_OVERHEAD;
    for (const c of counts) total += c;
    const first = pruned[0]?.role === 'system' ? 1 : 0;
    let start = first;
    while (total > ctx.budget && start < pruned.length) total -= counts[start++];
    return first === 1 ? [pruned[0], ...pruned.slice(start)] : pruned.slice(start);
  }
}

const sliceText = peerTextCounter(SLICE);

const slice: BenchSystem<OpenAIChatMessage[], OpenAIChatMessage[]> = {
  name: SLICE,
  settings: 'messages.slice(-N): walk back from the last message adding tiktoken counts (same accounting) while the total fits the budget; N = messages that fit',
  prepare: (_body, parsed) => parsed,
  run: (messages, ctx) => {
    let total = PEER_REQUEST_OVERHEAD;
    let n = 0;
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i];
      const cost = peerMessageTokens(typeof m.content === 'string' ? m.content : '', (m.tool_calls ?? []).map((c) => ({ name: c.function.name, args: c.function.arguments })), sliceText);
      if (total + cost > ctx.budget) break;
      total += cost;
      n++;
    }
    return n === 0 ? [] : messages.slice(-n);
  },
  view: (out) => out,
};

const jsonParse: BenchSystem<string, RequestBody> = {
  name: 'JSON.parse',
  settings: 'JSON.parse(body) of the request body {"model", "messages"}: the floor every server pays before any of the above',
  floor: true,
  prepare: (body) => body,
  run: (body) => JSON.parse(body) as RequestBody,
  view: () => undefined,
};

/** The compared systems, ctxfold first; ratios are ctxfold / each other system. */
export const SYSTEMS: readonly BenchSystem[] = [
  erase(ctxfold), erase(ctxfoldWrap), erase(langchain), erase(langchainMemo), erase(aiSdk), erase(aiSdkMemo), erase(slice), erase(jsonParse),
];

/** Forgets a system's input and output types: the harness only passes them from one method to the next. */
function erase<I, O>(system: BenchSystem<I, O>): BenchSystem {
  return system as unknown as BenchSystem;
}
