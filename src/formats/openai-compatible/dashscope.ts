import { callsAnswered, resultsHaveCall, type Rule } from '../../core/validate/rules.js';
import type { Profile } from '../../core/validate/validate.js';
import { openaiChatLens } from '../openai-chat/lens.js';
import { openaiProfile } from '../openai-chat/profile.js';
import type { OpenAIChatMessage } from '../openai-chat/types.js';
import { orphanKind, reworded, unansweredAt, withWording } from './reworded.js';

/** Qwen DashScope's own 400 texts (provider notes: Qwen DashScope), index-free; each violation prefixes `messages[N]: `. */
export const DASHSCOPE_TEXT = Object.freeze({
  unanswered: '<400> InternalError.Algo.InvalidParameter: An assistant message with "tool_calls" must be followed by tool messages responding to each "tool_call_id". The following tool_call_ids did not have response messages:',
  orphan: '<400> InternalError.Algo.InvalidParameter: messages with role "tool" must be a response to a preceeding message with "tool_calls".',
});

/** I1/I3 in DashScope's words: every call is answered by the tool messages right after it. */
export const dashscopeCallsAnswered: Rule<OpenAIChatMessage> = reworded(callsAnswered, (v, { structure }) =>
  `messages[${v.index}]: ${DASHSCOPE_TEXT.unanswered} ${unansweredAt(structure, v.index).join(', ')}`);

/** I2 in DashScope's words: every tool message answers a call of the assistant message right before its run. */
export const dashscopeResultsHaveCall: Rule<OpenAIChatMessage> = reworded(resultsHaveCall, (v, { structure }) => {
  const where = orphanKind(structure, v.index, v.id) === 'stray'
    ? `tool result ${v.id ?? '(no id)'} is not among the tool_calls of the assistant message before it`
    : `tool result ${v.id ?? '(no id)'} answers no call`;
  return `messages[${v.index}]: ${where}: ${DASHSCOPE_TEXT.orphan}`;
});

/**
 * Qwen on Alibaba Cloud DashScope (OpenAI-compatible mode): OpenAI's rules, in DashScope's words
 * where its 400 is known; the rest keep OpenAI's wording. (Qwen served through a chat template
 * instead, by vLLM, llama.cpp or Ollama, is the `qwen-template` profile.)
 */
export const dashscopeProfile: Profile<OpenAIChatMessage> = Object.freeze({
  name: 'dashscope',
  lens: openaiChatLens,
  rules: withWording(openaiProfile.rules, [dashscopeCallsAnswered, dashscopeResultsHaveCall]),
});

