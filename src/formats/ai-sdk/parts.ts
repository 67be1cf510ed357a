import type { CallRef } from '../lens.js';
import type { AiSdkMessage, AiSdkPart } from './types.js';

/**
 * Reading AI SDK content parts: the text a part shows the model, where the calls and results of a
 * message sit among its parts. Pure helpers shared by the lens, its rules and the converters.
 */

type Obj = Record<string, unknown>;

/** True for a plain object (not null, not an array). */
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The name of the call a `tool-approval-request` part is read as. The structure scan ends a call's
 * run at the first message that carries no result, so the tool message holding the user's
 * `tool-approval-response` must carry one: the request is read as a call keyed by its
 * `approvalId`, and the response as its result. The pair is never billed as a tool call: the AI SDK
 * drops both before the provider sees the prompt (a few tokens are counted for them, the safe side).
 */
export const APPROVAL_CALL_NAME = 'tool-approval-request';

/** True when `call` is the reading of a `tool-approval-request` part (see `APPROVAL_CALL_NAME`). */
export function isApprovalCall(call: CallRef): boolean {
  return call.name === APPROVAL_CALL_NAME && call.arguments === '';
}

/** JSON text of a value; '' for undefined or a value JSON cannot write. */
export function jsonText(value: unknown): string {
  if (value === undefined) return '';
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

/** A call's arguments as billed: `input` (ai v5+) or `args` (ai v4), a string as it is, anything else as JSON. */
export function callArguments(part: Obj): string {
  const input = 'input' in part || !('args' in part) ? part.input : part.args;
  return typeof input === 'string' ? input : jsonText(input);
}

/**
 * The text a tool result shows the model: `text` / `error-text` values as they are, `json` /
 * `error-json` values as JSON, the text items of a `content` list joined, an `execution-denied`
 * reason; an ai v4 `result` as text or JSON.
 */
export function resultText(part: Obj): string {
  const out = part.output;
  if (isObj(out)) {
    const value = out.value;
    switch (out.type) {
      case 'text':
      case 'error-text':
        return typeof value === 'string' ? value : jsonText(value);
      case 'json':
      case 'error-json':
        return jsonText(value);
      case 'content': {
        if (!Array.isArray(value)) return '';
        let s = '';
        for (const item of value) if (isObj(item) && item.type === 'text' && typeof item.text === 'string') s += item.text;
        return s;
      }
      case 'execution-denied':
        return typeof out.reason === 'string' ? out.reason : '';
      default:
        return typeof value === 'string' ? value : jsonText(value);
    }
  }
  if ('result' in part) return typeof part.result === 'string' ? part.result : jsonText(part.result);
  return '';
}

/** The text parts of a content list joined (reasoning too when `withReasoning`); string content as it is. */
export function contentText(content: unknown, withReasoning: boolean): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let s = '';
  for (const part of content) {
    if (!isObj(part) || typeof part.text !== 'string') continue;
    if (part.type === 'text' || (withReasoning && part.type === 'reasoning')) s += part.text;
  }
  return s;
}

/** The parts of a message's content list, or an empty list for string content. */
export function partsOf(m: AiSdkMessage): readonly AiSdkPart[] {
  return Array.isArray(m.content) ? m.content : [];
}

/** True for a `tool-call` part the provider runs itself. */
export const providerRuns = (part: Obj): boolean => part.type === 'tool-call' && part.providerExecuted === true;

/**
 * Positions in `content` of the parts an assistant message opens calls with, in order: `tool-call`
 * parts the client runs, and `tool-approval-request` parts (see `APPROVAL_CALL_NAME`). The lens's
 * call slots index this list.
 */
export function callPositions(m: AiSdkMessage): number[] {
  const out: number[] = [];
  if (m.role !== 'assistant') return out;
  partsOf(m).forEach((part, k) => {
    if (!isObj(part)) return;
    if ((part.type === 'tool-call' && !providerRuns(part)) || part.type === 'tool-approval-request') out.push(k);
  });
  return out;
}

/** Positions in `content` of a tool message's results, in order: `tool-result` and `tool-approval-response` parts. */
export function resultPositions(m: AiSdkMessage): number[] {
  const out: number[] = [];
  if (m.role !== 'tool') return out;
  partsOf(m).forEach((part, k) => {
    if (isObj(part) && (part.type === 'tool-result' || part.type === 'tool-approval-response')) out.push(k);
  });
  return out;
}
