import { afterEach, describe, expect, test } from '@jest/globals';
import { validateMessages } from '../src/formats/profiles.js';
import { openaiProfile } from '../src/formats/openai-chat/profile.js';
import { generateConversation } from '../bench/fixtures/conversation.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { createCompressor, type Compressor } from '../src/runtime/compressor.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { createTokenCounter } from '../src/tokens/counter.js';
import type { Summarizer } from '../src/summarize/summarizer.js';
import { scriptedSummarizer } from './helpers/test-summarizers.js';

const counter = createTokenCounter();
const open: Compressor[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close(200)));
});

function track<C extends Compressor>(c: C): C {
  open.push(c);
  return c;
}

/** A long valid history that is well over 3k tokens. */
function history(seed: number, messages = 120): OpenAIChatMessage[] {
  return generateConversation({ messages, seed });
}

const echo = async (request: { messages: OpenAIChatMessage[]; chatId?: string }) => ({ sent: request.messages });

describe('createCompressor().wrap', () => {
  test('passes the view to the handler and returns its response untouched', async () => {
    const c = track(createCompressor({ maxContextTokens: 3000, summarizer: null, counter }));
    const response = { id: 'resp-1', sent: [] as OpenAIChatMessage[] };
    const wrapped = c.wrap(async (req: { messages: OpenAIChatMessage[]; chatId: string }) => {
      response.sent = req.messages;
      return response;
    });
    const msgs = history(1);
    const out = await wrapped({ messages: msgs, chatId: 'a' });
    expect(out).toBe(response);
    expect(out.sent.length).toBeLessThan(msgs.length);
    expect(validateMessages(out.sent, openaiProfile)).toEqual([]);
  });

  test('without a summary and over the limit, serves the best valid view and says so', async () => {
    const c = track(createCompressor({ maxContextTokens: 2500, summarizer: null, counter }));
    let note = '';
    c.on('compressed', (e) => {
      note = e.report.notes.join(' ');
    });
    const { sent } = await c.wrap(echo)({ messages: history(2), chatId: 'b' });
    expect(validateMessages(sent, openaiProfile)).toEqual([]);
    expect(note).toMatch(/no usable summary yet/);
  });

  test('a background summary lands after the response and is used by the next request', async () => {
    const summarizer = scriptedSummarizer(() => 20);
    const c = track(createCompressor({ maxContextTokens: 4000, compressionThresholdTokens: 2000, keepLast: 6, summarizer, counter }));
    const done: number[] = [];
    c.on('summary:done', (e) => done.push(e.coveredIds.length));
    const msgs = history(3);
    const wrapped = c.wrap(echo);
    await wrapped({ messages: msgs, chatId: 'c' });
    await c.drain();
    expect(done).toHaveLength(1);
    const { sent } = await wrapped({ messages: msgs, chatId: 'c' });
    const summaryMessages = sent.filter((m) => typeof m.content === 'string' && m.content.includes('folded'));
    expect(summaryMessages).toHaveLength(1);
    expect(validateMessages(sent, openaiProfile)).toEqual([]);
  });

  test('chat id: explicit, metadata.chat_id, then a fingerprint of the opening', async () => {
    const c = track(createCompressor({ summarizer: null, counter }));
    const ids: string[] = [];
    c.on('compressed', (e) => ids.push(e.chatId));
    const wrapped = c.wrap(echo);
    const msgs = history(4, 20);
    await wrapped({ messages: msgs, chatId: 'explicit' });
    await wrapped({ messages: msgs, metadata: { chat_id: 'meta' } } as never);
    await wrapped({ messages: msgs });
    await wrapped({ messages: msgs.slice(0, 10) });
    expect(ids[0]).toBe('explicit');
    expect(ids[1]).toBe('meta');
    expect(ids[2]).toMatch(/^fp:/);
    expect(ids[3]).toBe(ids[2]);
  });

  test('rejects a request without messages, naming the field', async () => {
    const c = track(createCompressor({ summarizer: null, counter }));
    await expect(c.wrap(echo)({} as never)).rejects.toThrow(/request\.messages/);
  });
});

/** Marks every message of a chat so a shared summarizer can tell which chat a call is for. */
function markChat(msgs: OpenAIChatMessage[], tag: string): OpenAIChatMessage[] {
  return msgs.map((m) => {
    if (typeof m.content === 'string') return { ...m, content: `${tag} ${m.content}` };
    if (Array.isArray(m.content)) return { ...m, content: [{ type: 'text', text: tag }, ...m.content] };
    return { ...m, content: tag };
  });
}

/** Resolves once `condition()` holds, checking once per event-loop turn (no clock involved). */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setImmediate(resolve));
}

/** One line of the event log of the load test. */
type LoadEvent =
  | { readonly event: 'summary:start' | 'summary:end'; readonly chat: string }
  | { readonly event: 'response'; readonly chat: string; readonly whileSummarizing: boolean }
  | { readonly event: 'release' | 'liveness guard opened the gate' };

/**
 * A summarizer shared by all chats whose calls finish only when the test lets them: `release()`
 * ends every call waiting now, `open()` also lets later calls through at once. It tells chats
 * apart by their `[chat-k]` tag, logs when a chat's call starts and ends, and records the most
 * calls of one chat inside it at the same time.
 */
function gatedSummarizer(log: LoadEvent[]) {
  let waiting: Array<() => void> = [];
  let opened = false;
  const inside = new Map<string, number>();
  const maxConcurrent = new Map<string, number>();
  const release = () => {
    const now = waiting;
    waiting = [];
    for (const finish of now) finish();
  };
  const summarizer: Summarizer = {
    name: 'gated',
    inputBudgetTokens: 1_000_000,
    async summarize(req) {
      const chat = req.messages.map((e) => e.text).join(' ').match(/\[(chat-\d+)\]/)?.[1] ?? 'unknown';
      inside.set(chat, (inside.get(chat) ?? 0) + 1);
      maxConcurrent.set(chat, Math.max(maxConcurrent.get(chat) ?? 0, inside.get(chat)!));
      log.push({ event: 'summary:start', chat });
      try {
        if (!opened) {
          await new Promise<void>((resolve, reject) => {
            waiting.push(resolve);
            req.signal!.addEventListener('abort', () => reject(req.signal!.reason), { once: true });
          });
        }
        log.push({ event: 'summary:end', chat });
        return `${req.previousSummary ?? ''}\nfolded ${req.messages.length} messages`.trim();
      } finally {
        inside.set(chat, inside.get(chat)! - 1);
      }
    },
  };
  return {
    summarizer,
    maxConcurrent,
    /** True while a call for `chat` is inside the summarizer (held at the gate). */
    summarizing: (chat: string) => (inside.get(chat) ?? 0) > 0,
    /** Calls waiting at the gate now. */
    held: () => waiting.length,
    release,
    open() {
      opened = true;
      release();
    },
  };
}

describe('per-chat locking and coalescing', () => {
  test('200 concurrent requests over 20 chats: one job per chat at a time, every trigger run or coalesced, no request waits', async () => {
    const log: LoadEvent[] = [];
    const gate = gatedSummarizer(log);
    // A window every chat's kept tail leaves room in: a summary is asked for only where a view can hold one.
    const c = track(createCompressor({ maxContextTokens: 8000, compressionThresholdTokens: 1500, summarizer: gate.summarizer, concurrency: 4, counter }));
    let jobs = 0;
    c.on('summary:start', () => jobs++);
    const chats = Array.from({ length: 20 }, (_, k) => ({ id: `chat-${k}`, msgs: markChat(history(100 + k, 80), `[chat-${k}]`) }));
    const outcomes = { started: 0, coalesced: 0, other: 0 };
    const wrapped = c.wrap(async (req: { messages: OpenAIChatMessage[]; chatId: string }) => req.messages.length);
    // Five waves of 40 concurrent requests, two per chat. No summary can finish during a wave:
    // the summarizer holds every call until the wave is over, and from the second wave on some
    // chats' summaries are already held when their requests come. A request that waited for a
    // summary would never resolve; the guard then opens the gate (it never fires otherwise, it
    // is no speed limit) so that the test fails on the log below instead of hanging.
    let guardFired = false;
    const guard = setTimeout(() => {
      guardFired = true;
      log.push({ event: 'liveness guard opened the gate' });
      gate.open();
    }, 30_000);
    for (let wave = 0; wave < 5; wave++) {
      await Promise.all([...chats, ...chats].map(async (chat) => {
        await wrapped({ messages: chat.msgs, chatId: chat.id });
        log.push({ event: 'response', chat: chat.id, whileSummarizing: gate.summarizing(chat.id) });
        const outcome = c.schedule(chat.id, chat.msgs);
        if (outcome === 'started') outcomes.started++;
        else if (outcome === 'coalesced') outcomes.coalesced++;
        else outcomes.other++;
      }));
      log.push({ event: 'release' });
      gate.release();
      // Let the next jobs reach the summarizer before the next wave comes.
      if (wave < 4) await until(() => gate.held() > 0 || guardFired);
    }
    clearTimeout(guard);
    gate.open();
    await c.drain();

    // Every request resolved while the summaries were held: each wave's 40 responses came before its release.
    const requestSide = log.filter((e) => e.event === 'response' || e.event === 'release' || e.event === 'liveness guard opened the gate').map((e) => e.event);
    expect(requestSide).toEqual(Array.from({ length: 5 }, () => [...Array<string>(40).fill('response'), 'release']).flat());
    // And some of them while their own chat's summary was running: the request resolved before
    // that chat's summarizer finished.
    const servedDuringOwnSummary = log.filter((e): e is LoadEvent & { event: 'response' } => e.event === 'response' && e.whileSummarizing);
    // (Waves 2 to 5 each start with at least one chat's summary held: at least 4 x 2 requests.)
    expect(servedDuringOwnSummary.length).toBeGreaterThanOrEqual(8);
    for (const chat of new Set(servedDuringOwnSummary.map((e) => e.chat))) {
      const own = log.filter((e) => 'chat' in e && e.chat === chat).map((e) => e.event);
      expect(own.indexOf('response', own.indexOf('summary:start'))).toBeLessThan(own.indexOf('summary:end'));
    }

    expect(gate.maxConcurrent.size).toBe(20);
    for (const max of gate.maxConcurrent.values()) expect(max).toBe(1);
    // Each request triggers twice (wrap after the response, then schedule()): each is run or coalesced.
    expect(outcomes.other).toBe(0);
    expect(outcomes.started + outcomes.coalesced).toBe(200);
    expect(jobs).toBeGreaterThanOrEqual(20);
  });

  test('two quick triggers on one chat start one job; the second is folded into it', async () => {
    const summarizer = scriptedSummarizer(() => 60);
    const c = track(createCompressor({ maxContextTokens: 4000, compressionThresholdTokens: 1500, summarizer, counter }));
    const msgs = history(9, 100);
    expect(c.schedule('x', msgs)).toBe('started');
    expect(c.schedule('x', msgs)).toBe('coalesced');
    expect(c.schedule('x', msgs)).toBe('coalesced');
    await c.drain();
    expect(summarizer.maxConcurrent).toBe(1);
    // The started job plus at most one follow-up (which finds nothing new to fold in).
    expect(summarizer.calls).toBe(1);
  });
});
