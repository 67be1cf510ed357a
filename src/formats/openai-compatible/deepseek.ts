import type { Profile } from '../../core/validate/validate.js';
import { openaiChatLens } from '../openai-chat/lens.js';
import { openaiProfile } from '../openai-chat/profile.js';
import type { OpenAIChatMessage } from '../openai-chat/types.js';
import { deepseekCallsAnswered, deepseekResultsHaveCall, deepseekRolesInterleave } from './deepseek-rules.js';
import { withWording } from './reworded.js';

/**
 * DeepSeek (OpenAI-compatible): OpenAI's rules, in DeepSeek's words where DeepSeek's 400 is known
 * (unanswered calls, tool messages with no call); the rest keep OpenAI's wording.
 */
export const deepseekProfile: Profile<OpenAIChatMessage> = Object.freeze({
  name: 'deepseek',
  lens: openaiChatLens,
  rules: withWording(openaiProfile.rules, [deepseekCallsAnswered, deepseekResultsHaveCall]),
});

/**
 * deepseek-reasoner as of R1 (January 2025): DeepSeek's rules plus strict user/assistant
 * interleaving. Opt-in: current DeepSeek models accept successive messages of one role.
 */
export const deepseekReasonerProfile: Profile<OpenAIChatMessage> = Object.freeze({
  name: 'deepseek-reasoner',
  lens: openaiChatLens,
  rules: Object.freeze([...deepseekProfile.rules, deepseekRolesInterleave]),
});
