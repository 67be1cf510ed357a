import type { CallRef, InPlaceCall, MessageKind, MessageLens, Reading, ResultRef } from '../lens.js';
import { kindByRole, messageObjectProblem, NO_CALLS, NO_IN_PLACE, NO_RESULTS } from '../readings.js';
import { messageMediaTokens } from './media.js';
import {
  APPROVAL_CALL_NAME, callArguments, callPositions, contentText, isApprovalCall, isObj, partsOf, providerRuns, resultPositions, resultText,
} from './parts.js';
import type { AiSdkMessage, AiSdkPart } from './types.js';
import { describe } from '../describe.js';

type Obj = Record<string, unknown>;

const ROLES: readonly string[] = Object.freeze(['system', 'user', 'assistant', 'tool']);
/** Part types only assistant messages carry. */
const ASSISTANT_ONLY: readonly string[] = Object.freeze(['tool-call', 'tool-approval-request', 'reasoning']);
/** The part types a tool message carries. */
const TOOL_PARTS: readonly string[] = Object.freeze(['tool-result', 'tool-approval-response']);


const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
/** A malformed id (a finite number) as text, for repair to re-attach on; pairing never reads it. */
const hint = (v: unknown): string | undefined => (typeof v === 'number' && Number.isFinite(v) ? String(v) : undefined);

/** The call a `tool-call` part makes. */
function callOf(part: Obj): CallRef {
  return { id: str(part.toolCallId), name: str(part.toolName) ?? '', arguments: callArguments(part) };
}

/**
 * The call a `tool-approval-request` part is read as (see `APPROVAL_CALL_NAME`). It is optional:
 * an approval still awaiting the user's answer, or one whose tool has already run, needs nothing added.
 */
function approvalCallOf(part: Obj): CallRef {
  return { id: str(part.approvalId), name: APPROVAL_CALL_NAME, arguments: '', optional: true };
}

/** The result a `tool-result` or `tool-approval-response` part is read as. */
function resultOf(part: Obj): ResultRef {
  if (part.type === 'tool-approval-response') return { id: str(part.approvalId), idHint: hint(part.approvalId), content: str(part.reason) ?? '' };
  return { id: str(part.toolCallId), idHint: hint(part.toolCallId), name: str(part.toolName), content: resultText(part) };
}

/**
 * Calls and in-place calls of an assistant message. Client `tool-call` parts and approval requests
 * open calls; a provider-executed `tool-call` is answered by the provider (its `tool-result` in the
 * same message, a later assistant message, or nowhere), so it is read in place with the result
 * found beside it; a `tool-result` part whose call is not a provider call of this message is read
 * in place too (counted, never paired: the AI SDK pairs only results of tool messages).
 */
function readAssistantParts(parts: readonly AiSdkPart[]): { calls: readonly CallRef[]; inPlace: readonly InPlaceCall[] } {
  let calls: CallRef[] | undefined;
  let inPlace: InPlaceCall[] | undefined;
  let providerIds: Set<string> | undefined;
  for (const part of parts) {
    if (isObj(part) && providerRuns(part) && typeof part.toolCallId === 'string') (providerIds ??= new Set()).add(part.toolCallId);
  }
  for (const part of parts) {
    if (!isObj(part)) continue;
    if (part.type === 'tool-call') {
      if (!providerRuns(part)) {
        // A call waiting on an approval is run by the AI SDK once the approval is answered last.
        const approval = parts.find((p) => isObj(p) && p.type === 'tool-approval-request' && p.toolCallId === part.toolCallId) as Obj | undefined;
        const approvalId = approval ? str(approval.approvalId) : undefined;
        (calls ??= []).push(approvalId === undefined ? callOf(part) : { ...callOf(part), settledBy: approvalId });
        continue;
      }
      const found = parts.find((p) => isObj(p) && p.type === 'tool-result' && p.toolCallId === part.toolCallId) as Obj | undefined;
      (inPlace ??= []).push({ call: callOf(part), result: found ? resultOf(found) : { id: str(part.toolCallId), content: '' } });
    } else if (part.type === 'tool-approval-request') {
      (calls ??= []).push(approvalCallOf(part));
    } else if (part.type === 'tool-result' && !(typeof part.toolCallId === 'string' && providerIds?.has(part.toolCallId))) {
      (inPlace ??= []).push({ call: { id: str(part.toolCallId), name: str(part.toolName) ?? '', arguments: '' }, result: resultOf(part) });
    }
  }
  return { calls: calls ?? NO_CALLS, inPlace: inPlace ?? NO_IN_PLACE };
}

/** The kind of a message, by its role. */
const KINDS: Readonly<Record<string, MessageKind>> = Object.freeze({ system: 'system', user: 'user', assistant: 'assistant', tool: 'result' });

function readMessage(m: AiSdkMessage): Reading {
  const kind = kindByRole(m.role, KINDS);
  const ownId = typeof m.id === 'string' ? m.id : undefined;
  if (kind === 'result') {
    const parts = partsOf(m);
    const results = resultPositions(m).map((k) => resultOf(parts[k] as Obj));
    return { kind, role: 'tool', text: '', calls: NO_CALLS, results: results.length > 0 ? results : NO_RESULTS, hasUserText: false, ownId, inPlace: NO_IN_PLACE };
  }
  const role = kind === 'other' ? 'other' : kind;
  if (kind === 'assistant' && Array.isArray(m.content)) {
    const { calls, inPlace } = readAssistantParts(m.content);
    return { kind, role: 'assistant', text: contentText(m.content, true), calls, results: NO_RESULTS, hasUserText: false, ownId, inPlace };
  }
  return { kind, role, text: contentText(m.content, kind === 'assistant'), calls: NO_CALLS, results: NO_RESULTS, hasUserText: kind === 'user', ownId, inPlace: NO_IN_PLACE };
}

/** The tokens `messageTokens` would sum from `readMessage` (exactly: a property test compares them), building only the calls of an assistant part list. */
function billedTextTokens(m: AiSdkMessage, countText: (text: string) => number, callOverhead: number): number {
  const content = m.content;
  if (m.role === 'tool') {
    let n = countText('');
    if (!Array.isArray(content)) return n;
    for (const part of content) {
      if (!isObj(part)) continue;
      if (part.type === 'tool-result') n += countText(resultText(part)) + (typeof part.toolName === 'string' ? 1 : 0);
      else if (part.type === 'tool-approval-response') n += countText(str(part.reason) ?? '');
    }
    return n;
  }
  if (!Array.isArray(content)) return countText(typeof content === 'string' ? content : '');
  let n = countText(contentText(content, m.role === 'assistant'));
  if (m.role !== 'assistant') return n;
  const r = readAssistantParts(content);
  for (const c of r.calls) n += callOverhead + countText(c.name) + countText(c.arguments);
  for (const { call, result } of r.inPlace) n += callOverhead + countText(call.name) + countText(call.arguments) + countText(result.content);
  return n;
}

/** `content` with the part at `k` replaced by `part`. */
const withPart = (m: AiSdkMessage, k: number, part: AiSdkPart): AiSdkMessage => ({ ...m, content: partsOf(m).map((p, j) => (j === k ? part : p)) });

/** Why a content part at `.content[k]` of a `role` message is not an AI SDK part; undefined when it is one. */
function partProblem(role: string, part: unknown, k: number): { field: string; rule: string } | undefined {
  const at = `.content[${k}]`;
  if (!isObj(part)) return { field: at, rule: `must be a content part object, got ${describe(part)}` };
  const type = part.type;
  if (typeof type !== 'string') return { field: `${at}.type`, rule: `must be a string, got ${describe(type)}` };
  if (role === 'tool' && !TOOL_PARTS.includes(type)) return { field: `${at}.type`, rule: `a tool message holds only "tool-result" and "tool-approval-response" parts, got ${JSON.stringify(type)}` };
  if (role === 'user' && (ASSISTANT_ONLY.includes(type) || TOOL_PARTS.includes(type))) return { field: `${at}.type`, rule: `a user message holds text, image and file parts, got ${JSON.stringify(type)}` };
  if (role === 'assistant' && type === 'tool-approval-response') return { field: `${at}.type`, rule: 'a "tool-approval-response" part belongs to a tool message, not an assistant message' };
  const needString = (field: string) => (typeof part[field] === 'string' ? undefined : { field: `${at}.${field}`, rule: `must be a string, got ${describe(part[field])}` });
  switch (type) {
    case 'tool-call':
      return needString('toolCallId') ?? needString('toolName');
    case 'tool-result':
      return needString('toolCallId');
    case 'tool-approval-request':
      return needString('approvalId') ?? needString('toolCallId');
    case 'tool-approval-response':
      return needString('approvalId') ?? (typeof part.approved === 'boolean' ? undefined : { field: `${at}.approved`, rule: `must be true or false, got ${describe(part.approved)}` });
    default:
      return undefined;
  }
}

/**
 * The Vercel AI SDK lens: `ModelMessage` lists (ai v5/v6) and provider-level `LanguageModelV3Prompt`
 * lists (the `prompt` of a V3 call; the lens reads the list). Roles system/user/assistant/tool;
 * calls are `tool-call` parts of assistant messages, results `tool-result` parts of tool messages,
 * paired by `toolCallId`. A provider-executed call is read in place (the provider answers it). An
 * approval request is read as a call keyed by its `approvalId` and the user's approval response as
 * its result, so the approval flow (call + request; response; the tool's result) is one turn.
 */
export const aiSdkLens: MessageLens<AiSdkMessage> = {
  format: 'ai-sdk',
  request: { messagesField: 'messages', systemField: 'system' },
  read: readMessage,
  billedTextTokens,
  mediaTokens: messageMediaTokens,
  atomicJoins(messages) {
    // A provider-executed call answered in a later assistant message (a deferred provider result)
    // and that answer stay together: the provider rejects a result whose call it cannot see.
    let joins: Uint8Array | undefined;
    let open: Map<string, number> | undefined;
    messages.forEach((m, i) => {
      if (m?.role !== 'assistant' || !Array.isArray(m.content)) return;
      const here = new Set<string>();
      for (const part of m.content) if (isObj(part) && part.type === 'tool-call' && typeof part.toolCallId === 'string') here.add(part.toolCallId);
      for (const part of m.content) {
        if (!isObj(part) || part.type !== 'tool-result' || typeof part.toolCallId !== 'string' || here.has(part.toolCallId)) continue;
        const from = open?.get(part.toolCallId);
        if (from === undefined) continue;
        joins ??= new Uint8Array(messages.length);
        joins.fill(1, from + 1, i + 1);
        open!.delete(part.toolCallId);
      }
      for (const part of m.content) {
        if (!isObj(part) || !providerRuns(part) || typeof part.toolCallId !== 'string') continue;
        const id = part.toolCallId;
        if (!m.content.some((p) => isObj(p) && p.type === 'tool-result' && p.toolCallId === id)) (open ??= new Map()).set(id, i);
      }
    });
    return joins;
  },
  splitParallelCalls: false,
  stringContentIsText: true,
  // A provider-level (and ModelMessage) user or assistant message carries parts; a system message carries a string.
  summaryMessage: (text, role) => (role === 'system' ? { role, content: text } : { role, content: [{ type: 'text', text }] }),
  missingResults(calls, text) {
    const content: AiSdkPart[] = calls.map((call) => isApprovalCall(call)
      ? { type: 'tool-approval-response', approvalId: call.id ?? '', approved: false, reason: text }
      : { type: 'tool-result', toolCallId: call.id ?? '', toolName: call.name, output: { type: 'error-text', value: text } });
    return [{ role: 'tool', content }];
  },
  addResults(m, calls, text) {
    if (m.role !== 'tool' || !Array.isArray(m.content)) return undefined;
    return { ...m, content: [...m.content, ...(aiSdkLens.missingResults(calls, text)[0].content as AiSdkPart[])] };
  },
  rekeyResult(m, slot, call) {
    const k = resultPositions(m)[slot];
    if (k === undefined || call.id === undefined) return m;
    const part = partsOf(m)[k];
    if (part.type === 'tool-approval-response') return withPart(m, k, { ...part, approvalId: call.id });
    return withPart(m, k, typeof part.toolName === 'string' ? { ...part, toolCallId: call.id } : { ...part, toolCallId: call.id, toolName: call.name });
  },
  rekeyCall(m, slot, id) {
    const k = callPositions(m)[slot];
    if (k === undefined) return m;
    const parts = partsOf(m);
    const part = parts[k];
    if (part.type === 'tool-approval-request') return withPart(m, k, { ...part, approvalId: id });
    // The call's approval request and any result beside it name the call by its id: they follow it.
    const old = part.toolCallId;
    return {
      ...m,
      content: parts.map((p, j) => {
        if (j === k) return { ...p, toolCallId: id };
        if (isObj(p) && (p.type === 'tool-approval-request' || p.type === 'tool-result') && p.toolCallId === old) return { ...p, toolCallId: id };
        return p;
      }),
    };
  },
  collapseResult(m, slot, placeholder) {
    const k = resultPositions(m)[slot];
    if (k === undefined) return m;
    const part = partsOf(m)[k];
    if (part.type !== 'tool-result') return m; // an approval response has nothing to clear
    if (!('output' in part) && 'result' in part) return withPart(m, k, { ...part, result: placeholder });
    return withPart(m, k, { ...part, output: { type: 'text', value: placeholder } });
  },
  removeResult(m, slot) {
    const k = resultPositions(m)[slot];
    if (k === undefined) return m;
    const content = partsOf(m).filter((_, j) => j !== k);
    return content.length === 0 ? undefined : { ...m, content };
  },
  problem(value: unknown) {
    const base = messageObjectProblem(value);
    if (base || !isObj(value)) return base;
    const role = value.role as string;
    if (!ROLES.includes(role)) return { field: '.role', rule: `unknown role ${JSON.stringify(role)} (expected ${ROLES.join(', ')})` };
    const c = value.content;
    if (role === 'system') return typeof c === 'string' ? undefined : { field: '.content', rule: `must be a string in a system message, got ${describe(c)}` };
    if (role === 'tool' && !Array.isArray(c)) return { field: '.content', rule: `must be an array of tool-result parts in a tool message, got ${describe(c)}` };
    if (typeof c === 'string') return undefined;
    if (!Array.isArray(c)) return { field: '.content', rule: `must be a string or an array of parts, got ${describe(c)}` };
    for (let k = 0; k < c.length; k++) {
      const p = partProblem(role, c[k], k);
      if (p) return p;
    }
    return undefined;
  },
};
