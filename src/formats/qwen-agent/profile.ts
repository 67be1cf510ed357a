import type { Profile } from '../../core/validate/validate.js';
import { qwenAgentLens } from './lens.js';
import { qwenCallsAnswered, qwenResultsHaveCall, qwenResultsInOrder, qwenResultsUnique } from './rules.js';
import type { QwenAgentMessage } from './types.js';

/**
 * Qwen-Agent: every function_call is answered by a function message of the same name, in call
 * order, before the next non-function message; no function message without a call; no call
 * answered twice.
 */
export const qwenAgentProfile: Profile<QwenAgentMessage> = {
  name: 'qwen-agent',
  lens: qwenAgentLens,
  rules: [qwenCallsAnswered, qwenResultsHaveCall, qwenResultsUnique, qwenResultsInOrder],
};
