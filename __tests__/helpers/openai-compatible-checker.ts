/**
 * An independent checker of Mistral's role-order and call/response-count rules on OpenAI-shaped
 * messages, written from the provider notes (mistral_common validator: `_validate_message_order`,
 * `_validate_tool_calls_followed_by_tool_messages` in serving mode) and sharing no code with src
 * (type imports only). It walks the history once, as the validator does, but keeps going after a
 * fault so it can list every one.
 *
 * Conventions (the same ones the `mistral` profile states): `developer` counts as `system`, a legacy
 * `function` result as `tool`, a legacy `function_call` as one call. A count fault is placed at the
 * assistant message whose calls are miscounted, or, when the tool messages follow no calls at all,
 * at the first of them. An order fault is placed at the later message of the pair.
 */
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';

/** One fault the checker finds. */
export interface MistralProblem {
  readonly rule: 'role-order' | 'result-count';
  readonly index: number;
  readonly text: string;
}

type Role = 'system' | 'user' | 'assistant' | 'tool';

/** What may come right after each role (provider notes, Mistral: "Order"). */
const NEXT: Record<Role, Role[]> = {
  system: ['user', 'assistant', 'system'],
  user: ['assistant', 'system', 'user'],
  assistant: ['assistant', 'user', 'tool'],
  tool: ['assistant', 'tool'],
};

function roleOf(m: OpenAIChatMessage): Role {
  switch (m.role) {
    case 'developer':
      return 'system';
    case 'function':
      return 'tool';
    default:
      return m.role as Role;
  }
}

function callCount(m: OpenAIChatMessage): number {
  let n = Array.isArray(m.tool_calls) ? m.tool_calls.length : 0;
  if (m.function_call) n += 1;
  return n;
}

/** Every role-order and count fault of `messages`, in message order of discovery. */
export function mistralOrderAndCountProblems(messages: readonly OpenAIChatMessage[]): MistralProblem[] {
  const problems: MistralProblem[] = [];
  // The assistant message whose calls are being answered (-1: none yet), how many calls it made,
  // how many tool messages came since, and where the first of them stands.
  let owner = -1;
  let expected = 0;
  let seen = 0;
  let firstTool = -1;
  const settle = () => {
    if (seen === expected) return;
    const at = expected > 0 ? owner : firstTool;
    problems.push({ rule: 'result-count', index: at, text: `Not the same number of function calls and responses (${expected} calls, ${seen} responses)` });
  };
  let previous: Role | undefined;
  messages.forEach((m, i) => {
    const role = roleOf(m);
    if (previous !== undefined && !NEXT[previous].includes(role)) {
      problems.push({ rule: 'role-order', index: i, text: `Unexpected role '${m.role}' after role '${messages[i - 1].role}'` });
    }
    previous = role;
    if (role === 'tool') {
      if (seen === 0) firstTool = i;
      seen++;
    } else if (role === 'assistant') {
      settle();
      owner = i;
      expected = callCount(m);
      seen = 0;
      firstTool = -1;
    }
  });
  settle();
  return problems;
}
