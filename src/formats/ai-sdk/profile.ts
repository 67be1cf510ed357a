import type { Profile } from '../../core/validate/validate.js';
import { aiSdkLens } from './lens.js';
import { callIdsOnce, providerResultsHaveCall, resultsAnswerCall, resultsOnce, toolResultsPresent } from './rules.js';
import type { AiSdkMessage } from './types.js';

/**
 * The Vercel AI SDK (`ModelMessage` lists, and a V3 call's `prompt`): what the SDK itself throws on
 * (`MissingToolResultsError`) and what every provider behind it rejects (a result for no call of the
 * assistant message before it, a call answered twice, one id on two calls of a message).
 */
export const aiSdkProfile: Profile<AiSdkMessage> = {
  name: 'ai-sdk',
  lens: aiSdkLens,
  rules: [toolResultsPresent, resultsAnswerCall, resultsOnce, callIdsOnce, providerResultsHaveCall],
};
