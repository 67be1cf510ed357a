import type { CallRef, Reading } from '../lens.js';
import type { OpenAIChatMessage } from '../openai-chat/types.js';

/**
 * How mistral_common (the validator of the Mistral API and of vLLM's "mistral" tokenizer mode)
 * sees an OpenAI-shaped history: its roles, and the stretches over which it counts calls and
 * responses. Read by the Mistral rule units; they never pair results any other way.
 */

/** The four roles mistral_common knows. */
export type MistralRole = 'system' | 'user' | 'assistant' | 'tool';

/**
 * The Mistral role an OpenAI message stands for: `developer` is instructions (system), a legacy
 * `function` result is a tool response. The `role-unsupported` rule reports both shapes; the order
 * and count rules judge them as what they stand for, so one fault is not reported three times.
 */
export function mistralRole(role: string): MistralRole {
  if (role === 'developer') return 'system';
  if (role === 'function') return 'tool';
  return role as MistralRole;
}

/**
 * One stretch as mistral_common counts it: an assistant message (or the start of the history) and
 * every tool message before the next assistant message. User and system messages do not end a
 * stretch (the order rule reports them where they stand).
 */
export interface MistralSegment {
  /** Index of the assistant message that starts it; -1 for the stretch before the first one. */
  readonly opener: number;
  /** Index of the next assistant message, or the history's length. */
  readonly end: number;
  /** The calls the opener makes (none for the start or an assistant without calls). */
  readonly calls: readonly CallRef[];
  /** Indexes of the tool (and legacy function) messages in the stretch, in order. */
  readonly responses: readonly number[];
}

/** The stretches of `messages`, in order, covering every message. Linear. */
export function mistralSegments(messages: readonly OpenAIChatMessage[], read: (m: OpenAIChatMessage) => Reading): MistralSegment[] {
  const out: MistralSegment[] = [];
  let opener = -1;
  let calls: readonly CallRef[] = [];
  let responses: number[] = [];
  messages.forEach((m, i) => {
    const role = mistralRole(m.role);
    if (role === 'tool') responses.push(i);
    if (role !== 'assistant') return;
    out.push({ opener, end: i, calls, responses });
    opener = i;
    calls = read(m).calls;
    responses = [];
  });
  out.push({ opener, end: messages.length, calls, responses });
  return out;
}
