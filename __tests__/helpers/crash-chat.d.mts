import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';

/** The history of `chat` at its `turns`-th user message; the history at turn t is a prefix of the one at t + 1. */
export function chatHistory(chat: string, turns: number): OpenAIChatMessage[];
/** A text's token count as the crash workers count it. */
export function roughTokens(text: string): number;
/** sha1 (hex) of the ids, one a line. */
export function coveredHash(ids: readonly string[]): string;
