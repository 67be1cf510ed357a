import fc from 'fast-check';
import type { FormatName } from '../src/formats/lens.js';
import { brokenAiSdkHistory, validAiSdkHistory } from './histories/ai-sdk.js';
import { brokenAnthropicHistory, validAnthropicHistory } from './histories/anthropic.js';
import { brokenGeminiHistory, validGeminiHistory } from './histories/gemini.js';
import { breakHermes, faultsArb, hermesHistoryArb } from './histories/hermes.js';
import { brokenHistory, validHistory } from './histories/openai.js';
import { brokenResponses, validResponses } from './histories/openai-responses.js';
import { breakQwenAgent, qwenHistoryArb } from './histories/qwen-agent.js';
import { checkAiSdk } from './oracle/ai-sdk.js';
import { anthropicProblems } from './oracle/anthropic.js';
import { checkGemini, checkThoughtSignatures } from './oracle/gemini.js';
import { checkHermes } from './oracle/hermes.js';
import { pairingProblems } from './oracle/openai.js';
import { checkResponsesInput } from './oracle/openai-responses.js';
import { checkQwenAgent } from './oracle/qwen-agent.js';

/**
 * What the fuzz run knows of each wire format: its history generators and its independent
 * checker. Nothing here reads a history the way ctxfold does: the generators and checkers are
 * written from the providers' rules and import only types from src (no lens, grouping, pairing or
 * validator), so a pairing bug in ctxfold makes the two disagree.
 */
export interface FuzzFormat {
  readonly format: FormatName;
  /** Histories the provider accepts. */
  readonly valid: fc.Arbitrary<unknown[]>;
  /** Valid histories with their tool pairing broken (results missing, orphaned, repeated, out of place): repair must fix them. */
  readonly broken: fc.Arbitrary<unknown[]>;
  /** Every rule of the format a list breaks, one line each; empty when the provider accepts it. */
  problems(list: readonly unknown[]): string[];
  /** Instructions a request of this format carries beside its list (`system`, `systemInstruction`, `instructions`), when it has such a field. */
  readonly instructions?: (text: string, blocks: boolean) => unknown;
}

const lines = (problems: readonly unknown[]): string[] => problems.map((p) => JSON.stringify(p));

/** The formats, in the order `--format all` runs them. */
export const FUZZ_FORMATS: readonly FuzzFormat[] = [
  {
    format: 'openai',
    valid: validHistory() as fc.Arbitrary<unknown[]>,
    broken: brokenHistory() as fc.Arbitrary<unknown[]>,
    problems: (list) => pairingProblems(list as Parameters<typeof pairingProblems>[0]),
  },
  {
    format: 'openai-responses',
    valid: validResponses() as fc.Arbitrary<unknown[]>,
    broken: brokenResponses().map((b) => b.items) as fc.Arbitrary<unknown[]>,
    problems: (list) => lines(checkResponsesInput(list)),
    instructions: (text, blocks) => (blocks ? [{ type: 'input_text', text }] : text),
  },
  {
    format: 'anthropic',
    valid: validAnthropicHistory() as fc.Arbitrary<unknown[]>,
    broken: brokenAnthropicHistory().map((b) => b.messages) as fc.Arbitrary<unknown[]>,
    problems: (list) => lines(anthropicProblems(list)),
    instructions: (text, blocks) => (blocks ? [{ type: 'text', text }] : text),
  },
  {
    format: 'gemini',
    valid: validGeminiHistory() as fc.Arbitrary<unknown[]>,
    broken: brokenGeminiHistory().map((b) => b.contents) as fc.Arbitrary<unknown[]>,
    // Thought signatures are checked where the history carries them right (a history without them
    // is sent with the provider's own bypass); the view must then keep them right.
    problems: (list) => lines(checkGemini(list)),
    instructions: (text) => ({ parts: [{ text }] }),
  },
  {
    format: 'ai-sdk',
    valid: validAiSdkHistory() as fc.Arbitrary<unknown[]>,
    broken: brokenAiSdkHistory().map((b) => b.messages) as fc.Arbitrary<unknown[]>,
    problems: (list) => lines(checkAiSdk(list)),
  },
  {
    format: 'qwen-agent',
    valid: qwenHistoryArb.map((h) => h.messages) as fc.Arbitrary<unknown[]>,
    broken: fc.tuple(qwenHistoryArb, faultsArb).map(([h, faults]) => breakQwenAgent(h.messages, h.ids, faults).messages) as fc.Arbitrary<unknown[]>,
    problems: (list) => lines(checkQwenAgent(list)),
  },
  {
    format: 'hermes',
    valid: hermesHistoryArb as fc.Arbitrary<unknown[]>,
    broken: fc.tuple(hermesHistoryArb, faultsArb, fc.boolean()).map(([m, faults, inMessage]) => breakHermes(m, faults, inMessage).messages) as fc.Arbitrary<unknown[]>,
    problems: (list) => lines(checkHermes(list)),
  },
];

/** Thought-signature problems of a Gemini view, counted only when its input had none (see `FuzzFormat.problems`). */
export function signatureProblems(format: FormatName, input: readonly unknown[], view: readonly unknown[]): string[] {
  if (format !== 'gemini') return [];
  const contents = (list: readonly unknown[]) => list as Parameters<typeof checkThoughtSignatures>[0];
  return checkThoughtSignatures(contents(input)).length === 0 ? lines(checkThoughtSignatures(contents(view))) : [];
}

/** The format named `name`, or undefined. */
export const fuzzFormat = (name: string): FuzzFormat | undefined => FUZZ_FORMATS.find((f) => f.format === name);
