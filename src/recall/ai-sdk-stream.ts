import { RECALL_TOOL_NAME } from './tool-definition.js';
import { isFields, type Fields } from './dialect.js';

/**
 * Recall in an AI SDK language-model stream (`doStream` parts, V3 and V4 alike), as a middleware
 * sees it. A stream is read as rounds: its parts are held only until the first one that tells
 * what the answer is (`streamSignal`), so a stream whose first telling part is text or an
 * application's call streams through as it comes, and one that opens with a recall call is read
 * to its end, whole, to be answered.
 */

/** What the first telling part of a stream shows: text (or a file or source) for the user, a recall call, or anything else the application acts on. */
export type AiSdkStreamSignal = 'text' | 'recall' | 'other';

/** The signal a part gives, or undefined for a part that tells nothing yet (start, metadata, an empty delta, reasoning). */
export function streamSignal(part: unknown): AiSdkStreamSignal | undefined {
  if (!isFields(part)) return undefined;
  switch (part.type) {
    case 'text-delta':
      return typeof part.delta === 'string' && part.delta !== '' ? 'text' : undefined;
    case 'file':
    case 'source':
      return 'text';
    case 'tool-input-start':
    case 'tool-call':
      return part.toolName === RECALL_TOOL_NAME && part.providerExecuted !== true ? 'recall' : 'other';
    case 'tool-approval-request':
    case 'tool-result':
    case 'error':
      return 'other';
    default:
      return undefined;
  }
}

/**
 * The `doGenerate`-shaped result a stream's parts add up to (what `AI_SDK_RECALL` reads): text
 * and reasoning parts (deltas joined by id, in order of their start), tool calls and approval
 * requests as they came, and the finish part's reason and usage.
 */
export function assembleParts(parts: readonly unknown[]): Fields {
  const content: Fields[] = [];
  const open = new Map<string, { type: string; text: string }>();
  let finishReason: unknown;
  let usage: unknown;
  for (const part of parts) {
    if (!isFields(part)) continue;
    const id = typeof part.id === 'string' ? part.id : '';
    switch (part.type) {
      case 'text-start':
      case 'reasoning-start': {
        const item = { type: part.type === 'text-start' ? 'text' : 'reasoning', text: '' };
        open.set(`${item.type}:${id}`, item);
        content.push(item);
        break;
      }
      case 'text-delta':
      case 'reasoning-delta': {
        const item = open.get(`${part.type === 'text-delta' ? 'text' : 'reasoning'}:${id}`);
        if (item && typeof part.delta === 'string') item.text += part.delta;
        break;
      }
      case 'tool-call':
      case 'tool-approval-request':
        content.push(part);
        break;
      case 'finish':
        finishReason = part.finishReason;
        usage = part.usage;
        break;
      default:
        break;
    }
  }
  return { content, finishReason, usage };
}

/**
 * A filter removing the recall calls from a stream's parts, in order: undefined drops a part, the
 * same object passes it. A call's parts (`tool-input-start`, `-delta`, `-end`, `tool-call`) are
 * known by the id its start or its call names; a `finish` for `tool-calls` left with no call of
 * the application's becomes `stop`.
 */
export function recallPartStripper(): (part: unknown) => unknown {
  const recallIds = new Set<string>();
  let otherCalls = false;
  let stripped = false;
  return (part) => {
    if (!isFields(part)) return part;
    const id = typeof part.id === 'string' ? part.id : typeof part.toolCallId === 'string' ? part.toolCallId : undefined;
    switch (part.type) {
      case 'tool-input-start':
      case 'tool-call':
        // Every recall call goes, as `AI_SDK_RECALL.without` removes them (one the provider ran too).
        if (part.toolName === RECALL_TOOL_NAME) {
          if (id !== undefined) recallIds.add(id);
          stripped = true;
          return undefined;
        }
        if (part.type === 'tool-call') otherCalls = true;
        return part;
      case 'tool-input-delta':
      case 'tool-input-end':
        return id !== undefined && recallIds.has(id) ? undefined : part;
      case 'finish': {
        if (!stripped || otherCalls) return part;
        const reason = part.finishReason;
        if (reason === 'tool-calls') return { ...part, finishReason: 'stop' };
        if (isFields(reason) && reason.unified === 'tool-calls') return { ...part, finishReason: { ...reason, unified: 'stop' } };
        return part;
      }
      default:
        return part;
    }
  };
}
