import { afterEach, describe, expect, test } from '@jest/globals';
import {
  compressContext, createCompressor, InputError, MemoryStore, type ChatState, type Compressor, type StateStore, type Summarizer,
} from '../src/index.js';
import type { OpenAIChatMessage } from '../src/formats/openai-chat/types.js';
import { pairingProblems } from './helpers/oracle.js';

const open: Compressor[] = [];
const track = (c: Compressor) => (open.push(c), c);
afterEach(async () => {
  for (const c of open.splice(0)) await c.close(50);
});

/** A summarizer whose every call waits until the test releases it; it folds the texts it is given. */
function heldSummarizer() {
  const waiting: (() => void)[] = [];
  let started = 0;
  let released = false;
  const summarizer: Summarizer = {
    name: 'held',
    inputBudgetTokens: 1_000_000,
    async summarize(req) {
      started++;
      // Held until released; a job's later calls (a wider fold) then run at once.
      if (!released) await new Promise<void>((resolve) => waiting.push(resolve));
      return req.messages.map((m) => m.text).filter(Boolean).join(' | ');
    },
  };
  return { summarizer, started: () => started, release: () => { released = true; waiting.splice(0).forEach((r) => r()); } };
}

/** Six user turns, each answered, with a fact in each question. */
function sixTurns(): OpenAIChatMessage[] {
  const out: OpenAIChatMessage[] = [{ role: 'system', content: 'Be brief.' }];
  for (let t = 1; t <= 6; t++) {
    out.push({ role: 'user', content: `Note ${t}: the code for item ${t} is K${t}00${'.'.repeat(200)}` });
    out.push({ role: 'assistant', content: `Noted item ${t}.` });
  }
  out.push({ role: 'user', content: 'What are my codes?' });
  return out;
}

const until = async (condition: () => boolean) => {
  for (let i = 0; i < 10_000 && !condition(); i++) await new Promise((r) => setImmediate(r));
  if (!condition()) throw new Error('condition never held');
};

describe('nothing lost: an edit made during a background summary reaches the model', () => {
  test('the job summarizes the history as it was when triggered, and the edit makes that summary stale', async () => {
    const held = heldSummarizer();
    const c = track(createCompressor({ maxContextTokens: 400, compressionThresholdTokens: 100, keepLast: 2, summarizer: held.summarizer }));
    const history = sixTurns();
    const sent: OpenAIChatMessage[][] = [];
    const chat = c.wrap(async (req: { chatId: string; messages: OpenAIChatMessage[] }) => { sent.push(req.messages); return 'ok'; });
    await chat({ chatId: 'a', messages: history });
    await until(() => held.started() === 1);
    // While the summary runs, the caller corrects an early message by replacing it with a new object.
    history[3] = { role: 'user', content: 'Note 2: the code for item 2 is CORRECTED' };
    held.release();
    await c.drain();
    await chat({ chatId: 'a', messages: history });
    const view = JSON.stringify(sent[1]);
    expect(view).not.toContain('K200');
    expect(view).toContain('CORRECTED');
  });
});

describe('nothing stuck: a summarizer that ignores its abort signal', () => {
  test('releases its chat at the job timeout; drain() and close() settle', async () => {
    let calls = 0;
    const never: Summarizer = {
      name: 'never',
      inputBudgetTokens: 1_000_000,
      summarize: () => { calls++; return new Promise<string>(() => undefined); }, // ignores the signal, never settles
    };
    const failed: unknown[] = [];
    const c = createCompressor({ maxContextTokens: 400, compressionThresholdTokens: 100, keepLast: 2, summarizer: never, jobTimeoutMs: 30 });
    c.on('summary:failed', (e) => failed.push(e.error));
    const history = sixTurns();
    await c.wrap(async () => 'ok')({ chatId: 'a', messages: history });
    await c.drain();
    expect(failed).toHaveLength(1);
    // The chat is free again: the next trigger starts a new job instead of waiting behind the hung one.
    history.push({ role: 'assistant', content: 'K100, K200' }, { role: 'user', content: 'and again?' });
    expect(c.schedule('a', history)).toBe('started');
    await c.drain();
    expect(calls).toBe(2);
    await c.close();
  });
});

/** A store whose reads and writes can be made to fail. */
class FlakyStore implements StateStore {
  readonly inner = new MemoryStore();
  down = false;
  private fail(): void {
    if (this.down) throw Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
  }
  async get(chatId: string) { this.fail(); return this.inner.get(chatId); }
  async commit(state: ChatState, expected: number) { this.fail(); return this.inner.commit(state, expected); }
  async delete(chatId: string) { this.fail(); return this.inner.delete(chatId); }
  async close() { return this.inner.close(); }
}

describe('a store outage is not an agent outage', () => {
  test('requests are served without a summary while the store fails, with an event and a counter, and use it again when it answers', async () => {
    const store = new FlakyStore();
    const c = track(createCompressor({ maxContextTokens: 300, compressionThresholdTokens: 100, keepLast: 2, store }));
    const warnings: string[] = [];
    c.on('warning', (w) => warnings.push(w.code));
    const history = sixTurns();
    const chat = c.wrap(async (req: { chatId: string; messages: OpenAIChatMessage[] }) => req.messages);
    await chat({ chatId: 'a', messages: history });
    await c.drain();
    expect((await store.inner.get('a'))?.version).toBe(1);
    store.down = true;
    const view = await chat({ chatId: 'a', messages: history });
    expect(pairingProblems(view)).toEqual([]);
    expect(view.some((m) => String(m.content).startsWith('[Summary of'))).toBe(false);
    expect(warnings).toContain('store-unavailable');
    expect(c.stats().storeFailures).toBe(1);
    store.down = false;
    const again = await chat({ chatId: 'a', messages: history });
    expect(again.some((m) => String(m.content).startsWith('[Summary of'))).toBe(true);
  });
});

describe('the default chat id', () => {
  test('two users who open alike but are answered differently get different ids; one warning when no id is given', async () => {
    const c = track(createCompressor({ maxContextTokens: 1000, summarizer: null }));
    const warnings: string[] = [];
    c.on('warning', (w) => warnings.push(w.code));
    const ids: string[] = [];
    c.on('compressed', (e) => ids.push(e.chatId));
    const chat = c.wrap(async () => 'ok');
    const opening = [{ role: 'system', content: 'You are a helpful assistant.' }, { role: 'user', content: 'Hi' }];
    await chat({ messages: [...opening, { role: 'assistant', content: 'Hello! How can I help with your order?' }, { role: 'user', content: 'order 1' }] });
    await chat({ messages: [...opening, { role: 'assistant', content: 'Hi there, what do you need today?' }, { role: 'user', content: 'order 2' }] });
    expect(ids[0]).not.toBe(ids[1]);
    // The same conversation keeps its id as it grows.
    await chat({ messages: [...opening, { role: 'assistant', content: 'Hello! How can I help with your order?' }, { role: 'user', content: 'order 1' }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'more' }] });
    expect(ids[2]).toBe(ids[0]);
    expect(warnings.filter((w) => w === 'no-chat-id')).toHaveLength(1);
  });
});

describe('input that used to crash', () => {
  test('a 8M-character run of letters and a 4M-character run of CJK text are counted', () => {
    expect(compressContext([{ role: 'user', content: 'a'.repeat(8_000_000) }]).report.tokensBefore).toBeGreaterThan(900_000);
    expect(compressContext([{ role: 'user', content: '中'.repeat(4_000_000) }]).report.tokensBefore).toBeGreaterThan(3_900_000);
  });

  test('JSON nested 5,000 levels deep is refused as bad input, naming the message', async () => {
    let deep: Record<string, unknown> = {};
    const top = deep;
    for (let i = 0; i < 5000; i++) deep = (deep.x = {}) as Record<string, unknown>;
    const messages = [{ role: 'user', content: 'hi', extra: top }];
    expect(() => compressContext(messages, { maxContextTokens: 5 })).toThrow(InputError);
    expect(() => compressContext(messages, { maxContextTokens: 5 })).toThrow(/^messages\[0\]: is nested more than 256 levels deep/);
    const c = track(createCompressor());
    await expect(c.wrap(async () => 'ok')({ messages })).rejects.toThrow(InputError);
    await expect(c.wrap(async () => 'ok')({ chatId: 'x', messages })).rejects.toThrow(/^messages\[0\]: is nested more than 256 levels deep/);
  });
});

describe('repair re-attaches real results where only one call can be meant', () => {
  const call = (id: string, name = 'lookup') => ({ id, type: 'function', function: { name, arguments: '{"q":1}' } });
  const ask = { role: 'user', content: 'look it up' };
  const result = (extra: Record<string, unknown>) => ({ role: 'tool', content: 'the real result', ...extra });
  const check = (history: OpenAIChatMessage[], action: string) => {
    const { messages, report } = compressContext(history);
    expect(pairingProblems(messages)).toEqual([]);
    expect(JSON.stringify(messages)).toContain('the real result');
    expect(JSON.stringify(messages)).not.toContain('produced no result');
    expect(report.repaired.map((r) => r.action)).toEqual([action]);
    return messages;
  };

  test('a single call answered by a tool message without tool_call_id', () => {
    const out = check([ask, { role: 'assistant', content: null, tool_calls: [call('c1')] }, result({}) as OpenAIChatMessage], 'rekeyed-result');
    expect(out[2]).toMatchObject({ role: 'tool', tool_call_id: 'c1', content: 'the real result' });
  });

  test('tool_call_id 1 (a number) answering call "1"', () => {
    const out = check([ask, { role: 'assistant', content: null, tool_calls: [call('1')] }, result({ tool_call_id: 1 }) as OpenAIChatMessage], 'rekeyed-result');
    expect(out[2]).toMatchObject({ tool_call_id: '1' });
  });

  test('an assistant text message between the call and its result', () => {
    const out = check([ask, { role: 'assistant', content: null, tool_calls: [call('c1')] }, { role: 'assistant', content: 'Let me check.' }, result({ tool_call_id: 'c1' }) as OpenAIChatMessage], 'moved-result');
    expect(out.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  test('the result placed before its call', () => {
    const out = check([ask, result({ tool_call_id: 'c1' }) as OpenAIChatMessage, { role: 'assistant', content: null, tool_calls: [call('c1')] }, { role: 'assistant', content: 'done' }], 'moved-result');
    expect(out.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  test('a legacy function message answering a tool_calls entry of the same name', () => {
    const out = check([ask, { role: 'assistant', content: null, tool_calls: [call('c1', 'lookup')] }, { role: 'function', name: 'lookup', content: 'the real result' }], 'rekeyed-result');
    expect(out[2]).toEqual({ role: 'tool', tool_call_id: 'c1', content: 'the real result' });
  });

  test('where two calls could be meant, nothing is guessed: the result goes and both calls get an error result', () => {
    const history = [ask, { role: 'assistant', content: null, tool_calls: [call('c1'), call('c2')] }, result({}) as OpenAIChatMessage];
    const { messages, report } = compressContext(history);
    expect(pairingProblems(messages)).toEqual([]);
    expect(report.repaired.map((r) => r.action).sort()).toEqual(['added-result', 'added-result', 'removed-orphan']);
  });
});

describe('keepLast means what it says', () => {
  test('keepLastYields false: the last keepLast messages (in whole groups) are sent whatever the budget; over budget is reported, not hidden', () => {
    const history = sixTurns();
    const tight = compressContext(history, { maxContextTokens: 120, keepLast: 4, keepLastYields: false });
    expect(tight.messages.slice(-4)).toEqual(history.slice(-4));
    const wider = compressContext(history, { maxContextTokens: 120, keepLast: 8, keepLastYields: false });
    expect(wider.messages.slice(-8)).toEqual(history.slice(-8));
    expect(wider.report.overBudget).toBe(true);
    // Different keepLast, different views: the option is not swallowed by the budget.
    expect(tight.messages.length).toBeLessThan(wider.messages.length);
  });

  test('by default the kept tail gives way to the limit, the last user message and the newest round stay (keepLastYields false: sent whole, reported over budget)', () => {
    const rounds = (k: number): OpenAIChatMessage[] => [
      { role: 'assistant', content: null, tool_calls: [{ id: `c${k}`, type: 'function', function: { name: 'search', arguments: `{"page":${k}}` } }] },
      { role: 'tool', tool_call_id: `c${k}`, content: `page ${k}: ${'result text '.repeat(60)}` },
    ];
    const history: OpenAIChatMessage[] = [
      { role: 'system', content: 'You are a careful agent.' },
      { role: 'user', content: 'Find every page.' },
      ...[1, 2, 3, 4, 5, 6].flatMap(rounds),
    ];
    const sent = compressContext(history, { maxContextTokens: 500, keepLast: 6, keepLastYields: false });
    expect(sent.report.overBudget).toBe(true);
    expect(sent.messages).toEqual(history);
    const { messages, report } = compressContext(history, { maxContextTokens: 500, keepLast: 6 });
    expect(compressContext(history, { maxContextTokens: 500, keepLast: 6, keepLastYields: true }).messages).toEqual(messages);
    expect(pairingProblems(messages)).toEqual([]);
    expect(report.overBudget).toBe(false);
    expect(report.tokensAfter).toBeLessThanOrEqual(500);
    expect(messages.slice(0, 2)).toEqual(history.slice(0, 2));
    expect(messages.slice(-2)).toEqual(history.slice(-2));
    expect(report.notes.join(' ')).toMatch(/keepLast yielded to the limit/);
    expect(() => compressContext(history, { keepLastYields: 'yes' as unknown as boolean })).toThrow(/options\.keepLastYields: must be true or false, got/);
  });
});
