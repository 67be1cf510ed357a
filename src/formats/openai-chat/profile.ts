import { callIdsUnique, callsAnswered, resultsHaveCall, resultsUnique } from '../../core/validate/rules.js';
import type { Profile } from '../../core/validate/validate.js';
import { openaiChatLens } from './lens.js';
import { callsOnAssistant, contentPresent, functionHasName, resultSentAsUser, toolMessageHasId } from './rules.js';
import type { OpenAIChatMessage } from './types.js';

/**
 * OpenAI Chat Completions: the rules its API enforces with a 400, as a list of rule units, plus the
 * `result-as-user` diagnosis (tool output sent as a user message after an unanswered call).
 */
export const openaiProfile: Profile<OpenAIChatMessage> = {
  name: 'openai',
  lens: openaiChatLens,
  rules: [callsAnswered, resultsHaveCall, resultsUnique, callIdsUnique, toolMessageHasId, functionHasName, callsOnAssistant, contentPresent, resultSentAsUser],
};
