/**
 * One user request followed by `rounds` tool rounds (a call, then a bulky result of ~330 tokens
 * each), in OpenAI Chat: a chain whose last few messages alone are over a small window, so a
 * kept tail has to give way for the view to fit.
 */
export function toolRoundsChat(request: string, rounds = 8): Array<Record<string, unknown>> {
  const chain = Array.from({ length: rounds }, (_, i) => [
    { role: 'assistant', content: null, tool_calls: [{ id: `call_r${i}`, type: 'function', function: { name: 'read_page', arguments: JSON.stringify({ page: i }) } }] },
    { role: 'tool', tool_call_id: `call_r${i}`, content: `page ${i}: ${'lorem ipsum dolor sit amet '.repeat(60)}` },
  ]).flat();
  return [{ role: 'user', content: request }, ...chain];
}

/**
 * `exchanges` short exchanges (a user request, a call, a ~130-token result, a reply), then a last
 * user question, in OpenAI Chat: small groups, so different low-water marks land on different
 * cut points.
 */
export function pageExchangesChat(exchanges = 16): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [{ role: 'system', content: 'You read pages for the user.' }];
  for (let i = 0; i < exchanges; i++) {
    out.push({ role: 'user', content: `Read page ${i}.` });
    out.push({ role: 'assistant', content: null, tool_calls: [{ id: `call_p${i}`, type: 'function', function: { name: 'read_page', arguments: JSON.stringify({ page: i }) } }] });
    out.push({ role: 'tool', tool_call_id: `call_p${i}`, content: `page ${i}: ${'lorem ipsum dolor sit amet '.repeat(20)}` });
    out.push({ role: 'assistant', content: `Page ${i} is read.` });
  }
  out.push({ role: 'user', content: 'Which pages did you read?' });
  return out;
}
