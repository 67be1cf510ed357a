/**
 * A simulated provider prompt cache over the requests of one conversation: which input tokens
 * of each request the provider would serve from its prompt cache, which it would write to it,
 * and what the input side of the conversation then costs. Every request is the list of messages
 * actually sent (OpenAI Chat shape) plus optional `tools`.
 *
 * PREFIX IDENTITY (both rule sets). A request is a sequence of segments: the `tools` array (one
 * segment, when present), then each message. Two segments are identical when their canonical JSON
 * (object keys sorted, `undefined` dropped) is identical. The prefix two requests share ends at
 * the first segment that differs. Simplification: providers compare tokens, so part of a
 * differing message (its role header, the start of its text) may really be shared; here nothing
 * inside a differing message is, and the shared prefix is a whole number of messages. Tokens come
 * from the counter given (`countMessage`, per message, its overhead included); `tools` cost what
 * `countMessage` gives for a system message holding their JSON unless `countTools` is given; the
 * request overhead (reply priming, 3 tokens) is at the end of the prompt and never cached.
 * Timing: the requests of a conversation are assumed close together (each within the cache
 * lifetime of the one before), so nothing expires or is evicted, and every request reaches the
 * machine holding its prefix (OpenAI routing, `prompt_cache_key`, overflow are not modelled).
 *
 * OPENAI RULES ('openai'), as read on 2026-11-22 in stored copies of:
 *  - https://developers.openai.com/api/docs/guides/prompt-caching (official guide): caching is
 *    automatic, "enabled automatically for prompts that are 1024 tokens or longer"; "cache hits are
 *    only possible for exact prefix matches"; messages, images, tools and schemas are part of the
 *    prefix; in-memory caches are cleared after 5-10 minutes of inactivity, at most one hour; no
 *    additional fees (a token written to the cache costs plain input).
 *  - https://openai.com/index/api-prompt-caching/ (launch post) and
 *    https://raw.githubusercontent.com/openai/openai-cookbook/main/examples/Prompt_Caching_201.ipynb
 *    (OpenAI cookbook): the longest previously computed prefix is cached, "starting at 1,024 tokens
 *    and increasing in 128-token increments". The cookbook says its mechanics apply to models before
 *    GPT-5.6; the price table holds no later model.
 *  Modelled: cached tokens of a request = the longest prefix it shares with any earlier request of
 *  the conversation, 0 if the prompt or that prefix is under 1024 tokens, else rounded down to
 *  1024 + k x 128. Cached tokens are billed at the cached-input price, the rest at the input price.
 *
 * ANTHROPIC RULES ('anthropic'), as read on 2026-11-22 in stored copies of:
 *  - https://platform.claude.com/docs/en/build-with-claude/prompt-caching (official docs): explicit
 *    `cache_control` breakpoints on content blocks ("cache all content up to and including" the
 *    block); the prefix order is tools, system, messages; up to 4 breakpoints; the default TTL is 5
 *    minutes, refreshed on each hit. The stored copy shown covered the overview only; the following
 *    details were read in pages quoting the docs: the automatic prefix check looks back at most 20
 *    blocks before each explicit breakpoint and then moves to the previous breakpoint
 *    (https://platform.minimaxi.com/docs/api-reference/anthropic-api-compatible-cache, a copy of the
 *    docs' section for an Anthropic-compatible API; https://dev.to/ji_ai/claude-prompt-caching-why-cachereadinputtokens-stays-0-2c7d);
 *    the minimum cacheable length per model (see prices.ts: 1024 Sonnet 4.x, 4096 Haiku 4.5 and
 *    Opus 4.5/4.6; the 2048 minimum is Haiku 3 / 3.5).
 *  - https://platform.claude.com/docs/en/about-claude/pricing (official): 5-minute cache writes
 *    1.25x base input, cache hits 0.1x.
 *  Modelled, as a careful user places breakpoints (the docs' incremental-conversation pattern):
 *  one at the end of the tools + leading system messages (the "head"), one on the last message of
 *  every request; 2 of the 4 allowed. A breakpoint whose prefix is at least the model's minimum
 *  writes a cache entry for that prefix. At each breakpoint the provider looks for the longest
 *  written prefix ending at most 19 blocks before it (20 block positions, the breakpoint's own
 *  included), then at the previous breakpoint; the longest hit is read (cache_read_input_tokens),
 *  the tokens from there to the last cacheable breakpoint are written (cache_creation_input_tokens),
 *  the rest is plain input. Blocks per message, as the message becomes Anthropic content: a text
 *  (or each content part) is one block, each tool call one `tool_use` block, each tool result one
 *  `tool_result` block, each tool definition one block.
 *
 * Token counts use whatever counter is passed (the bench passes o200k_base): for Anthropic rules
 * the shares and ratios are meaningful, the absolute token counts are OpenAI's tokenizer's.
 */
import type { OpenAIChatMessage } from '../../src/index.js';
import { REQUEST_OVERHEAD_TOKENS } from '../../src/tokens/accounting.js';
import type { ModelPrice } from './prices.js';

/** Which provider's caching rules to apply. */
export type CacheRules = 'openai' | 'anthropic';

/** One request as sent: its messages and, optionally, its tool definitions. */
export interface CacheRequest {
  readonly messages: readonly OpenAIChatMessage[];
  readonly tools?: readonly unknown[];
}

/** OpenAI: shortest prompt that is cached, and the step the cached length is rounded down to. */
export const OPENAI_MIN_PROMPT_TOKENS = 1024;
export const OPENAI_CACHE_INCREMENT_TOKENS = 128;
/** Anthropic: most breakpoints per request, and how many block positions a breakpoint looks back over. */
export const ANTHROPIC_MAX_BREAKPOINTS = 4;
export const ANTHROPIC_LOOKBACK_BLOCKS = 20;

/** What happened to one request. */
export interface RequestCache {
  /** Tokens of the whole prompt, request overhead included. */
  readonly promptTokens: number;
  /** Longest prefix (whole segments) shared with an earlier request, before the provider's rules. */
  readonly sharedPrefixTokens: number;
  /** Tokens served from the cache (OpenAI `cached_tokens`, Anthropic `cache_read_input_tokens`). */
  readonly cachedTokens: number;
  /** Tokens written to the cache at a premium (Anthropic `cache_creation_input_tokens`; 0 for OpenAI). */
  readonly cacheWriteTokens: number;
  /** Tokens billed at the base input price. */
  readonly uncachedTokens: number;
  /** USD, input side. */
  readonly cost: number;
}

/** The conversation's totals and each request's figures. */
export interface CacheSimulation {
  readonly rules: CacheRules;
  readonly model: string;
  readonly requests: number;
  readonly inputTokens: number;
  readonly cachedTokens: number;
  readonly cacheWriteTokens: number;
  readonly uncachedTokens: number;
  /** cachedTokens / inputTokens (0 for no input). */
  readonly cachedShare: number;
  /** USD, input side, with the cache. */
  readonly cost: number;
  /** USD, input side, had every token been billed at the input price. */
  readonly costWithoutCache: number;
  readonly perRequest: RequestCache[];
}

/** Knobs of the simulation; the defaults are the rules described above. */
export interface SimulateOptions {
  /** Tokens of a request's `tools`; default: `countMessage` of a system message holding their canonical JSON. */
  readonly countTools?: (tools: readonly unknown[]) => number;
  /** Tokens every request costs once, at its end (never cached). Default 3. */
  readonly requestOverhead?: number;
  /** Overrides the model's minimum cacheable length (needed where the table has none). */
  readonly minCacheableTokens?: number;
}

/** JSON with object keys sorted at every level and `undefined` members dropped. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sorted(value));
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : sorted(v)));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sorted(v);
    }
    return out;
  }
  return value;
}

/** Content blocks a message becomes in Anthropic's format (see the rules above). */
export function anthropicBlocks(m: OpenAIChatMessage): number {
  const parts = Array.isArray(m.content) ? m.content.length : typeof m.content === 'string' && m.content.length > 0 ? 1 : 0;
  if (m.role === 'assistant') return Math.max(1, parts + (m.tool_calls?.length ?? 0));
  return Math.max(1, parts);
}

interface Segment {
  readonly id: number;
  readonly tokens: number;
  readonly blocks: number;
  /** Part of the head (tools, leading system messages) that Anthropic puts before the messages. */
  readonly head: boolean;
}

/** Gives equal segments one id, and counts each distinct segment once. */
class Interner {
  private readonly byObject = new WeakMap<object, number>();
  private readonly byJson = new Map<string, number>();
  private readonly tokens: number[] = [];

  constructor(private readonly countMessage: (m: OpenAIChatMessage) => number, private readonly countTools: (tools: readonly unknown[]) => number) {}

  message(m: OpenAIChatMessage): { id: number; tokens: number } {
    let id = this.byObject.get(m);
    if (id === undefined) {
      id = this.intern(`m${canonicalJson(m)}`, () => this.countMessage(m));
      this.byObject.set(m, id);
    }
    return { id, tokens: this.tokens[id] };
  }

  tools(tools: readonly unknown[]): { id: number; tokens: number } {
    const id = this.intern(`t${canonicalJson(tools)}`, () => this.countTools(tools));
    return { id, tokens: this.tokens[id] };
  }

  private intern(key: string, count: () => number): number {
    let id = this.byJson.get(key);
    if (id === undefined) {
      id = this.tokens.length;
      this.tokens.push(count());
      this.byJson.set(key, id);
    }
    return id;
  }
}

/** A node of the prefix tree: one per distinct prefix (sequence of segment ids) seen so far. */
interface Node {
  readonly children: Map<number, Node>;
  /** Anthropic: a cache entry was written for exactly this prefix. */
  written: boolean;
}

const newNode = (): Node => ({ children: new Map(), written: false });

function segmentsOf(request: CacheRequest, interner: Interner): Segment[] {
  const out: Segment[] = [];
  if (request.tools && request.tools.length > 0) {
    const t = interner.tools(request.tools);
    out.push({ id: t.id, tokens: t.tokens, blocks: request.tools.length, head: true });
  }
  let head = true;
  for (const m of request.messages) {
    head &&= m.role === 'system' || m.role === 'developer';
    const s = interner.message(m);
    out.push({ id: s.id, tokens: s.tokens, blocks: anthropicBlocks(m), head });
  }
  return out;
}

/** OpenAI's cached length for a shared prefix of `shared` tokens in a prompt of `prompt` tokens. */
export function openaiCachedTokens(shared: number, prompt: number): number {
  if (prompt < OPENAI_MIN_PROMPT_TOKENS || shared < OPENAI_MIN_PROMPT_TOKENS) return 0;
  return OPENAI_MIN_PROMPT_TOKENS + Math.floor((shared - OPENAI_MIN_PROMPT_TOKENS) / OPENAI_CACHE_INCREMENT_TOKENS) * OPENAI_CACHE_INCREMENT_TOKENS;
}

function need(value: number | null, what: string, model: string): number {
  if (value === null) throw new Error(`price table has no ${what} for ${model}: cannot simulate it`);
  return value;
}

/**
 * Runs the requests of one conversation, in order, through the provider's prompt cache under
 * `rules` and bills them at `prices`. See the file comment for the exact rules modelled.
 */
export function simulateCache(
  requests: readonly CacheRequest[],
  rules: CacheRules,
  countMessage: (m: OpenAIChatMessage) => number,
  prices: ModelPrice,
  options: SimulateOptions = {},
): CacheSimulation {
  const input = need(prices.input, 'input price', prices.model);
  const cachedInput = need(prices.cachedInput, 'cached-input price', prices.model);
  const cacheWrite = rules === 'anthropic' ? need(prices.cacheWrite, 'cache-write price', prices.model) : input;
  const minimum = rules === 'anthropic' ? need(options.minCacheableTokens ?? prices.minCacheableTokens, 'minimum cacheable length', prices.model) : OPENAI_MIN_PROMPT_TOKENS;
  const overhead = options.requestOverhead ?? REQUEST_OVERHEAD_TOKENS;
  const countTools = options.countTools ?? ((tools) => countMessage({ role: 'system', content: canonicalJson(tools) }));
  const interner = new Interner(countMessage, countTools);
  const root = newNode();

  const perRequest: RequestCache[] = [];
  for (const request of requests) {
    const segments = segmentsOf(request, interner);
    // Walk the prefix tree, adding this request's prefixes; note how far earlier requests reached.
    const nodes: Node[] = [root];
    const tokensAt = [0];
    const blocksAt = [0];
    let shared = 0;
    let sharing = true;
    let node = root;
    for (const s of segments) {
      let next = node.children.get(s.id);
      if (!next) {
        sharing = false;
        next = newNode();
        node.children.set(s.id, next);
      }
      node = next;
      nodes.push(node);
      tokensAt.push(tokensAt[tokensAt.length - 1] + s.tokens);
      blocksAt.push(blocksAt[blocksAt.length - 1] + s.blocks);
      if (sharing) shared = tokensAt[tokensAt.length - 1];
    }
    const n = segments.length;
    const promptTokens = tokensAt[n] + overhead;

    let cachedTokens = 0;
    let cacheWriteTokens = 0;
    if (rules === 'openai') {
      cachedTokens = openaiCachedTokens(shared, promptTokens);
    } else {
      let headEnd = 0;
      while (headEnd < n && segments[headEnd].head) headEnd++;
      const breakpoints = headEnd > 0 && headEnd < n ? [headEnd, n] : n > 0 ? [n] : [];
      if (breakpoints.length > ANTHROPIC_MAX_BREAKPOINTS) throw new Error('more breakpoints than Anthropic allows');
      // Reads: at each breakpoint, the longest written prefix within the lookback window.
      let read = 0;
      for (const p of breakpoints) {
        for (let k = p; k > 0 && blocksAt[p] - blocksAt[k] < ANTHROPIC_LOOKBACK_BLOCKS; k--) {
          if (nodes[k].written) {
            read = Math.max(read, k);
            break;
          }
        }
      }
      // Writes: every breakpoint past the read whose prefix is long enough.
      let lastWrite = read;
      for (const p of breakpoints) {
        if (p > read && tokensAt[p] >= minimum) {
          nodes[p].written = true;
          lastWrite = Math.max(lastWrite, p);
        }
      }
      cachedTokens = tokensAt[read];
      cacheWriteTokens = tokensAt[lastWrite] - tokensAt[read];
    }
    const uncachedTokens = promptTokens - cachedTokens - cacheWriteTokens;
    const cost = (uncachedTokens * input + cachedTokens * cachedInput + cacheWriteTokens * cacheWrite) / 1e6;
    perRequest.push({ promptTokens, sharedPrefixTokens: shared, cachedTokens, cacheWriteTokens, uncachedTokens, cost });
  }

  const sum = (f: (r: RequestCache) => number) => perRequest.reduce((a, r) => a + f(r), 0);
  const inputTokens = sum((r) => r.promptTokens);
  const cachedTokens = sum((r) => r.cachedTokens);
  return {
    rules,
    model: prices.model,
    requests: perRequest.length,
    inputTokens,
    cachedTokens,
    cacheWriteTokens: sum((r) => r.cacheWriteTokens),
    uncachedTokens: sum((r) => r.uncachedTokens),
    cachedShare: inputTokens === 0 ? 0 : cachedTokens / inputTokens,
    cost: sum((r) => r.cost),
    costWithoutCache: (inputTokens * input) / 1e6,
    perRequest,
  };
}
