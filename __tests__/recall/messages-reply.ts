import type { StandInReply } from './chat-stand-in.js';

/**
 * The Messages route of the loopback stand-in (`POST /v1/messages`, Anthropic): a scripted reply
 * as a Messages API response (`type: 'message'`, content blocks: thinking when `reasoning` is
 * given, text when `say` or `text` is, then one `tool_use` block per call, ids `toolu_<n>_<k>`) or,
 * for a streamed request, as the API's SSE events (`message_start`, per block its
 * `content_block_start`, deltas in two pieces and `content_block_stop`, `message_delta` with the
 * stop reason, `message_stop`).
 */

/** The content blocks of one reply to request number `index`. */
function blocks(reply: StandInReply, index: number): Record<string, unknown>[] {
  if ('text' in reply) return [{ type: 'text', text: reply.text }];
  return [
    ...(reply.reasoning !== undefined ? [{ type: 'thinking', thinking: reply.reasoning, signature: `sig_${index}` }] : []),
    ...(reply.say !== undefined ? [{ type: 'text', text: reply.say }] : []),
    ...reply.calls.map((c, k) => ({ type: 'tool_use', id: `toolu_${index}_${k}`, name: c.name, input: typeof c.arguments === 'string' ? JSON.parse(c.arguments) as unknown : c.arguments })),
  ];
}

/** A complete Messages API response for `reply` (usage: about a token per four characters of the body). */
export function messagesResponse(body: Record<string, unknown>, reply: StandInReply, index: number): Record<string, unknown> {
  return {
    id: `msg_${index}`, type: 'message', role: 'assistant', model: String(body.model ?? 'm'), content: blocks(reply, index),
    stop_reason: 'text' in reply ? 'end_turn' : 'tool_use', stop_sequence: null,
    usage: { input_tokens: Math.ceil(JSON.stringify(body).length / 4), output_tokens: 5 },
  };
}

/** The SSE text of a streamed reply, as the Messages API streams one. */
export function messagesStream(body: Record<string, unknown>, reply: StandInReply, index: number): string {
  const done = messagesResponse(body, reply, index);
  const event = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const halves = (t: string) => [t.slice(0, Math.ceil(t.length / 2)), t.slice(Math.ceil(t.length / 2))];
  let out = event('message_start', { message: { ...done, content: [], stop_reason: null, usage: { ...(done.usage as object), output_tokens: 1 } } });
  out += event('ping', {});
  (done.content as Record<string, unknown>[]).forEach((block, i) => {
    if (block.type === 'text') {
      out += event('content_block_start', { index: i, content_block: { type: 'text', text: '' } });
      for (const piece of halves(block.text as string)) out += event('content_block_delta', { index: i, delta: { type: 'text_delta', text: piece } });
    } else if (block.type === 'thinking') {
      out += event('content_block_start', { index: i, content_block: { type: 'thinking', thinking: '', signature: '' } });
      out += event('content_block_delta', { index: i, delta: { type: 'thinking_delta', thinking: block.thinking } });
      out += event('content_block_delta', { index: i, delta: { type: 'signature_delta', signature: block.signature } });
    } else {
      out += event('content_block_start', { index: i, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      for (const piece of halves(JSON.stringify(block.input))) out += event('content_block_delta', { index: i, delta: { type: 'input_json_delta', partial_json: piece } });
    }
    out += event('content_block_stop', { index: i });
  });
  out += event('message_delta', { delta: { stop_reason: done.stop_reason, stop_sequence: null }, usage: { output_tokens: 5 } });
  out += event('message_stop', {});
  return out;
}
