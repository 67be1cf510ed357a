import type { Profile } from '../../core/validate/validate.js';
import { hermesLens } from './lens.js';
import { hermesCallsAnswered, hermesHasUserQuery, hermesResultsHaveCall, hermesResultsTogether, hermesResultsUnique } from './rules.js';
import type { HermesMessage } from './types.js';

/**
 * Hermes text under the Qwen chat templates: as many `<tool_response>` blocks in the user message
 * right after a call message as it has `<tool_call>` blocks (by position); no `<tool_response>`
 * without a call message before it; at least one genuine user message.
 */
export const hermesProfile: Profile<HermesMessage> = {
  name: 'hermes',
  lens: hermesLens,
  rules: [hermesCallsAnswered, hermesResultsHaveCall, hermesResultsUnique, hermesResultsTogether, hermesHasUserQuery],
};
