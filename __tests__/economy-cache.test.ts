import { describe, expect, it } from '@jest/globals';
import type { OpenAIChatMessage } from '../src/index.js';
import { collectViews, economyOfViews, NO_COMPRESSION, replayEconomy } from '../bench/economy/economy-replay.js';
import { PRICES, priceOf, type ModelPrice } from '../bench/economy/prices.js';
import { anthropicBlocks, canonicalJson, openaiCachedTokens, simulateCache, type CacheRequest } from '../bench/economy/prompt-cache.js';

/** A message whose token count is written on it (`n`), so every expected figure is plain arithmetic. */
const msg = (role: string, text: string, n: number, extra: Partial<OpenAIChatMessage> = {}): OpenAIChatMessage => ({ role, content: text, n, ...extra });
const count = (m: OpenAIChatMessage) => m.n as number;
const noOverhead = { requestOverhead: 0 };
const req = (...messages: OpenAIChatMessage[]): CacheRequest => ({ messages });

const gpt41 = priceOf('gpt-4.1');
const sonnet = priceOf('claude-sonnet-4.5');
const haiku = priceOf('claude-haiku-4.5');

describe('OpenAI rules', () => {
  const sys = msg('system', 'policy', 1500);
  const u1 = msg('user', 'q1', 100);
  const a1 = msg('assistant', 'r1', 200);
  const u2 = msg('user', 'q2', 100);
  const a2 = msg('assistant', 'r2', 300);
  const u3 = msg('user', 'q3', 100);

  it('an append-only conversation caches its previous prompt, rounded down to 1024 + k x 128', () => {
    const sim = simulateCache([req(sys, u1), req(sys, u1, a1, u2), req(sys, u1, a1, u2, a2, u3)], 'openai', count, gpt41, noOverhead);
    // Shared 0, 1600, 1900 -> cached 0, 1024 + 4*128 = 1536, 1024 + 6*128 = 1792.
    expect(sim.perRequest.map((r) => r.sharedPrefixTokens)).toEqual([0, 1600, 1900]);
    expect(sim.perRequest.map((r) => r.cachedTokens)).toEqual([0, 1536, 1792]);
    expect(sim.inputTokens).toBe(1600 + 1900 + 2300);
    expect(sim.cachedTokens).toBe(3328);
    expect(sim.cacheWriteTokens).toBe(0);
    expect(sim.cachedShare).toBeCloseTo(3328 / 5800, 10);
    // gpt-4.1: $2 input, $0.50 cached.
    expect(sim.cost).toBeCloseTo(((5800 - 3328) * 2 + 3328 * 0.5) / 1e6, 12);
    expect(sim.costWithoutCache).toBeCloseTo((5800 * 2) / 1e6, 12);
  });

  it('a cut at the front of every request caches nothing', () => {
    const m = [1, 2, 3, 4, 5].map((i) => msg(i % 2 ? 'user' : 'assistant', `m${i}`, 600));
    const sim = simulateCache([req(m[0], m[1], m[2]), req(m[1], m[2], m[3]), req(m[2], m[3], m[4])], 'openai', count, gpt41, noOverhead);
    expect(sim.cachedTokens).toBe(0);
    expect(sim.cost).toBeCloseTo((3 * 1800 * 2) / 1e6, 12);
    // With a short system message kept in front, the shared prefix (500 tokens) is still under 1024.
    const s = msg('system', 'short', 500);
    const kept = simulateCache([req(s, m[0], m[1]), req(s, m[1], m[2]), req(s, m[2], m[3])], 'openai', count, gpt41, noOverhead);
    expect(kept.perRequest.map((r) => r.sharedPrefixTokens)).toEqual([0, 500, 500]);
    expect(kept.cachedTokens).toBe(0);
  });

  it('caches nothing below 1024 tokens', () => {
    const s = msg('system', 's', 300);
    const sim = simulateCache([req(s, u1), req(s, u1, a1, u2), req(s, u1, a1, u2, a2, u3)], 'openai', count, gpt41, noOverhead);
    expect(sim.perRequest.map((r) => r.promptTokens)).toEqual([400, 700, 1100]);
    expect(sim.perRequest.map((r) => r.sharedPrefixTokens)).toEqual([0, 400, 700]);
    expect(sim.cachedTokens).toBe(0);
  });

  it('rounds the cached length down to 1024 + k x 128', () => {
    expect(openaiCachedTokens(1023, 5000)).toBe(0);
    expect(openaiCachedTokens(1024, 5000)).toBe(1024);
    expect(openaiCachedTokens(1151, 5000)).toBe(1024);
    expect(openaiCachedTokens(1152, 5000)).toBe(1152);
    expect(openaiCachedTokens(1279, 5000)).toBe(1152);
    expect(openaiCachedTokens(3000, 5000)).toBe(2944);
    expect(openaiCachedTokens(2000, 1000)).toBe(0);
    const s = msg('system', 's', 1151);
    const sim = simulateCache([req(s, u1), req(s, u1, u2)], 'openai', count, gpt41, noOverhead);
    // Shared 1251 -> 1024 + 128 = 1152.
    expect(sim.perRequest[1].cachedTokens).toBe(1152);
  });

  it('compares canonical JSON, ends the prefix at the first differing message, and matches any earlier request', () => {
    const a = { role: 'system', content: 'x', n: 2000 };
    const reordered = { n: 2000, content: 'x', role: 'system' };
    expect(canonicalJson(a)).toBe(canonicalJson(reordered));
    const b = msg('user', 'b', 100);
    const c = msg('user', 'c', 100);
    const bEdited = msg('user', 'b!', 100);
    const sim = simulateCache([req(a, b), req(reordered, c), req(a, bEdited, c), req({ ...a }, b, c)], 'openai', count, gpt41, noOverhead);
    // Request 2 shares the system message (a copy with other key order); 3 differs at b; 4 shares a, b with request 1.
    expect(sim.perRequest.map((r) => r.sharedPrefixTokens)).toEqual([0, 2000, 2000, 2100]);
    expect(sim.perRequest.map((r) => r.cachedTokens)).toEqual([0, 1920, 1920, 2048]);
  });

  it('puts tools first: changing them loses the whole prefix; the request overhead is never cached', () => {
    const tools1 = [{ type: 'function', function: { name: 'f' } }];
    const tools2 = [{ type: 'function', function: { name: 'g' } }];
    const countTools = () => 50;
    const s = msg('system', 's', 2000);
    const sim = simulateCache([{ messages: [s, u1], tools: tools1 }, { messages: [s, u1, u2], tools: tools1 }, { messages: [s, u1, u2], tools: tools2 }], 'openai', count, gpt41, { countTools });
    expect(sim.perRequest.map((r) => r.promptTokens)).toEqual([2153, 2253, 2253]);
    expect(sim.perRequest.map((r) => r.sharedPrefixTokens)).toEqual([0, 2150, 0]);
    expect(sim.perRequest.map((r) => r.cachedTokens)).toEqual([0, 2048, 0]);
  });
});

describe('Anthropic rules', () => {
  const sys = msg('system', 'policy', 2000);
  const u1 = msg('user', 'q1', 500);
  const a1 = msg('assistant', 'r1', 300);
  const u2 = msg('user', 'q2', 200);

  it('writes at 1.25x on the first request, then reads at 0.1x and writes only what is new', () => {
    const sim = simulateCache([req(sys, u1), req(sys, u1, a1, u2)], 'anthropic', count, sonnet, noOverhead);
    const [first, second] = sim.perRequest;
    expect(first).toMatchObject({ promptTokens: 2500, cachedTokens: 0, cacheWriteTokens: 2500, uncachedTokens: 0 });
    expect(first.cost).toBeCloseTo((2500 * 3.75) / 1e6, 12);
    expect(second).toMatchObject({ promptTokens: 3000, cachedTokens: 2500, cacheWriteTokens: 500, uncachedTokens: 0 });
    expect(second.cost).toBeCloseTo((2500 * 0.3 + 500 * 3.75) / 1e6, 12);
    expect(sim.cachedShare).toBeCloseTo(2500 / 5500, 10);
    // The request overhead (3 tokens by default) is plain input.
    const withOverhead = simulateCache([req(sys, u1), req(sys, u1, a1, u2)], 'anthropic', count, sonnet);
    expect(withOverhead.perRequest[1]).toMatchObject({ promptTokens: 3003, cachedTokens: 2500, cacheWriteTokens: 500, uncachedTokens: 3 });
  });

  it('looks back at most 20 blocks from the last breakpoint, then falls back to the system breakpoint', () => {
    const extra = (k: number) => Array.from({ length: k }, (_, i) => msg(i % 2 ? 'user' : 'assistant', `x${i}`, 10));
    // 19 new blocks: the entry written at u1 is within the window.
    const near = simulateCache([req(sys, u1), req(sys, u1, ...extra(19))], 'anthropic', count, sonnet, noOverhead);
    expect(near.perRequest[1]).toMatchObject({ cachedTokens: 2500, cacheWriteTokens: 190 });
    // 20 new blocks: u1's entry is out of reach; only the system prompt's entry is read.
    const far = simulateCache([req(sys, u1), req(sys, u1, ...extra(20))], 'anthropic', count, sonnet, noOverhead);
    expect(far.perRequest[1]).toMatchObject({ cachedTokens: 2000, cacheWriteTokens: 700 });
    // An assistant message with three tool calls is three blocks.
    const calls = msg('assistant', '', 30, { tool_calls: ['a', 'b', 'c'].map((id) => ({ id, type: 'function', function: { name: 'f', arguments: '{}' } })) });
    expect(anthropicBlocks(calls)).toBe(3);
    expect(anthropicBlocks({ ...calls, content: 'text' })).toBe(4);
  });

  it('writes nothing under the model minimum (1024 Sonnet 4.5, 4096 Haiku 4.5)', () => {
    const s = msg('system', 's', 500);
    const q = msg('user', 'q', 300);
    const r = msg('assistant', 'r', 400);
    const q2 = msg('user', 'q2', 100);
    const r2 = msg('assistant', 'r2', 100);
    const q3 = msg('user', 'q3', 100);
    const requests = [req(s, q), req(s, q, r, q2), req(s, q, r, q2, r2, q3)];
    const sim = simulateCache(requests, 'anthropic', count, sonnet, noOverhead);
    // 800 tokens: nothing written; 1300: written whole (no read); 1500: reads 1300, writes 200.
    expect(sim.perRequest.map((x) => [x.cachedTokens, x.cacheWriteTokens, x.uncachedTokens])).toEqual([[0, 0, 800], [0, 1300, 0], [1300, 200, 0]]);
    const h = simulateCache(requests, 'anthropic', count, haiku, noOverhead);
    expect(h.cachedTokens + h.cacheWriteTokens).toBe(0);
    expect(h.cost).toBeCloseTo((3600 * 1) / 1e6, 12);
  });

  it('a cut at the front still reads the system prompt at its own breakpoint, and rewrites the rest', () => {
    const m = [1, 2, 3, 4].map((i) => msg(i % 2 ? 'user' : 'assistant', `m${i}`, 600));
    const sim = simulateCache([req(sys, m[0], m[1]), req(sys, m[1], m[2]), req(sys, m[2], m[3])], 'anthropic', count, sonnet, noOverhead);
    expect(sim.perRequest.map((x) => [x.cachedTokens, x.cacheWriteTokens])).toEqual([[0, 3200], [2000, 1200], [2000, 1200]]);
    // Without a system message nothing is ever read, and every request pays the write premium.
    const bare = simulateCache([req(m[0], m[1]), req(m[1], m[2]), req(m[2], m[3])], 'anthropic', count, sonnet, noOverhead);
    expect(bare.cachedTokens).toBe(0);
    expect(bare.cost).toBeGreaterThan(bare.costWithoutCache);
  });

  it('refuses a model whose minimum or price the table does not give', () => {
    expect(() => simulateCache([req(sys, u1)], 'anthropic', count, priceOf('claude-sonnet-5.5'))).toThrow(/minimum cacheable length/);
    expect(() => simulateCache([req(sys, u1)], 'openai', count, priceOf('gpt-5'))).toThrow(/cached-input price/);
    expect(simulateCache([req(sys, u1)], 'anthropic', count, priceOf('claude-sonnet-5.5'), { minCacheableTokens: 1024 }).cacheWriteTokens).toBe(2500);
  });
});

describe('price table', () => {
  it('has a dated source for every entry, a note for every missing figure, and consistent cache prices', () => {
    expect(new Set(PRICES.map((p) => p.model)).size).toBe(PRICES.length);
    expect(PRICES.some((p) => p.provider === 'openai')).toBe(true);
    expect(PRICES.some((p) => p.provider === 'anthropic')).toBe(true);
    for (const p of PRICES) {
      expect(p.sources.length).toBeGreaterThan(0);
      for (const s of p.sources) {
        expect(s.url).toMatch(/^https:\/\/\S+$/);
        expect(s.read).toMatch(/^\d{4}-\d{2}-\d{2}$/);
        expect(Number.isNaN(Date.parse(s.read))).toBe(false);
        expect(s.what.length).toBeGreaterThan(0);
      }
      const figures: (keyof ModelPrice)[] = ['input', 'cachedInput', 'cacheWrite', 'output', 'minCacheableTokens'];
      for (const key of figures) {
        const v = p[key];
        if (v === null) expect(p.note ?? '').not.toBe('');
        else expect(typeof v === 'number' && v > 0).toBe(true);
      }
      if (p.input !== null && p.cachedInput !== null) expect(p.cachedInput).toBeLessThan(p.input);
      if (p.input !== null && p.cacheWrite !== null) expect(p.cacheWrite).toBeCloseTo(p.provider === 'anthropic' ? 1.25 * p.input : p.input, 10);
      if (p.provider === 'openai') expect(p.minCacheableTokens).toBe(1024);
    }
    expect(() => priceOf('no-such-model')).toThrow();
  });
});

describe('replayEconomy', () => {
  // Tiny conversation: system, then user / assistant turns; requests end before each assistant message.
  const conversation: OpenAIChatMessage[] = [msg('system', 'policy', 2000)];
  for (let i = 0; i < 4; i++) conversation.push(msg('user', `q${i}`, 300), msg('assistant', `a${i}`, 200));

  it('bills no compression, and a system that sends the same views, identically; a front cut caches only the system prompt', async () => {
    const identity = { name: 'identity', viewOf: (h: OpenAIChatMessage[]) => h };
    const lastTwo = { name: 'system + last 2', viewOf: (h: OpenAIChatMessage[]) => [h[0], ...h.slice(1).slice(-2)] };
    const broken = { name: 'broken', viewOf: (): OpenAIChatMessage[] => { throw new Error('boom'); } };
    const result = await replayEconomy({ conversation, systems: [identity, lastTwo, broken], budget: 3000, rules: 'openai', model: 'gpt-4.1', countMessage: count, simulate: noOverhead });
    expect(result.requests).toBe(4);
    expect(result.outputTokens).toBe(800);
    expect(result.outputCost).toBeCloseTo((800 * 8) / 1e6, 12);
    const [none, same, cut, fail] = result.systems;
    expect(none.name).toBe(NO_COMPRESSION);
    expect(same).toMatchObject({ inputTokens: none.inputTokens, cachedTokens: none.cachedTokens, cost: none.cost, requests: 4 });
    // Full histories: 2300, 2800, 3300, 3800 tokens; with the 3 overhead tokens of the budget check, the last two pass 3000.
    expect(none.inputTokens).toBe(2300 + 2800 + 3300 + 3800);
    expect(none.overBudgetRequests).toBe(2);
    // Views [s, q0], [s, a0, q1], [s, a1, q2], [s, a2, q3]: only the system message is shared.
    expect(cut.cachedTokens).toBe(0 + 1920 + 1920 + 1920);
    expect(cut.overBudgetRequests).toBe(0);
    expect(fail).toMatchObject({ requests: 0, failedRequests: 4, inputTokens: 0 });
    const views = await collectViews(conversation, [lastTwo], 3000, { countMessage: count });
    // Full histories only grow; the cut views never begin with the whole previous view.
    expect(views.systems.map((s) => s.extendedPrevious)).toEqual([3, 0]);
    expect(economyOfViews(views, 'anthropic', 'claude-sonnet-4.5', { countMessage: count, simulate: noOverhead }).systems[1].cachedTokens).toBe(3 * 2000);
  });

  it('lastRequests replays only the last requests, each with the whole history before it, and counts only their output', async () => {
    const seen: number[] = [];
    const identity = { name: 'identity', viewOf: (h: OpenAIChatMessage[]) => { seen.push(h.length); return h; } };
    const views = await collectViews(conversation, [identity], 3000, { countMessage: count, lastRequests: 2 });
    expect(views.requests).toBe(2);
    expect(seen).toEqual([6, 8]);
    expect(views.outputTokens).toBe(400);
    expect(views.systems[0].views.map((v) => v.length)).toEqual([6, 8]);
    expect((await collectViews(conversation, [identity], 3000, { countMessage: count, lastRequests: 10 })).requests).toBe(4);
  });
});
