import type { Profile } from '../../core/validate/validate.js';
import { geminiLens } from './lens.js';
import { geminiCallsAnswered, geminiCallTurnPosition, geminiResponseNames, geminiResponsesInOneContent, geminiResultsHaveCall, geminiResultsUnique } from './rules.js';
import type { GeminiContent } from './types.js';

/**
 * Gemini `generateContent`: the function-calling rules its API enforces with a 400, as rule
 * units. Gemini 3's thought-signature rule is exported apart (`geminiThoughtSignatures`): it
 * depends on the model, and a history without signatures is valid for Gemini 2.x.
 */
export const geminiProfile: Profile<GeminiContent> = {
  name: 'gemini',
  lens: geminiLens,
  rules: [geminiCallsAnswered, geminiResultsHaveCall, geminiResultsUnique, geminiResponsesInOneContent, geminiCallTurnPosition, geminiResponseNames],
};
