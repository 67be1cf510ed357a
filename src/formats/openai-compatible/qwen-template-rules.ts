import type { Rule, Violation } from '../../core/validate/rules.js';
import { contentText } from '../openai-chat/lens.js';
import type { OpenAIChatMessage, OpenAIToolCall } from '../openai-chat/types.js';

/**
 * The rules of the Qwen3 chat template (as vLLM, llama.cpp and Ollama render OpenAI-shaped
 * messages with it). The template ignores `tool_call_id`: an assistant's `tool_calls` become
 * `<tool_call>` blocks, and the `tool` messages right after it become ONE user turn of
 * `<tool_response>` blocks, paired with the calls by position. It raises only "No user query found
 * in messages."; the other faults render without error and the model reads wrong pairs.
 */

/** The Qwen template's own error text. */
export const QWEN_TEMPLATE_TEXT = Object.freeze({
  noQuery: 'No user query found in messages.',
});

const callsOf = (m: OpenAIChatMessage | undefined): readonly OpenAIToolCall[] => (m?.role === 'assistant' && Array.isArray(m.tool_calls) ? m.tool_calls : []);
const idOf = (m: OpenAIChatMessage): string | undefined => (typeof m.tool_call_id === 'string' ? m.tool_call_id : undefined);

/** One user turn of `<tool_response>` blocks: a maximal run of consecutive `tool` messages. */
interface ToolRun {
  /** Index of the first tool message. */
  readonly start: number;
  /** End (exclusive). */
  readonly end: number;
}

/** The runs of consecutive `tool` messages, in order (any other role ends a run, as in the template). */
function toolRuns(messages: readonly OpenAIChatMessage[]): ToolRun[] {
  const out: ToolRun[] = [];
  for (let i = 0; i < messages.length; i++) {
    if (messages[i].role !== 'tool') continue;
    let end = i + 1;
    while (end < messages.length && messages[end].role === 'tool') end++;
    out.push({ start: i, end });
    i = end - 1;
  }
  return out;
}

/** The run of tool messages starting right after `index` (empty when the next message is not a tool message). */
function runAfter(messages: readonly OpenAIChatMessage[], index: number): ToolRun {
  let end = index + 1;
  while (end < messages.length && messages[end].role === 'tool') end++;
  return { start: index + 1, end };
}

/**
 * I1 by position: the tool messages right after an assistant message with tool_calls are exactly
 * as many as its calls. Reported at the assistant message, with the first call left without a
 * response or the first response left without a call.
 */
export const qwenCallCount = Object.freeze<Rule<OpenAIChatMessage>>({
  id: 'result-count',
  check({ messages }) {
    const out: Violation[] = [];
    messages.forEach((m, i) => {
      const calls = callsOf(m);
      if (calls.length === 0) return;
      const run = runAfter(messages, i);
      const responses = run.end - run.start;
      if (responses === calls.length) return;
      const detail = responses < calls.length
        ? `calls from ${calls[responses].id} (${calls[responses].function?.name}) on get no <tool_response>`
        : `the tool messages from messages[${run.start + calls.length}] on answer no <tool_call>`;
      out.push({
        index: i,
        rule: 'result-count',
        id: responses < calls.length ? calls[responses].id : idOf(messages[run.start + calls.length]),
        message: `messages[${i}]: the assistant message makes ${calls.length} tool call${calls.length === 1 ? '' : 's'} and ${responses} tool message${responses === 1 ? '' : 's'} follow${responses === 1 ? 's' : ''} it; the Qwen chat template ignores tool_call_id and pairs each <tool_response> with a <tool_call> by position, so ${detail}`,
      });
    });
    return out;
  },
});

/** I2: a run of tool messages stands right after an assistant message with tool_calls. Reported at every tool message of an orphan run. */
export const qwenResultsFollowCalls = Object.freeze<Rule<OpenAIChatMessage>>({
  id: 'result-orphan',
  check({ messages }) {
    const out: Violation[] = [];
    for (const run of toolRuns(messages)) {
      if (callsOf(messages[run.start - 1]).length > 0) continue;
      const before = run.start === 0 ? 'it starts the conversation' : `messages[${run.start - 1}], role ${messages[run.start - 1].role}, makes no tool call`;
      for (let i = run.start; i < run.end; i++) {
        out.push({ index: i, rule: 'result-orphan', id: idOf(messages[i]), message: `messages[${i}]: tool message follows no assistant message with tool_calls (${before}); the Qwen chat template renders it as a <tool_response> that answers no <tool_call>` });
      }
    }
    return out;
  },
});

/** A user message the template counts as a query: its text is not one `<tool_response>...</tool_response>` block. */
function isQuery(m: OpenAIChatMessage): boolean {
  if (m.role !== 'user') return false;
  const text = contentText(m.content).trim();
  return !(text.startsWith('<tool_response>') && text.endsWith('</tool_response>'));
}

/** I7: at least one genuine user message (Qwen3.5 and later templates raise otherwise). Reported at index 0. */
export const qwenUserQuery = Object.freeze<Rule<OpenAIChatMessage>>({
  id: 'no-user-query',
  check({ messages }) {
    if (messages.some(isQuery)) return [];
    return [{ index: 0, rule: 'no-user-query', message: `messages[0]: ${QWEN_TEMPLATE_TEXT.noQuery} (the chat template needs a user message that is not a <tool_response> block; keep the last user turn)` }];
  },
});

/**
 * Opt-in, not in the `qwen-template` profile: the tool messages right after an assistant message
 * stand in the order of its calls, as their tool_call_ids say. OpenAI pairs by id and accepts any
 * order; the Qwen template pairs by position, so results returned out of order reach the model
 * answering the wrong calls. Reported at each tool message whose id names another call of the turn.
 */
export const qwenResultsInCallOrder = Object.freeze<Rule<OpenAIChatMessage>>({
  id: 'result-position',
  check({ messages }) {
    const out: Violation[] = [];
    messages.forEach((m, i) => {
      const calls = callsOf(m);
      const run = runAfter(messages, i);
      for (let k = 0; k < calls.length && run.start + k < run.end; k++) {
        const at = run.start + k;
        const id = idOf(messages[at]);
        const named = calls.findIndex((c) => c.id === id);
        if (named < 0 || named === k) continue;
        out.push({
          index: at,
          rule: 'result-position',
          id,
          message: `messages[${at}]: tool message answers ${id} (call ${named + 1} of messages[${i}]) but stands at position ${k + 1}, where the Qwen chat template pairs it with ${calls[k].id} (${calls[k].function?.name}); put the tool messages in the order of the calls`,
        });
      }
    });
    return out;
  },
});
