import type { Profile } from '../../core/validate/validate.js';
import { openaiResponsesLens } from './lens.js';
import { callForEveryOutput, callIdsUniqueInRequest, itemIdsUnique, oneOutputPerCall, outputForEveryCall, reasoningFollowed } from './rules.js';
import type { ResponsesItem } from './types.js';

/** OpenAI Responses API: the rules it enforces on an `input` list with a 400, as a list of rule units. */
export const openaiResponsesProfile: Profile<ResponsesItem> = {
  name: 'openai-responses',
  lens: openaiResponsesLens,
  rules: [outputForEveryCall, callForEveryOutput, oneOutputPerCall, callIdsUniqueInRequest, itemIdsUnique, reasoningFollowed],
  // The API pairs outputs with calls by call_id across the whole input: a reused call_id gets a fresh one.
  ids: { unique: true, mint: (original, n) => `${original}_${n + 2}` },
};
