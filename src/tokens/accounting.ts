import type { MessageLens } from '../formats/lens.js';
import type { TextCounter } from './counter.js';

/** Per-message and per-request overheads of the chat format (OpenAI's published accounting). */
export const MESSAGE_OVERHEAD_TOKENS = 3;
export const CALL_OVERHEAD_TOKENS = 3;
export const REQUEST_OVERHEAD_TOKENS = 3;

/**
 * Tokens one message costs as the provider bills it: the role and per-message overhead, its text,
 * every call's name and arguments plus a per-call overhead, every result's content (and one for
 * a result's name), and its images by the provider's rule. Reads the message only through its lens.
 */
export function messageTokens<M>(m: M, lens: MessageLens<M>, text: TextCounter): number {
  const media = lens.mediaTokens ? lens.mediaTokens(m) : 0;
  if (lens.billedTextTokens) return MESSAGE_OVERHEAD_TOKENS + 1 + media + lens.billedTextTokens(m, text, CALL_OVERHEAD_TOKENS);
  const t = lens.read(m);
  let n = MESSAGE_OVERHEAD_TOKENS + 1 + media + text(t.text);
  for (const c of t.calls) n += CALL_OVERHEAD_TOKENS + text(c.name) + text(c.arguments);
  for (const r of t.results) n += text(r.content) + (r.name ? 1 : 0);
  for (const { call, result } of t.inPlace) n += CALL_OVERHEAD_TOKENS + text(call.name) + text(call.arguments) + text(result.content);
  return n;
}
