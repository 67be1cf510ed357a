/**
 * The fields each OpenAI Chat role carries that a conversion from OpenAI maps (role, content,
 * calls, results), plus `assistantExtra` on an assistant message where the target keeps more;
 * `except` leaves out roles a target does not read. Any other field a conversion reports lost.
 */
export function chatFields(assistantExtra: readonly string[] = [], except: readonly string[] = []): Readonly<Record<string, readonly string[]>> {
  const fields: Record<string, readonly string[]> = {
    system: Object.freeze(['role', 'content']),
    developer: Object.freeze(['role', 'content']),
    user: Object.freeze(['role', 'content']),
    assistant: Object.freeze(['role', 'content', 'tool_calls', 'function_call', ...assistantExtra]),
    tool: Object.freeze(['role', 'content', 'tool_call_id', 'name']),
    function: Object.freeze(['role', 'content', 'name']),
  };
  for (const role of except) delete fields[role];
  return Object.freeze(fields);
}
