/**
 * A dated price table for the prompt-cache economy bench: USD per 1M tokens for base input,
 * cached input (a cache read), cache write, and output, plus the shortest prompt (OpenAI) or
 * prefix (Anthropic) the provider caches.
 *
 * How it was made: every figure was looked up on 2026-11-22 with the project's search tool,
 * which serves stored copies of public pages (their crawl dates vary and are not shown; no live
 * page was fetched). The official pricing pages were searched first. Where the stored copy of an
 * official page did not show a row, the figure comes from secondary pages that quote the official
 * page; each source says which kind it is (`official`). A price no source gave, or on which sources
 * disagree, is `null`, and the `note` says why: nothing here is guessed. Verify before you bill.
 *
 * OpenAI has no cache-write premium ("no additional fees", official prompt-caching guide): a
 * token written to the cache is billed as plain input, so `cacheWrite` equals `input` there.
 * Anthropic bills a 5-minute-TTL cache write at 1.25x base input and a cache read at 0.1x (official
 * pricing page); the 1-hour TTL (2x) is not modelled.
 */

/** Where a figure was read. */
export interface PriceSource {
  readonly url: string;
  /** The day it was read (ISO date). */
  readonly read: string;
  /** Which figures this source gave. */
  readonly what: string;
  /** True for the provider's own page (a stored copy of it); false for a page quoting it. */
  readonly official: boolean;
}

/** One model's prices, USD per 1M tokens. `null` where no source gave the figure (never guessed). */
export interface ModelPrice {
  readonly model: string;
  readonly provider: 'openai' | 'anthropic';
  readonly input: number | null;
  /** A cache hit: OpenAI's "cached input", Anthropic's "cache hits & refreshes". */
  readonly cachedInput: number | null;
  /** A cache write: Anthropic's 5-minute cache write; OpenAI: the input price (no premium). */
  readonly cacheWrite: number | null;
  readonly output: number | null;
  /** OpenAI: shortest prompt that is cached; Anthropic: shortest cacheable prefix at a breakpoint. */
  readonly minCacheableTokens: number | null;
  readonly sources: readonly PriceSource[];
  readonly note?: string;
}

const READ = '2026-11-22';

const OPENAI_GUIDE: PriceSource = {
  url: 'https://developers.openai.com/api/docs/guides/prompt-caching',
  read: READ,
  what: 'caching automatic for prompts of 1024 tokens or more; no additional fees (so no cache-write premium)',
  official: true,
};

const ANTHROPIC_PRICING: PriceSource = {
  url: 'https://platform.claude.com/docs/en/about-claude/pricing',
  read: READ,
  what: 'table columns base input / 5m cache writes / 1h cache writes / cache hits and refreshes / output; Opus 4.5-4.8 rows $5 / $6.25 / $10 / $0.50 / $25 (the stored copy shown did not reach the Sonnet and Haiku rows)',
  official: true,
};

const ANTHROPIC_MIN_LENGTHS: PriceSource = {
  url: 'https://github.com/anthropics/anthropic-sdk-python/issues/1194',
  read: READ,
  what: 'quotes the developer docs: minimum cacheable prompt 1024 tokens for Sonnet 4.6, Sonnet 4.5, Opus 4.1, Opus 4, Sonnet 4; 4096 for Opus 4.6, Opus 4.5, Haiku 4.5; 2048 for Haiku 3.5 and Haiku 3',
  official: false,
};

const LITELLM_MIN_LENGTHS: PriceSource = {
  url: 'https://docs.litellm.ai/docs/completion/prompt_caching',
  read: READ,
  what: 'minimum input tokens (page last updated 2026-10-07): OpenAI 1,024; Anthropic Sonnet 4.x / Opus 4, 4.1 1,024; Haiku 4.5, Opus 4.5, 4.6 4,096',
  official: false,
};

/** The price table. Models after GPT-5.5 are left out: OpenAI says its caching mechanics may differ from GPT-5.6 on. */
export const PRICES: readonly ModelPrice[] = [
  {
    model: 'gpt-4o',
    provider: 'openai',
    input: 2.5,
    cachedInput: 1.25,
    cacheWrite: 2.5,
    output: 10,
    minCacheableTokens: 1024,
    sources: [
      OPENAI_GUIDE,
      { url: 'https://openai.com/index/api-prompt-caching/', read: READ, what: 'launch post: 50% discount on cached input for GPT-4o; cached from 1,024 tokens in 128-token increments', official: true },
      { url: 'https://chatgptpricing-akr.pages.dev/api-pricing', read: READ, what: 'GPT-4o $2.50 input / $1.25 cached / $10.00 output, listed as legacy, quoting developers.openai.com/api/docs/pricing', official: false },
    ],
    note: 'morphllm.com/openai-api-pricing (June 2026) says GPT-4o is no longer listed on the official pricing page.',
  },
  {
    model: 'gpt-4.1',
    provider: 'openai',
    input: 2,
    cachedInput: 0.5,
    cacheWrite: 2,
    output: 8,
    minCacheableTokens: 1024,
    sources: [
      OPENAI_GUIDE,
      { url: 'https://tokenmath.io/openai-api-pricing-explained', read: READ, what: 'GPT-4.1 $2.00 input / $8.00 output ("OpenAI model pricing, checked Jun 21, 2026")', official: false },
      { url: 'https://docs.rs/crate/adk-model/latest/source/src/openai/pricing.rs', read: READ, what: 'GPT-4.1 family: 75% off cached input (March 2026), so $0.50', official: false },
    ],
    note: 'No stored copy of the official pricing page showed the GPT-4.1 row; the cached price is input x 0.25 as the second source states it.',
  },
  {
    model: 'gpt-5.4',
    provider: 'openai',
    input: 2.5,
    cachedInput: 0.25,
    cacheWrite: 2.5,
    output: 15,
    minCacheableTokens: 1024,
    sources: [
      OPENAI_GUIDE,
      { url: 'https://www.morphllm.com/openai-api-pricing', read: READ, what: 'GPT-5.4 $2.50 input / $0.25 cached / $15.00 output (June 2026, "as listed on the official pricing page")', official: false },
      { url: 'https://docs.rs/crate/adk-model/latest/source/src/openai/pricing.rs', read: READ, what: 'GPT-5.4 $2.50 / $0.25 / $15.00 (March 2026)', official: false },
    ],
  },
  {
    model: 'gpt-5.5',
    provider: 'openai',
    input: 5,
    cachedInput: 0.5,
    cacheWrite: 5,
    output: 30,
    minCacheableTokens: 1024,
    sources: [
      OPENAI_GUIDE,
      { url: 'https://www.morphllm.com/openai-api-pricing', read: READ, what: 'GPT-5.5 $5.00 input / $0.50 cached / $30.00 output (June 2026)', official: false },
      { url: 'https://aipromptshub.co/blog/openai-api-pricing-2026', read: READ, what: 'GPT-5.5 $5.00 / $30.00, cached input at about 10% of input (June 2026)', official: false },
    ],
  },
  {
    model: 'gpt-5',
    provider: 'openai',
    input: 1.25,
    cachedInput: null,
    cacheWrite: 1.25,
    output: 10,
    minCacheableTokens: 1024,
    sources: [
      OPENAI_GUIDE,
      { url: 'https://docs.rs/crate/openai-cost/latest/source/src/pricing.rs', read: READ, what: 'gpt-5 $1.25 input / $10.00 output ("openai.com/api/pricing as of 2026-Q2")', official: false },
      { url: 'https://chatgptpricing-akr.pages.dev/api-pricing', read: READ, what: 'GPT-5 cached input $0.625', official: false },
      { url: 'https://docs.rs/crate/adk-model/latest/source/src/openai/pricing.rs', read: READ, what: 'GPT-5 family: 90% off cached input (would be $0.125)', official: false },
    ],
    note: 'Cached input price not found on an official page and the secondary sources disagree ($0.625 vs 90% off); left null. morphllm.com (June 2026) says GPT-5 is no longer listed.',
  },
  {
    model: 'claude-sonnet-4.5',
    provider: 'anthropic',
    input: 3,
    cachedInput: 0.3,
    cacheWrite: 3.75,
    output: 15,
    minCacheableTokens: 1024,
    sources: [
      ANTHROPIC_PRICING,
      { url: 'https://docs.electronhub.ai/guides/prompt-caching', read: READ, what: 'Claude Sonnet 4.5 $3 input / $3.75 5m write / $6 1h write / $0.30 hit / $15 output; 5m write 1.25x, hit 0.1x', official: false },
      ANTHROPIC_MIN_LENGTHS,
      LITELLM_MIN_LENGTHS,
    ],
  },
  {
    model: 'claude-sonnet-4.6',
    provider: 'anthropic',
    input: 3,
    cachedInput: 0.3,
    cacheWrite: 3.75,
    output: 15,
    minCacheableTokens: 1024,
    sources: [
      ANTHROPIC_PRICING,
      { url: 'https://claude-api-cookbook.vercel.app/claude-sonnet-vs-haiku-when-to-use/', read: READ, what: 'Sonnet 4.6 $3 input / $15 output / $0.30 cached read / $3.75 5m write', official: false },
      ANTHROPIC_MIN_LENGTHS,
      { url: 'https://docs.orq.ai/docs/proxy/prompt-caching', read: READ, what: 'lists Sonnet 4.6 minimum as 2,048 (disagrees)', official: false },
    ],
    note: 'Minimum cacheable length: the docs as quoted say 1024; orq.ai says 2048, and the issue quoting the docs reports caching observed only from 2048. 1024 is kept (the documented figure).',
  },
  {
    model: 'claude-haiku-4.5',
    provider: 'anthropic',
    input: 1,
    cachedInput: 0.1,
    cacheWrite: 1.25,
    output: 5,
    minCacheableTokens: 4096,
    sources: [
      ANTHROPIC_PRICING,
      { url: 'https://docs.electronhub.ai/guides/prompt-caching', read: READ, what: 'Claude Haiku 4.5 $1 input / $1.25 5m write / $2 1h write / $0.10 hit / $5 output', official: false },
      ANTHROPIC_MIN_LENGTHS,
      LITELLM_MIN_LENGTHS,
      { url: 'https://docs.aihubmix.com/en/api/Claude-Cache', read: READ, what: 'minimum cache tokens for Opus 4.5, Opus 4.6 and Haiku 4.5 raised from 1,024 to 4,096', official: false },
    ],
    note: 'Not 2048: the 2048-token minimum is Haiku 3 / 3.5; Haiku 4.5 is 4096 in every source found.',
  },
  {
    model: 'claude-opus-4.6',
    provider: 'anthropic',
    input: 5,
    cachedInput: 0.5,
    cacheWrite: 6.25,
    output: 25,
    minCacheableTokens: 4096,
    sources: [ANTHROPIC_PRICING, ANTHROPIC_MIN_LENGTHS, LITELLM_MIN_LENGTHS],
  },
  {
    model: 'claude-sonnet-5.5',
    provider: 'anthropic',
    input: 2,
    cachedInput: 0.1,
    cacheWrite: 2.5,
    output: 10,
    minCacheableTokens: null,
    sources: [
      { url: 'https://github.com/TheKrush/PromptFuel/releases/tag/v1.0.23', read: READ, what: 'Sonnet 5.5 cache read cut from $0.20 to $0.10 per 1M on 2026-10-07 (v1.0.22: $2 input / $10 output / $2.50 5m write)', official: false },
      { url: 'https://github.com/kurofune/claudit/releases/tag/v1.9.2', read: READ, what: 'same cut, checked against the live pricing page on 2026-10-24', official: false },
    ],
    note: 'Minimum cacheable length not found for Sonnet 5.5 (null): simulateCache refuses this model under the Anthropic rules unless a minimum is passed.',
  },
];

/** The table entry for `model`; throws for a model not in the table. */
export function priceOf(model: string): ModelPrice {
  const p = PRICES.find((x) => x.model === model);
  if (!p) throw new Error(`no price for model ${model}; known: ${PRICES.map((x) => x.model).join(', ')}`);
  return p;
}
