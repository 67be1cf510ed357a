import type { Rule, Violation } from '../../core/validate/rules.js';
import { everyCallAnswered, resultAnswersCall, resultOnce } from '../../core/invariants/index.js';
import type { CallStructure, PlacedResult } from '../../core/structure.js';
import type { CallRef } from '../lens.js';
import { isModelContent, isUserPart } from './lens.js';
import type { GeminiContent } from './types.js';

/**
 * Rules of the Gemini API for function calling, worded like its own 400 errors (the texts quoted
 * in the provider notes), each with the index of the content at fault and the call id where there
 * is one. They read the call structure scanned once for all rules (turns and paired responses).
 */

/** Gemini's 400 when a turn's responses do not match its calls one for one (missing, extra, or split over contents). */
export const GEMINI_COUNT_ERROR = 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.';
/** Gemini's 400 when a function call turn follows neither a user turn nor a function response turn. */
export const GEMINI_CALL_POSITION_ERROR = 'Please ensure that function call turn comes immediately after a user turn or after a function response turn.';
/** Gemini's 400 when a function response turn does not follow a function call turn. */
export const GEMINI_RESPONSE_POSITION_ERROR = 'Please ensure that function response turn comes immediately after a function call turn.';

const callText = (id: string | undefined, name: string) => (id !== undefined ? `${id} (${name})` : name);

/** Index in `parts` of the `slot`-th functionResponse part of a content (its results, in order). */
function responsePart(c: GeminiContent, slot: number): number {
  let seen = -1;
  const parts = Array.isArray(c.parts) ? c.parts : [];
  for (let k = 0; k < parts.length; k++) {
    const p = parts[k];
    if (p && typeof p === 'object' && p.functionResponse && typeof p.functionResponse === 'object' && ++seen === slot) return k;
  }
  return -1;
}

/** Gemini: every call of a turn is answered by the function response turn right after it. */
export const geminiCallsAnswered: Rule<GeminiContent> = everyCallAnswered.rule(({ turn, calls }) => {
  const where = turn.runEnd > turn.openersEnd ? `contents[${turn.openersEnd}] answers ${turn.calls.length - calls.length} of them` : 'no function response turn follows';
  return {
    index: turn.opener,
    id: calls[0].id,
    message: `contents[${turn.opener}]: ${GEMINI_COUNT_ERROR} (${turn.calls.length} functionCall part(s), ${where}; unanswered: ${calls.map((c) => callText(c.id, c.name)).join(', ')})`,
  };
});

/** The call of the turn a stray response has the id of, when only its name differs. */
function misnamedCall(structure: CallStructure, p: PlacedResult): CallRef | undefined {
  if (p.pairing !== 'stray' || p.result.id === undefined || p.result.name === undefined) return undefined;
  return structure.turns[p.turn].calls.find((c) => c.id === p.result.id && c.name !== p.result.name);
}

/**
 * Gemini: a function response answers a call of the turn right before it. One with no call turn
 * right before it breaks the position rule; one among a turn's responses that answers none of
 * its calls breaks the count rule.
 */
export const geminiResultsHaveCall: Rule<GeminiContent> = resultAnswersCall.rule((p, { messages, structure }) => {
  if (misnamedCall(structure, p) !== undefined) return undefined; // reported by the name rule
  const part = `contents[${p.index}].parts[${responsePart(messages[p.index], p.slot)}]`;
  const what = `functionResponse ${callText(p.result.id, p.result.name ?? '')}`;
  const message = p.pairing === 'outside'
    ? `${part}: ${GEMINI_RESPONSE_POSITION_ERROR} (${what} follows no function call turn)`
    : `${part}: ${GEMINI_COUNT_ERROR} (${what} answers no functionCall of contents[${structure.turns[p.turn].opener}])`;
  return { index: p.index, id: p.result.id, message };
});

/** Gemini: a call is answered once; a second response to it breaks the count rule. */
export const geminiResultsUnique: Rule<GeminiContent> = resultOnce.rule(({ result: p, turn, call, first }, { messages }) => ({
  index: p.index,
  id: call.id,
  message: `contents[${p.index}].parts[${responsePart(messages[p.index], p.slot)}]: ${GEMINI_COUNT_ERROR} (it answers ${callText(call.id, call.name)} of contents[${turn.opener}] a second time; the first answer is in contents[${first}])`,
}));

/** Gemini: all responses of a turn are in ONE content (split over several, the count no longer matches). */
export const geminiResponsesInOneContent: Rule<GeminiContent> = {
  id: 'responses-split',
  check({ structure }) {
    const out: Violation[] = [];
    for (const turn of structure.turns) {
      if (turn.runEnd - turn.openersEnd <= 1) continue;
      out.push({
        index: turn.openersEnd + 1,
        rule: 'responses-split',
        id: turn.calls[0]?.id,
        message: `contents[${turn.openersEnd + 1}]: ${GEMINI_COUNT_ERROR} (the responses to the ${turn.calls.length} functionCall part(s) of contents[${turn.opener}] are split over contents[${turn.openersEnd}..${turn.runEnd - 1}]; they must all be in one content)`,
      });
    }
    return out;
  },
};

/** Gemini: a function call turn comes right after a user turn or a function response turn (never first, never after a model turn). */
export const geminiCallTurnPosition: Rule<GeminiContent> = {
  id: 'function-call-turn-position',
  check({ messages, structure }) {
    const out: Violation[] = [];
    for (const turn of structure.turns) {
      const i = turn.opener;
      const before = i > 0 ? messages[i - 1] : undefined;
      if (before !== undefined && !isModelContent(before)) continue;
      out.push({
        index: i,
        rule: 'function-call-turn-position',
        id: turn.calls[0]?.id,
        message: `contents[${i}]: ${GEMINI_CALL_POSITION_ERROR} (${before === undefined ? 'the contents start with a function call turn' : `contents[${i - 1}] is a model turn`})`,
      });
    }
    return out;
  },
};

/** Gemini: a functionResponse carries the name of the functionCall it answers. */
export const geminiResponseNames: Rule<GeminiContent> = {
  id: 'response-name-mismatch',
  check({ messages, structure }) {
    const out: Violation[] = [];
    for (const p of structure.results) {
      // The lens pairs on id and name together, so a response with its call's id but another
      // name stands in the turn's run answering nothing: it is this rule's, not the count rule's.
      const call = misnamedCall(structure, p);
      if (call === undefined) continue;
      out.push({
        index: p.index,
        rule: 'response-name-mismatch',
        id: call.id,
        message: `contents[${p.index}].parts[${responsePart(messages[p.index], p.slot)}].functionResponse.name: "${p.result.name ?? ''}" answers the call ${callText(call.id, call.name)}; functionResponse.name must equal functionCall.name.`,
      });
    }
    return out;
  },
};

/**
 * Gemini 3 (not in the default profile): in the current turn (every content after the last user
 * content with text or media) the first functionCall part of each model step carries its
 * `thoughtSignature`. Earlier turns are not checked, as the API does not check them.
 */
export const geminiThoughtSignatures: Rule<GeminiContent> = {
  id: 'thought-signature-missing',
  check({ messages }) {
    const out: Violation[] = [];
    let start = 0;
    for (let i = messages.length - 1; i >= 0; i--) {
      const c = messages[i];
      if (!isModelContent(c) && Array.isArray(c.parts) && c.parts.some(isUserPart)) {
        start = i + 1;
        break;
      }
    }
    for (let i = start; i < messages.length; i++) {
      const c = messages[i];
      if (!isModelContent(c) || !Array.isArray(c.parts)) continue;
      const first = c.parts.find((p) => p && typeof p === 'object' && p.functionCall && typeof p.functionCall === 'object');
      if (!first || (typeof first.thoughtSignature === 'string' && first.thoughtSignature !== '')) continue;
      const call = first.functionCall!;
      out.push({
        index: i,
        rule: 'thought-signature-missing',
        id: typeof call.id === 'string' ? call.id : undefined,
        message: `contents[${i}]: Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${call.name}\` , position ${i + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`,
      });
    }
    return out;
  },
};
