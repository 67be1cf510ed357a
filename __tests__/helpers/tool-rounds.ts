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
