import type { CallRef } from '../lens.js';
import type { Rule, Violation } from '../../core/validate/rules.js';
import { everyCallAnswered, resultAnswersCall, resultOnce } from '../../core/invariants/index.js';
import type { CallTurn, PlacedResult } from '../../core/structure.js';
import { isApprovalCall, isObj, partsOf, resultPositions } from './parts.js';
import type { AiSdkMessage } from './types.js';

/**
 * The checks the AI SDK makes before a request leaves it (`convertToLanguageModelPrompt`,
 * `collectToolApprovals`) and the ones the providers behind it make, over the shared structure
 * scan. Wording: the AI SDK's own error text where it throws, the provider's 400 text otherwise.
 */

/** The AI SDK's `MissingToolResultsError` text for these call ids. */
export function missingToolResultsText(ids: readonly string[]): string {
  return `Tool result${ids.length > 1 ? 's are' : ' is'} missing for tool call${ids.length > 1 ? 's' : ''} ${ids.join(', ')}.`;
}

/** `.content[k]` of the part holding the result at `slot` of a tool message. */
function resultField(m: AiSdkMessage, slot: number): string {
  const k = resultPositions(m)[slot];
  return k === undefined ? '' : `.content[${k}]`;
}

/** The `toolCallId` the approval request read as `call` (in the turn's opening message) names. */
function approvedCallId(opener: AiSdkMessage, call: CallRef): string | undefined {
  for (const part of partsOf(opener)) {
    if (isObj(part) && part.type === 'tool-approval-request' && part.approvalId === call.id && typeof part.toolCallId === 'string') return part.toolCallId;
  }
  return undefined;
}

/**
 * The calls of a turn the AI SDK will answer itself: a call whose approval request was answered by
 * a `tool-approval-response` in the last message of the history. `generateText` runs an approved
 * tool (or answers a denied one with `execution-denied`) before it builds the prompt.
 */
function settledByApproval(messages: readonly AiSdkMessage[], turn: CallTurn): Set<string> {
  const out = new Set<string>();
  turn.calls.forEach((call, k) => {
    const answer = turn.answers[k];
    if (!isApprovalCall(call) || answer === undefined || answer.index !== messages.length - 1) return;
    const id = approvedCallId(messages[turn.opener], call);
    if (id !== undefined) out.add(id);
  });
  return out;
}

/**
 * AI SDK `MissingToolResultsError` (I1/I3): every tool call the client runs is answered by the tool
 * messages right after its assistant message. An approval request needs no answer of its own (the
 * SDK drops it before the provider), and a call approved or denied in the history's last message is
 * answered by the SDK itself.
 */
export const toolResultsPresent: Rule<AiSdkMessage> = everyCallAnswered.ruleOwing<AiSdkMessage>(
  (turn, k, { messages }) => {
    const c = turn.calls[k];
    return !isApprovalCall(c) && !(c.id !== undefined && settledByApproval(messages, turn).has(c.id));
  },
  ({ turn, calls }) => {
    const missing = calls.map((c) => c.id ?? c.name);
    return { index: turn.opener, id: missing[0], message: `messages[${turn.opener}]: ${missingToolResultsText(missing)}` };
  },
);

/** What a stray or outside result is told: the AI SDK's text for an approval response, the provider's for a tool result. */
function orphanText(messages: readonly AiSdkMessage[], p: PlacedResult): string {
  const where = `messages[${p.index}]${resultField(messages[p.index], p.slot)}`;
  const part = partsOf(messages[p.index])[resultPositions(messages[p.index])[p.slot]];
  const id = p.result.id ?? p.result.idHint ?? '';
  if (isObj(part) && part.type === 'tool-approval-response') {
    return `${where}: Tool approval response references unknown approvalId: "${id}". No matching tool-approval-request found in message history.`;
  }
  return p.pairing === 'stray'
    ? `${where}: Invalid parameter: 'tool_call_id' of '${id}' not found in 'tool_calls' of previous message.`
    : `${where}: tool result ${id} answers no call: Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.`;
}

/** I2: every result answers a call of the assistant message right before its run of tool messages. */
export const resultsAnswerCall: Rule<AiSdkMessage> = resultAnswersCall.rule((p, { messages }) => ({ index: p.index, id: p.result.id, message: orphanText(messages, p) }));

/** I4: no call is answered twice (nor an approval request). */
export const resultsOnce: Rule<AiSdkMessage> = resultOnce.rule(({ result: p, call, first }, { messages }) => {
  const where = `messages[${p.index}]${resultField(messages[p.index], p.slot)}`;
  return {
    index: p.index,
    id: call.id,
    message: isApprovalCall(call)
      ? `${where}: a second tool-approval-response for approval request ${call.id ?? ''}, first answered in messages[${first}].`
      : `${where}: Invalid parameter: Duplicate value for 'tool_call_id' of '${call.id ?? ''}', in messages[${first}] and messages[${p.index}].`,
  };
});

/** I4: tool call ids (provider-executed ones too) and approval ids are unique within one assistant message. */
export const callIdsOnce: Rule<AiSdkMessage> = {
  id: 'call-id-duplicate',
  check({ messages }) {
    const out: Violation[] = [];
    messages.forEach((m, index) => {
      if (m.role !== 'assistant' || !Array.isArray(m.content)) return;
      const calls = new Set<string>();
      const approvals = new Set<string>();
      m.content.forEach((part, k) => {
        if (!isObj(part)) return;
        const [seen, id] = part.type === 'tool-call' ? [calls, part.toolCallId] : part.type === 'tool-approval-request' ? [approvals, part.approvalId] : [undefined, undefined];
        if (seen === undefined || typeof id !== 'string') return;
        if (seen.has(id)) {
          out.push({ index, rule: 'call-id-duplicate', id, message: `messages[${index}].content[${k}]: Duplicate tool call id ${id} in assistant message.` });
        }
        seen.add(id);
      });
    });
    return out;
  },
};

/**
 * A provider-executed result in an assistant message answers a `tool-call` of that message or of an
 * earlier one (a deferred provider result); Anthropic: "Each `..._tool_result` block must have a
 * corresponding `server_tool_use` block before it."
 */
export const providerResultsHaveCall: Rule<AiSdkMessage> = {
  id: 'provider-result-orphan',
  check({ messages }) {
    const out: Violation[] = [];
    const seen = new Set<string>();
    messages.forEach((m, index) => {
      if (m.role !== 'assistant') return;
      const parts = partsOf(m);
      for (const part of parts) if (isObj(part) && part.type === 'tool-call' && typeof part.toolCallId === 'string') seen.add(part.toolCallId);
      parts.forEach((part, k) => {
        if (!isObj(part) || part.type !== 'tool-result' || typeof part.toolCallId !== 'string' || seen.has(part.toolCallId)) return;
        out.push({
          index,
          rule: 'provider-result-orphan',
          id: part.toolCallId,
          message: `messages[${index}].content[${k}]: unexpected \`tool_use_id\` found in tool result: ${part.toolCallId}. Each provider-executed tool result must have a corresponding tool call before it.`,
        });
      });
    });
    return out;
  },
};
