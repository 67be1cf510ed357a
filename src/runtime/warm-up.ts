import type { OpenAIChatMessage } from '../formats/openai-chat/types.js';
import { createTokenCounter } from '../tokens/counter.js';
import { analyzeContext } from './compress.js';
import type { ResolvedCompressOptions } from './options.js';

/** A short tool-calling chat, planned when a compressor is made (see `warmUpPlanner`). */
const WARM_UP_CHAT: readonly OpenAIChatMessage[] = [
  { role: 'system', content: 'You are a helpful assistant.' },
  { role: 'user', content: 'What is the status of order 42?' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'call_warm_up', type: 'function', function: { name: 'order_status', arguments: '{"order":42}' } }] },
  { role: 'tool', tool_call_id: 'call_warm_up', content: '{"order":42,"status":"shipped"}' },
  { role: 'assistant', content: 'Order 42 has shipped.' },
  { role: 'user', content: 'Thanks. When will it arrive?' },
];

/**
 * Plans a short chat three ways when a compressor is made, so that its first request costs what
 * a later one does: within a window (the byte-bound path), and over one, counted on a fresh
 * counter of `encoding` (which loads the process's shared tiktoken encoder, once per process) and
 * again on a warm one. Works on a counter of its own, with no history cache, store or summarizer:
 * nothing the compressor's requests use is touched. `encoding` undefined (the compressor counts
 * with the caller's counter, possibly not tiktoken): only the byte-bound path is run, on a
 * tiktoken counter that never encodes.
 */
export function warmUpPlanner(planning: ResolvedCompressOptions, encoding: string | undefined): void {
  const counter = createTokenCounter({ encoding: encoding ?? 'o200k_base' });
  const base: ResolvedCompressOptions = { ...planning, counter, historyCache: undefined, chatId: 'warm-up', format: 'openai', provider: undefined, summary: undefined };
  analyzeContext(WARM_UP_CHAT, { ...base, plan: { ...planning.plan, maxContextTokens: 100_000, compressionThresholdTokens: 75_000 } });
  if (encoding === undefined) return;
  const over = { ...base, plan: { ...planning.plan, maxContextTokens: 40, compressionThresholdTokens: 30 } };
  analyzeContext(WARM_UP_CHAT, over);
  analyzeContext(WARM_UP_CHAT, over);
}
