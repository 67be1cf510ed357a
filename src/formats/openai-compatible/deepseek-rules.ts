import { callsAnswered, resultsHaveCall, type Rule, type Violation } from '../../core/validate/rules.js';
import type { OpenAIChatMessage } from '../openai-chat/types.js';
import { orphanKind, reworded, unansweredAt } from './reworded.js';

/** DeepSeek's own 400 texts (provider notes: DeepSeek, DeepSeek reasoning), index-free; each violation prefixes `messages[N]: `. */
export const DEEPSEEK_TEXT = Object.freeze({
  unanswered: "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. (insufficient tool messages following tool_calls message)",
  orphan: "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
  successive: (first: number, second: number) => `deepseek-reasoner does not support successive user or assistant messages (messages[${first}] and messages[${second}] in your input). You should interleave the user/assistant messages in the message sequence.`,
  reasoning: 'The `reasoning_content` in the thinking mode must be passed back to the API.',
});

const callsOf = (m: OpenAIChatMessage) => (m.role === 'assistant' && Array.isArray(m.tool_calls) ? m.tool_calls : []);

/**
 * I1/I3 in DeepSeek's words: every call is answered by the tool messages right after it. When the
 * message right after the call opens calls itself (parallel calls split over two assistant
 * messages, which DeepSeek rejects with this text), the violation says so.
 */
export const deepseekCallsAnswered: Rule<OpenAIChatMessage> = reworded<OpenAIChatMessage>(callsAnswered, (v, { messages, structure }) => {
  const next = messages[v.index + 1];
  const split = next !== undefined && callsOf(next).length > 0
    ? `; messages[${v.index + 1}] opens more tool_calls: send every call of one response in one assistant message`
    : '';
  return `messages[${v.index}]: ${DEEPSEEK_TEXT.unanswered}; no tool message answers ${unansweredAt(structure, v.index).join(', ')}${split}`;
});

/** I2 in DeepSeek's words: every tool message answers a call of the assistant message right before its run. */
export const deepseekResultsHaveCall: Rule<OpenAIChatMessage> = reworded(resultsHaveCall, (v, { structure }) => {
  const where = orphanKind(structure, v.index, v.id) === 'stray'
    ? `tool result ${v.id ?? '(no id)'} is not among the tool_calls of the assistant message before it`
    : `tool result ${v.id ?? '(no id)'} answers no call`;
  return `messages[${v.index}]: ${where}: ${DEEPSEEK_TEXT.orphan}`;
});

/**
 * I8 for deepseek-reasoner (R1): no two user messages and no two assistant messages in a row
 * (tool and system messages between them break the run). Reported at the second message.
 */
export const deepseekRolesInterleave = Object.freeze<Rule<OpenAIChatMessage>>({
  id: 'roles-alternate',
  check({ messages }) {
    const out: Violation[] = [];
    for (let i = 1; i < messages.length; i++) {
      const role = messages[i].role;
      if ((role !== 'user' && role !== 'assistant') || messages[i - 1].role !== role) continue;
      out.push({ index: i, rule: 'roles-alternate', id: callsOf(messages[i])[0]?.id, message: `messages[${i}]: ${DEEPSEEK_TEXT.successive(i - 1, i)}` });
    }
    return out;
  },
});

/**
 * I6 for DeepSeek thinking mode with tools (opt-in, not in the `deepseek` profile: DeepSeek's own
 * docs and API have changed on it): once any assistant message carries `reasoning_content`, every
 * assistant message with tool_calls after the last user message carries it too (a string).
 */
export const deepseekReasoningKept = Object.freeze<Rule<OpenAIChatMessage>>({
  id: 'reasoning-content-missing',
  check({ messages }) {
    const out: Violation[] = [];
    if (!messages.some((m) => m.role === 'assistant' && typeof m.reasoning_content === 'string')) return out;
    let lastUser = -1;
    messages.forEach((m, i) => { if (m.role === 'user') lastUser = i; });
    for (let i = lastUser + 1; i < messages.length; i++) {
      const m = messages[i];
      const calls = callsOf(m);
      if (calls.length === 0 || typeof m.reasoning_content === 'string') continue;
      out.push({
        index: i,
        rule: 'reasoning-content-missing',
        id: calls[0].id,
        message: `messages[${i}]: ${DEEPSEEK_TEXT.reasoning} (this assistant message makes tool calls ${calls.map((c) => c.id).join(', ')} after the last user message and has no reasoning_content; send back the one the model returned)`,
      });
    }
    return out;
  },
});
