import type { GeminiContent } from '../../src/formats/gemini/types.js';

/**
 * An independent checker of Gemini `generateContent` contents, written from the provider notes
 * (../shared/provider-rules.md, Gemini section and I1-I11) and Google's function-calling and
 * thought-signature documentation. It shares no code with src (type imports only): it walks the
 * contents itself and pairs responses itself, so a bug in the lens or the structure scan cannot
 * hide here.
 *
 * What it checks, per content index:
 * - shape: an object with role "user", "model" or none, and a list of part objects; functionCall
 *   parts only in model contents (string name, object args), functionResponse parts only in user
 *   contents (string name, object response);
 * - a function call turn (model content with functionCall parts) comes right after a user turn or
 *   a function response turn: never first, never right after a model content;
 * - the content right after a function call turn is ONE function response turn holding exactly as
 *   many functionResponse parts as the turn has functionCall parts, each answering a different call
 *   (by id where the response has one, else the first unanswered id-less call of its name), with
 *   the call's name;
 * - a function response turn comes right after a function call turn.
 * `checkThoughtSignatures` adds Gemini 3's rule (first functionCall of each step of the current turn signed).
 */

/** One problem found, at a content index. */
export interface GeminiProblem {
  readonly index: number;
  readonly rule: 'shape' | 'call-position' | 'unanswered' | 'count' | 'unmatched' | 'name' | 'response-position' | 'signature';
  readonly message: string;
}

type Part = Record<string, unknown>;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const partsOf = (c: unknown): Part[] => (isObject(c) && Array.isArray(c.parts) ? (c.parts.filter(isObject) as Part[]) : []);
const isModel = (c: unknown) => isObject(c) && c.role === 'model';
const callParts = (c: unknown) => (isModel(c) ? partsOf(c).filter((p) => isObject(p.functionCall)).map((p) => p.functionCall as Record<string, unknown>) : []);
const responseParts = (c: unknown) => (!isModel(c) ? partsOf(c).filter((p) => isObject(p.functionResponse)).map((p) => p.functionResponse as Record<string, unknown>) : []);
const isCallTurn = (c: unknown) => callParts(c).length > 0;
const isResponseTurn = (c: unknown) => responseParts(c).length > 0;

function shapeProblem(c: unknown): string | undefined {
  if (!isObject(c)) return 'not an object';
  if (c.role !== undefined && c.role !== 'user' && c.role !== 'model') return `role ${JSON.stringify(c.role)}`;
  if (!Array.isArray(c.parts)) return 'parts is not a list';
  for (const p of c.parts) {
    if (!isObject(p)) return 'a part is not an object';
    if (p.functionCall !== undefined) {
      const fc = p.functionCall;
      if (!isObject(fc) || typeof fc.name !== 'string') return 'functionCall without a string name';
      if (fc.args !== undefined && !isObject(fc.args)) return 'functionCall args is not an object';
      if (c.role !== 'model') return 'functionCall outside a model content';
    }
    if (p.functionResponse !== undefined) {
      const fr = p.functionResponse;
      if (!isObject(fr) || typeof fr.name !== 'string') return 'functionResponse without a string name';
      if (!isObject(fr.response)) return 'functionResponse.response is not an object';
      if (c.role === 'model') return 'functionResponse inside a model content';
    }
  }
  return undefined;
}

/** Every problem of a Gemini contents list (empty when the API would accept its function calling). */
export function checkGemini(contents: readonly unknown[]): GeminiProblem[] {
  const out: GeminiProblem[] = [];
  contents.forEach((c, i) => {
    const shape = shapeProblem(c);
    if (shape) out.push({ index: i, rule: 'shape', message: `contents[${i}]: ${shape}` });
  });
  if (out.length > 0) return out;
  contents.forEach((c, i) => {
    if (isCallTurn(c)) {
      if (i === 0 || isModel(contents[i - 1])) {
        out.push({ index: i, rule: 'call-position', message: `contents[${i}]: function call turn ${i === 0 ? 'starts the history' : 'follows a model content'}` });
      }
      const next = contents[i + 1];
      if (next === undefined || !isResponseTurn(next)) {
        out.push({ index: i, rule: 'unanswered', message: `contents[${i}]: function call turn not followed by a function response turn` });
        return;
      }
      const calls = callParts(c);
      const responses = responseParts(next);
      if (calls.length !== responses.length) {
        out.push({ index: i + 1, rule: 'count', message: `contents[${i + 1}]: ${responses.length} function responses for ${calls.length} function calls` });
      }
      const used = new Array<boolean>(calls.length).fill(false);
      for (const r of responses) {
        let k: number;
        if (r.id !== undefined) k = calls.findIndex((call, j) => !used[j] && call.id === r.id);
        else k = calls.findIndex((call, j) => !used[j] && call.id === undefined && call.name === r.name);
        if (k < 0) {
          out.push({ index: i + 1, rule: 'unmatched', message: `contents[${i + 1}]: response ${String(r.id ?? r.name)} answers no open call of contents[${i}]` });
          continue;
        }
        used[k] = true;
        if (calls[k].name !== r.name) out.push({ index: i + 1, rule: 'name', message: `contents[${i + 1}]: response named ${String(r.name)} answers call ${String(calls[k].name)}` });
      }
      used.forEach((u, k) => {
        if (!u) out.push({ index: i, rule: 'unanswered', message: `contents[${i}]: call ${String(calls[k].id ?? calls[k].name)} has no response` });
      });
    }
    if (isResponseTurn(c) && !(i > 0 && isCallTurn(contents[i - 1]))) {
      out.push({ index: i, rule: 'response-position', message: `contents[${i}]: function response turn does not follow a function call turn` });
    }
  });
  return out.sort((a, b) => a.index - b.index);
}

/**
 * Gemini 3: in the current turn (after the last user content with text or media) the first
 * functionCall part of every model content carries a non-empty thoughtSignature.
 */
export function checkThoughtSignatures(contents: readonly GeminiContent[]): GeminiProblem[] {
  let start = 0;
  for (let i = contents.length - 1; i >= 0; i--) {
    const c = contents[i];
    if (!isModel(c) && partsOf(c).some((p) => typeof p.text === 'string' || isObject(p.inlineData) || isObject(p.fileData))) {
      start = i + 1;
      break;
    }
  }
  const out: GeminiProblem[] = [];
  for (let i = start; i < contents.length; i++) {
    const first = partsOf(contents[i]).find((p) => isModel(contents[i]) && isObject(p.functionCall));
    if (first && !(typeof first.thoughtSignature === 'string' && first.thoughtSignature.length > 0)) {
      out.push({ index: i, rule: 'signature', message: `contents[${i}]: first functionCall of a current-turn step has no thoughtSignature` });
    }
  }
  return out;
}
