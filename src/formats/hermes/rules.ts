import type { Rule, Violation } from '../../core/validate/rules.js';
import { everyCallAnswered, resultAnswersCall, resultOnce } from '../../core/invariants/index.js';
import type { HermesMessage } from './types.js';

/**
 * Rules of Hermes text as the Qwen chat templates render it: results pair with calls by position
 * only (no ids), so the count of `<tool_response>` blocks after an assistant message must equal
 * its count of `<tool_call>` blocks, all in the one user message right after it; and the template
 * refuses a history with no genuine user message ("No user query found in messages.").
 */

const POSITIONAL = 'Hermes pairs results with calls by position, so each <tool_call> needs exactly one <tool_response>, in call order, in the user message right after it';

/** I1: every `<tool_call>` block has its `<tool_response>` block in the user message after it. */
export const hermesCallsAnswered: Rule<HermesMessage> = everyCallAnswered.rule(({ turn, calls }) => ({
  index: turn.opener,
  id: calls[0].name,
  message: `messages[${turn.opener}]: ${turn.calls.length} <tool_call> block(s) are followed by ${turn.calls.length - calls.length} <tool_response> block(s); ${POSITIONAL}. No result for: ${calls.map((c) => c.name).join(', ')}.`,
}));

/** I2: a `<tool_response>` block follows an assistant message with `<tool_call>` blocks. */
export const hermesResultsHaveCall: Rule<HermesMessage> = resultAnswersCall.rule((p) => ({
  index: p.index,
  message: `messages[${p.index}]: <tool_response> block ${p.slot + 1} answers no call: no assistant message with <tool_call> blocks comes right before it.`,
}));

/** I4: no more `<tool_response>` blocks than `<tool_call>` blocks. */
export const hermesResultsUnique: Rule<HermesMessage> = resultOnce.rule(({ result: p, turn, call }) => ({
  index: p.index,
  id: call.name,
  message: `messages[${p.index}]: <tool_response> block ${p.slot + 1} is one more than the ${turn.calls.length} <tool_call> block(s) of messages[${turn.opener}]; ${POSITIONAL}.`,
}));

/** I5: all results of one assistant message in one user message (the template renders each message as its own turn). */
export const hermesResultsTogether: Rule<HermesMessage> = {
  id: 'results-split',
  check({ structure, messages, lens }) {
    const out: Violation[] = [];
    for (const turn of structure.turns) {
      for (let i = turn.openersEnd + 1; i < turn.runEnd; i++) {
        if (lens.read(messages[i]).results.length === 0) continue;
        out.push({
          index: i,
          rule: 'results-split',
          id: turn.calls[0]?.name,
          message: `messages[${i}]: the <tool_response> blocks answering messages[${turn.opener}] are split over several user messages; ${POSITIONAL}.`,
        });
      }
    }
    return out;
  },
};

/**
 * I7: at least one genuine user message. The Qwen3 template counts a user message whose text,
 * trimmed, starts with `<tool_response>` and ends with `</tool_response>` as a tool result, not a query.
 */
export const hermesHasUserQuery: Rule<HermesMessage> = {
  id: 'no-user-query',
  check({ messages }) {
    const query = messages.some((m) => {
      if (m.role !== 'user') return false;
      const text = typeof m.content === 'string' ? m.content.trim() : '';
      return !(text.startsWith('<tool_response>') && text.endsWith('</tool_response>'));
    });
    if (query) return [];
    return [{ index: Math.max(0, messages.length - 1), rule: 'no-user-query', message: `messages: No user query found in messages. (the Qwen chat template needs a user message that is not only <tool_response> blocks)` }];
  },
};
