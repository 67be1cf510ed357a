import { alphanumericId } from '../../core/remap-ids.js';
import type { Profile } from '../../core/validate/validate.js';
import { openaiChatLens } from '../openai-chat/lens.js';
import type { OpenAIChatMessage } from '../openai-chat/types.js';
import {
  mistralCallCount,
  mistralCallIdsUnique,
  mistralFirstRole,
  mistralFunctionNames,
  mistralIdFormat,
  mistralLastRole,
  mistralResultHasId,
  mistralResultsExpected,
  mistralResultsUnique,
  mistralRoleOrder,
  mistralRolesKnown,
} from './mistral-rules.js';

/**
 * Mistral (la Plateforme, and vLLM's "mistral" tokenizer mode: both validate with mistral_common
 * V13 in serving mode) on OpenAI-shaped messages: role order, call/response counts, V13 id
 * matching, 9-character alphanumeric ids, function names, first and last message.
 */
export const mistralProfile: Profile<OpenAIChatMessage> = Object.freeze({
  name: 'mistral',
  lens: openaiChatLens,
  rules: Object.freeze([
    mistralFirstRole,
    mistralRoleOrder,
    mistralCallCount,
    mistralResultsExpected,
    mistralResultsUnique,
    mistralCallIdsUnique,
    mistralResultHasId,
    mistralIdFormat,
    mistralFunctionNames,
    mistralLastRole,
    mistralRolesKnown,
  ]),
  // Mistral ids are 9 alphanumerics, unique in the request: repair maps every other id onto that.
  ids: Object.freeze({ unique: true, pattern: /^[a-zA-Z0-9]{9}$/, mint: (_: string, n: number) => alphanumericId(n) }),
});
