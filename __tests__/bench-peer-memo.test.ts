import { describe, expect, test } from '@jest/globals';
import { peerEncoder, peerTextsEncoded } from '../bench/peer-counter.js';
import { settleCompressors, SYSTEMS, showPastMessages, type BenchSystem, type RunContext } from '../bench/systems.js';
import { createHistoryCache, createTokenCounter, type OpenAIChatMessage } from '../src/index.js';

/**
 * The "+ memo" peers stand for a user who runs that one library with a Map from text to token
 * count. Two of them run in one replay, so each must keep its own memo: a memo filled by the other
 * library would make a system look faster than it is for any user. Likewise every peer counts
 * with its own encoder instance (one kept warm by the other peers' work is not what a user has).
 */
const history: OpenAIChatMessage[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'first question about the weather in a city' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"q":"city weather"}' } }] },
  { role: 'tool', tool_call_id: 'c1', content: 'sunny, light wind from the west' },
  { role: 'assistant', content: 'It is sunny.' },
  { role: 'user', content: 'and tomorrow, in the other city?' },
];
const body = JSON.stringify({ model: 'gpt-4o', messages: history });

function system(name: string): BenchSystem {
  const s = SYSTEMS.find((x) => x.name === name);
  if (!s) throw new Error(`no system ${name}`);
  return s;
}

/** Texts a system's call encoded (the rest it found in its memo). */
async function encodesOf(s: BenchSystem, counter: object): Promise<number> {
  const ctx = { budget: 10_000, deadline: Number.POSITIVE_INFINITY, deadlineSeconds: 60, counter, historyCache: createHistoryCache(), chatId: 'c' } as RunContext;
  const input = s.prepare(body, (JSON.parse(body) as { messages: OpenAIChatMessage[] }).messages);
  const before = peerTextsEncoded(s.name);
  await s.run(input, ctx);
  return peerTextsEncoded(s.name) - before;
}

describe('benchmark peers with a memo', () => {
  const memoized = SYSTEMS.filter((s) => s.name.endsWith('+ memo')).map((s) => s.name);

  test('there are at least two of them (what this test is about)', () => {
    expect(memoized.length).toBeGreaterThanOrEqual(2);
  });

  test.each(memoized)('%s counts a request itself even when another memoized peer ran on it first', async (name) => {
    const alone = await encodesOf(system(name), createTokenCounter());
    expect(alone).toBeGreaterThan(0);
    const replay = createTokenCounter();
    for (const other of memoized) if (other !== name) await encodesOf(system(other), replay);
    expect(await encodesOf(system(name), replay)).toBe(alone);
    // Its own memo still works: the same request again is all hits.
    expect(await encodesOf(system(name), replay)).toBe(0);
  });

  test.each(memoized)('%s is shown the past requests a server saw between sampled ones (showPastMessages)', async (name) => {
    const replay = createTokenCounter();
    showPastMessages(replay, history);
    expect(await encodesOf(system(name), replay)).toBe(0);
  });
});

describe('benchmark peers count with their own encoder', () => {
  const peers = SYSTEMS.filter((s) => !s.name.startsWith('ctxfold') && !s.floor).map((s) => s.name);

  test.each(peers)('%s encodes with its own instance, and running it counts for no other peer', async (name) => {
    const others = peers.filter((p) => p !== name);
    const before = others.map((p) => peerTextsEncoded(p));
    expect(await encodesOf(system(name), createTokenCounter())).toBeGreaterThan(0);
    expect(others.map((p) => peerTextsEncoded(p))).toEqual(before);
    for (const other of others) expect(peerEncoder(other)).not.toBe(peerEncoder(name));
  });
});

describe('the two ctxfold systems of a replay', () => {
  test('ctxfold wrap counts with its own counter, never the one compressContext is given', async () => {
    const replay = createTokenCounter();
    // A budget under the history's bytes: compressContext must count (a byte bound within it would decide without counting).
    const ctx = { budget: 20, deadline: Number.POSITIVE_INFINITY, deadlineSeconds: 60, counter: replay, historyCache: createHistoryCache(), chatId: 'c' } as RunContext;
    const input = () => (JSON.parse(body) as { messages: OpenAIChatMessage[] }).messages;
    await system('ctxfold').run(input(), ctx);
    const seen = replay.stats();
    expect(seen.encoded).toBeGreaterThan(0);
    showPastMessages(replay, history);
    await system('ctxfold wrap').run(input(), ctx);
    await settleCompressors(replay);
    expect(replay.stats()).toEqual(seen);
  });
});
