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

/**
 * The SSE text of a streamed reply, as the Responses API streams one: `response.created`, then per
 * output item its `output_item.added`, its text or argument deltas (two pieces each) and
 * `output_item.done`, and `response.completed` with the whole response. Sequence numbers count up.
 */
export function responsesStream(body: Record<string, unknown>, reply: StandInReply, index: number): string {
  const done = responsesResponse(body, reply, index);
  let seq = 0;
  const event = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`;
  const halves = (t: string) => [t.slice(0, Math.ceil(t.length / 2)), t.slice(Math.ceil(t.length / 2))];
  let out = event('response.created', { response: { ...done, status: 'in_progress', output: [] } });
  (done.output as Record<string, unknown>[]).forEach((item, i) => {
    const base = { output_index: i, item_id: item.id };
    if (item.type === 'message') {
      const text = ((item.content as { text: string }[])[0]).text;
      out += event('response.output_item.added', { output_index: i, item: { ...item, status: 'in_progress', content: [] } });
      out += event('response.content_part.added', { ...base, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
      for (const piece of halves(text)) out += event('response.output_text.delta', { ...base, content_index: 0, delta: piece });
      out += event('response.output_text.done', { ...base, content_index: 0, text });
      out += event('response.content_part.done', { ...base, content_index: 0, part: { type: 'output_text', text, annotations: [] } });
    } else if (item.type === 'function_call') {
      const args = String(item.arguments);
      out += event('response.output_item.added', { output_index: i, item: { ...item, status: 'in_progress', arguments: '' } });
      for (const piece of halves(args)) out += event('response.function_call_arguments.delta', { ...base, delta: piece });
      out += event('response.function_call_arguments.done', { ...base, arguments: args });
    } else {
      out += event('response.output_item.added', { output_index: i, item });
    }
    out += event('response.output_item.done', { output_index: i, item });
  });
  return out + event('response.completed', { response: done });
}
