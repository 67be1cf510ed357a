import { alphanumericId, type IdPolicy } from '../../core/remap-ids.js';
import type { Profile } from '../../core/validate/validate.js';
import { anthropicLens } from './lens.js';
import {
  ANTHROPIC_TOOL_ID, blocksOnSide, contentPresent, errorResultHasContent, resultsWithinUses, rolesAlternate, serverResultsHaveCall, serverToolsAnswered, startsWithUser, textNotBlank,
  thinkingLeadsOpenLoop, thinkingNotLast, toolIdsFitAnthropic, toolIdsFitBedrock, toolResultHasUse, toolResultSingle, toolResultsFirst, toolUseAnswered, toolUseIdsUnique,
} from './rules.js';
import type { AnthropicMessage } from './types.js';

/** The rules the Anthropic Messages API enforces with a 400 on tool use, server tools and thinking. */
const ANTHROPIC_RULES = Object.freeze([
  toolUseAnswered, toolResultHasUse, toolResultSingle, toolResultsFirst, toolUseIdsUnique, toolIdsFitAnthropic, blocksOnSide,
  serverToolsAnswered, serverResultsHaveCall, thinkingLeadsOpenLoop, thinkingNotLast,
]);

/** A fresh tool id in Anthropic's own shape (`toolu_` + 24 letters and digits), the n-th one: deterministic. */
const mintToolId = (_original: string, n: number) => `toolu_${alphanumericId(n, 24)}`;

/** Anthropic wants call ids unique across the request and of its pattern; repair mints fresh ones. */
const ANTHROPIC_IDS: IdPolicy = Object.freeze({ unique: true, pattern: ANTHROPIC_TOOL_ID, mint: mintToolId });

/** Bedrock also caps ids at 64 characters and checks its own pattern: an id must fit both. */
const BEDROCK_IDS: IdPolicy = Object.freeze({ unique: true, pattern: /^[a-zA-Z0-9_-]{1,64}$/, mint: mintToolId });

/** Anthropic Messages API (first party): its tool-use, server-tool and thinking rules. */
export const anthropicProfile: Profile<AnthropicMessage> = {
  name: 'anthropic',
  lens: anthropicLens,
  rules: ANTHROPIC_RULES,
  ids: ANTHROPIC_IDS,
};

/**
 * Claude on Amazon Bedrock, in the Anthropic Messages shape: Anthropic's rules plus Bedrock's own
 * (a user message first, strict user/assistant alternation, its toolUseId pattern, no blank
 * text or empty content, no more results than calls of the turn before).
 */
export const bedrockProfile: Profile<AnthropicMessage> = {
  name: 'bedrock',
  lens: anthropicLens,
  rules: [...ANTHROPIC_RULES, startsWithUser, rolesAlternate, toolIdsFitBedrock, textNotBlank, contentPresent, errorResultHasContent, resultsWithinUses],
  ids: BEDROCK_IDS,
  alternates: true,
};
