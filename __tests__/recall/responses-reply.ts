import type { StandInReply } from './chat-stand-in.js';

/**
 * The Responses route of the loopback stand-in (`POST /v1/responses`): a scripted reply as a
 * Responses API response (`object: 'response'`, `status: 'completed'`, `output` items) or, for a
 * streamed request, as SSE events (`response.created`, one text delta, `response.completed`).
 * Output item order: the reasoning item, the text message, then the calls (ids `rs_<n>`,
 * `msg_<n>`, `fc_<n>_<k>`, call ids `call_<n>_<k>`).
 */

/** The output items of one reply to request number `index`. */
function outputItems(reply: StandInReply, index: number): Record<string, unknown>[] {
  const message = (text: string) => ({ type: 'message', id: `msg_${index}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] });
  if ('text' in reply) return [message(reply.text)];
  return [
    ...(reply.reasoning !== undefined ? [{ type: 'reasoning', id: `rs_${index}`, summary: [{ type: 'summary_text', text: reply.reasoning }] }] : []),
    ...(reply.say !== undefined ? [message(reply.say)] : []),
    ...reply.calls.map((c, k) => ({
      type: 'function_call', id: `fc_${index}_${k}`, call_id: `call_${index}_${k}`, name: c.name,
      arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments), status: 'completed',
    })),
  ];
}

/** A complete Responses API response for `reply` (usage: about a token per four characters of the body). */
export function responsesResponse(body: Record<string, unknown>, reply: StandInReply, index: number): Record<string, unknown> {
  const input = Math.ceil(JSON.stringify(body).length / 4);
  return {
    id: `resp_${index}`, object: 'response', created_at: 1, status: 'completed', model: String(body.model ?? 'm'),
    output: outputItems(reply, index), error: null, incomplete_details: null, instructions: body.instructions ?? null,
    metadata: body.metadata ?? {}, parallel_tool_calls: true, temperature: 1, top_p: 1, tool_choice: 'auto', tools: body.tools ?? [],
    usage: { input_tokens: input, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: input + 5 },
  };
}

/** The SSE text of a streamed reply: created, one text delta, completed. */
export function responsesStream(body: Record<string, unknown>, reply: StandInReply, index: number): string {
  const done = responsesResponse(body, reply, index);
  const text = 'text' in reply ? reply.text : 'streamed';
  const event = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  return event('response.created', { sequence_number: 0, response: { ...done, status: 'in_progress', output: [] } })
    + event('response.output_text.delta', { sequence_number: 1, item_id: `msg_${index}`, output_index: 0, content_index: 0, delta: text })
    + event('response.completed', { sequence_number: 2, response: done });
}
