import type { CallRef, InPlaceCall, MessageKind, MessageLens, Reading, ResultRef } from '../lens.js';
import { NO_CALLS, NO_IN_PLACE, NO_RESULTS } from '../readings.js';
import { MAX_NESTING, nestedDeeperThan } from '../../core/nesting.js';
import { geminiPartMediaTokens } from './media-tokens.js';
import type { GeminiContent, GeminiFunctionResponse, GeminiPart } from './types.js';
import { describe } from '../describe.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The name Gemini's built-in code execution tool goes by; its runs are read as in-place calls. */
export const CODE_EXECUTION_NAME = 'code_execution';


/** True for a content the model wrote; every other content (`user` or no role) is the client's. */
export const isModelContent = (c: { readonly role?: unknown }): boolean => c.role === 'model';

/** True for a part a person sent: text, inline media or a file (not a call, response or signature). */
export function isUserPart(p: unknown): boolean {
  return isObj(p) && (typeof p.text === 'string' || isObj(p.inlineData) || isObj(p.fileData));
}

/** The arguments of a call as billed: the canonical JSON of `args` (`{}` when absent). */
export function argumentsText(args: unknown): string {
  return JSON.stringify(args ?? {}) ?? '';
}

/** The text of a function response as the model sees it: the JSON of its `response` object. */
export function responseText(fr: GeminiFunctionResponse): string {
  return JSON.stringify(fr.response ?? {}) ?? '';
}

/** Indexes, in `parts`, of the parts that carry calls (model) or results (user), in order: the `slot`-th call or result is at `slotsOf(...)[slot]`. */
function slotsOf(c: GeminiContent, field: 'functionCall' | 'functionResponse'): number[] {
  const out: number[] = [];
  if (!Array.isArray(c.parts)) return out;
  if ((field === 'functionCall') !== isModelContent(c)) return out;
  c.parts.forEach((p, k) => { if (isObj(p) && isObj(p[field])) out.push(k); });
  return out;
}

function readContent(c: GeminiContent): Reading {
  const model = isModelContent(c);
  const parts: readonly unknown[] = Array.isArray(c.parts) ? c.parts : [];
  let text = '';
  let userStuff = false;
  let calls: CallRef[] | undefined;
  let results: ResultRef[] | undefined;
  let inPlace: InPlaceCall[] | undefined;
  let pendingCode: CallRef | undefined;
  for (const raw of parts) {
    if (!isObj(raw)) continue;
    const p = raw as GeminiPart;
    // Thought summaries are read as text too: what is sent back is counted (the safe side of a budget).
    if (typeof p.text === 'string') text += p.text;
    if (!model && (typeof p.text === 'string' || isObj(p.inlineData) || isObj(p.fileData))) userStuff = true;
    if (model && isObj(p.functionCall)) {
      const fc = p.functionCall;
      (calls ??= []).push({ id: typeof fc.id === 'string' ? fc.id : undefined, name: typeof fc.name === 'string' ? fc.name : '', arguments: argumentsText(fc.args) });
    }
    if (!model && isObj(p.functionResponse)) {
      const fr = p.functionResponse;
      const raw = fr.id as unknown;
      // A numeric id is kept as a hint: repair may re-attach the response to the call with that id.
      const idHint = typeof raw === 'number' && Number.isFinite(raw) ? String(raw) : undefined;
      (results ??= []).push({
        id: typeof raw === 'string' ? raw : undefined,
        name: typeof fr.name === 'string' ? fr.name : '',
        ...(idHint !== undefined ? { idHint } : {}),
        content: responseText(fr),
      });
    }
    // Code the provider ran itself is answered inside the same model content: nothing can split it.
    if (model && isObj(p.executableCode)) {
      if (pendingCode) (inPlace ??= []).push({ call: pendingCode, result: { content: '' } });
      pendingCode = { name: CODE_EXECUTION_NAME, arguments: typeof p.executableCode.code === 'string' ? p.executableCode.code : '' };
    }
    if (model && isObj(p.codeExecutionResult)) {
      const out = p.codeExecutionResult.output;
      (inPlace ??= []).push({ call: pendingCode ?? { name: CODE_EXECUTION_NAME, arguments: '' }, result: { name: CODE_EXECUTION_NAME, content: typeof out === 'string' ? out : '' } });
      pendingCode = undefined;
    }
  }
  if (pendingCode) (inPlace ??= []).push({ call: pendingCode, result: { content: '' } });
  let kind: MessageKind;
  if (model) kind = 'assistant';
  else if (c.role === undefined || c.role === 'user') kind = results && !userStuff ? 'result' : 'user';
  else kind = 'other';
  return {
    kind,
    role: kind === 'result' ? 'tool' : kind,
    text: kind === 'result' ? '' : text,
    calls: calls ?? NO_CALLS,
    results: results ?? NO_RESULTS,
    hasUserText: kind === 'user' && userStuff,
    inPlace: inPlace ?? NO_IN_PLACE,
  };
}

/** A copy of `c` with the part at `index` replaced by `part` (every other part the same object). */
function withPart(c: GeminiContent, index: number, part: GeminiPart): GeminiContent {
  return { ...c, parts: c.parts.map((p, k) => (k === index ? part : p)) };
}

/** The error response for a call that never got one, in Gemini's shape (`id` only when the call had one). */
function errorResponse(call: CallRef, text: string): GeminiPart {
  return { functionResponse: { name: call.name, response: { error: text }, ...(call.id !== undefined ? { id: call.id } : {}) } };
}

const ROLES: readonly string[] = Object.freeze(['user', 'model']);

/**
 * The Gemini `generateContent` lens: `contents` of role `user` (or none) and `model`, each a list
 * of parts. A model content's `functionCall` parts are one parallel call turn; the user content
 * right after answers them with `functionResponse` parts, all in that one content, paired by id
 * where the call has one, else by name and position. Contents are never rebuilt: a kept content
 * is the caller's object, so every `thoughtSignature` stays byte-identical on its part. Code the
 * provider runs itself (`executableCode` + `codeExecutionResult`) is read as calls answered in place.
 * Thought summaries (`thought: true` text) are read as text: what is sent back is counted.
 */
export const geminiLens: MessageLens<GeminiContent> = {
  format: 'gemini',
  request: { messagesField: 'contents', systemField: 'systemInstruction' },
  read: readContent,
  mediaTokens(c) {
    if (!Array.isArray(c.parts)) return 0;
    let n = 0;
    for (const p of c.parts) {
      if (!isObj(p)) continue;
      n += geminiPartMediaTokens(p);
      // A function response may carry media of its own (multimodal function responses).
      const nested = isObj(p.functionResponse) ? p.functionResponse.parts : undefined;
      if (Array.isArray(nested)) for (const q of nested) if (isObj(q)) n += geminiPartMediaTokens(q as GeminiPart);
    }
    return n;
  },
  splitParallelCalls: false,
  namesMustMatch: true,
  leadsWithUser: true,
  // Not `resultsInUserTurn`: a function response content may be followed by another user content
  // (the API refuses text mixed INTO a response content, not two user contents in a row), so a
  // response a user content came between it and its call is moved back after the call, on its id.
  // Gemini has no system role inside `contents`: a summary is always a user content.
  summaryMessage: (text) => ({ role: 'user', parts: [{ text }] }),
  missingResults: (calls, text) => [{ role: 'user', parts: calls.map((call) => errorResponse(call, text)) }],
  // All responses of a call turn go in one content: split ones are joined, parts in order.
  mergeResults: (contents) => ({ ...contents[0], parts: contents.flatMap((c) => (Array.isArray(c.parts) ? c.parts : [])) }),
  addResults(c, calls, text) {
    // All responses of a turn go in one content; a content with the user's own text is left alone.
    if (isModelContent(c) || !Array.isArray(c.parts) || c.parts.some(isUserPart)) return undefined;
    return { ...c, parts: [...c.parts, ...calls.map((call) => errorResponse(call, text))] };
  },
  rekeyResult(c, slot, call) {
    const at = slotsOf(c, 'functionResponse')[slot];
    if (at === undefined) return c;
    const part = c.parts[at];
    const { id: _id, ...rest } = part.functionResponse!;
    const fr = { ...rest, name: call.name, ...(call.id !== undefined ? { id: call.id } : {}) } as GeminiFunctionResponse;
    return withPart(c, at, { ...part, functionResponse: fr });
  },
  rekeyCall(c, slot, id) {
    const at = slotsOf(c, 'functionCall')[slot];
    if (at === undefined) return c;
    const part = c.parts[at];
    // The part keeps every other field, its thoughtSignature included.
    return withPart(c, at, { ...part, functionCall: { ...part.functionCall!, id } });
  },
  collapseResult(c, slot, placeholder) {
    const at = slotsOf(c, 'functionResponse')[slot];
    if (at === undefined) return c;
    const part = c.parts[at];
    // Name and id stay, so the pair stays valid; the bulky response (and any media it carried) goes.
    const { parts: _media, ...rest } = part.functionResponse!;
    return withPart(c, at, { ...part, functionResponse: { ...rest, response: { result: placeholder } } });
  },
  removeResult(c, slot) {
    const at = slotsOf(c, 'functionResponse')[slot];
    if (at === undefined) return c;
    const parts = c.parts.filter((_, k) => k !== at);
    return parts.length === 0 ? undefined : { ...c, parts };
  },
  problem(value: unknown) {
    if (!isObj(value)) return { field: '', rule: `must be a content object ({ role, parts }), got ${describe(value)}` };
    if (nestedDeeperThan(value)) return { field: '', rule: `is nested more than ${MAX_NESTING} levels deep; ctxfold does not read values this deep` };
    const role = value.role;
    if (role !== undefined && (typeof role !== 'string' || !ROLES.includes(role))) {
      return { field: '.role', rule: `must be "user" or "model" (or absent, read as "user"), got ${describe(role)}` };
    }
    const parts = value.parts;
    if (!Array.isArray(parts)) return { field: '.parts', rule: `must be an array of parts, got ${describe(parts)}` };
    for (let k = 0; k < parts.length; k++) {
      const p = parts[k] as unknown;
      const at = `.parts[${k}]`;
      if (!isObj(p)) return { field: at, rule: `must be a part object, got ${describe(p)}` };
      if (p.text !== undefined && typeof p.text !== 'string') return { field: `${at}.text`, rule: `must be a string, got ${describe(p.text)}` };
      if (p.functionCall !== undefined) {
        const fc = p.functionCall;
        if (!isObj(fc)) return { field: `${at}.functionCall`, rule: `must be an object, got ${describe(fc)}` };
        if (typeof fc.name !== 'string') return { field: `${at}.functionCall.name`, rule: `must be a string, got ${describe(fc.name)}` };
        if (fc.args !== undefined && !isObj(fc.args)) return { field: `${at}.functionCall.args`, rule: `must be an object, got ${describe(fc.args)}` };
        if (fc.id !== undefined && typeof fc.id !== 'string') return { field: `${at}.functionCall.id`, rule: `must be a string, got ${describe(fc.id)}` };
        if (role !== 'model') return { field: `${at}.functionCall`, rule: `is a model's call and belongs in a content with role "model", got role ${describe(role)}` };
      }
      if (p.functionResponse !== undefined) {
        const fr = p.functionResponse;
        if (!isObj(fr)) return { field: `${at}.functionResponse`, rule: `must be an object, got ${describe(fr)}` };
        if (typeof fr.name !== 'string') return { field: `${at}.functionResponse.name`, rule: `must be a string (the name of the call it answers), got ${describe(fr.name)}` };
        if (!isObj(fr.response)) return { field: `${at}.functionResponse.response`, rule: `must be a JSON object, got ${describe(fr.response)}` };
        if (role === 'model') return { field: `${at}.functionResponse`, rule: 'is the client\'s answer and belongs in a content with role "user", got role "model"' };
      }
    }
    return undefined;
  },
};
