import type { CallRef, InPlaceCall, MessageKind, MessageLens, Reading, ResultRef } from '../lens.js';
import { messageObjectProblem, NO_CALLS, NO_IN_PLACE, NO_RESULTS } from '../readings.js';
import { blocksOf, contentText, IN_PLACE_CALL_TYPES, inPlaceResultText, isBlock, isInPlaceResultType, nthBlockIndex, onlyToolResults, usesThinking } from './blocks.js';
import { messageMediaTokens } from './media-tokens.js';
import { serverToolJoins } from './server-tools.js';
import { thinkingJoins } from './thinking.js';
import type { AnthropicBlock, AnthropicMessage, AnthropicToolResultBlock } from './types.js';
import { describe } from '../describe.js';
import { blocksOnTheirSide } from './rules.js';

/** A tool call's input as billed: its JSON text (the API takes an object; a string stays as sent). */
function inputText(input: unknown): string {
  if (typeof input === 'string') return input;
  return input === undefined ? '' : (JSON.stringify(input) ?? '');
}


const callOf = (b: AnthropicBlock): CallRef => ({
  id: typeof b.id === 'string' ? b.id : undefined,
  name: typeof b.name === 'string' ? b.name : '',
  arguments: inputText(b.input),
});

function readCalls(blocks: readonly AnthropicBlock[]): readonly CallRef[] {
  let out: CallRef[] | undefined;
  for (const b of blocks) if (b.type === 'tool_use') (out ??= []).push(callOf(b));
  return out ?? NO_CALLS;
}

function readResults(blocks: readonly AnthropicBlock[]): readonly ResultRef[] {
  let out: ResultRef[] | undefined;
  for (const b of blocks) {
    if (b.type !== 'tool_result') continue;
    const id = b.tool_use_id;
    (out ??= []).push(typeof id === 'string'
      ? { id, content: contentText(b.content) }
      : { idHint: typeof id === 'number' && Number.isFinite(id) ? String(id) : undefined, content: contentText(b.content) });
  }
  return out ?? NO_RESULTS;
}

/**
 * Server tool calls with the result the same message carries for them (an empty result where it
 * has none: a paused turn, or one continued after a client tool), and results whose call stands
 * in an earlier message (with an empty call), so every billed part is counted once.
 */
function readInPlace(blocks: readonly AnthropicBlock[]): readonly InPlaceCall[] {
  let out: InPlaceCall[] | undefined;
  const paired = new Set<AnthropicBlock>();
  for (let k = 0; k < blocks.length; k++) {
    const b = blocks[k];
    if (!IN_PLACE_CALL_TYPES.includes(b.type)) continue;
    const call = callOf(b);
    let result: ResultRef = { id: call.id, content: '' };
    for (let j = k + 1; j < blocks.length; j++) {
      const r = blocks[j];
      if (isInPlaceResultType(r.type) && r.tool_use_id === call.id && !paired.has(r)) {
        paired.add(r);
        result = { id: call.id, name: r.type, content: inPlaceResultText(r) };
        break;
      }
    }
    (out ??= []).push({ call, result });
  }
  for (const b of blocks) {
    if (!isInPlaceResultType(b.type) || paired.has(b)) continue;
    const id = typeof b.tool_use_id === 'string' ? b.tool_use_id : undefined;
    (out ??= []).push({ call: { id, name: '', arguments: '' }, result: { id, name: b.type, content: inPlaceResultText(b) } });
  }
  return out ?? NO_IN_PLACE;
}

function readMessage(m: AnthropicMessage): Reading {
  const role = m?.role;
  if (role !== 'user' && role !== 'assistant') {
    return { kind: 'other', role: 'other', text: contentText(m?.content), calls: NO_CALLS, results: NO_RESULTS, hasUserText: false, inPlace: NO_IN_PLACE };
  }
  const blocks = blocksOf(m);
  const text = contentText(m.content);
  if (role === 'assistant') {
    return { kind: 'assistant', role: 'assistant', text, calls: readCalls(blocks), results: NO_RESULTS, hasUserText: false, inPlace: readInPlace(blocks) };
  }
  // A user message of tool_result blocks only is a tool step; anything else in it is the user's turn.
  const resultsOnly = onlyToolResults(m);
  const kind: MessageKind = resultsOnly ? 'result' : 'user';
  const hasUserText = typeof m.content === 'string' || blocks.some((b) => b.type !== 'tool_result');
  return { kind, role: resultsOnly ? 'tool' : 'user', text, calls: NO_CALLS, results: readResults(blocks), hasUserText, inPlace: NO_IN_PLACE };
}

/** A copy of `m` whose `slot`-th block of `type` is `change(block)`; `m` itself when there is no such block. */
function withBlock(m: AnthropicMessage, type: string, slot: number, change: (b: AnthropicBlock) => AnthropicBlock): AnthropicMessage {
  const k = nthBlockIndex(m.content, type, slot);
  if (k < 0) return m;
  const content = (m.content as AnthropicBlock[]).slice();
  content[k] = change(content[k]);
  return { ...m, content };
}

const errorResult = (id: string | undefined, text: string): AnthropicToolResultBlock => ({ type: 'tool_result', tool_use_id: id ?? '', content: text, is_error: true });

/**
 * A user message with `added` result blocks after the ones it leads with, before everything else:
 * `tool_result` blocks come first in the message, the user's words after them (string content
 * becomes a text block, or nothing when blank).
 */
function withResultsAdded(m: AnthropicMessage, added: readonly AnthropicBlock[]): AnthropicMessage {
  if (typeof m.content === 'string') return { ...m, content: m.content.trim() === '' ? [...added] : [...added, { type: 'text', text: m.content }] };
  const content = Array.isArray(m.content) ? m.content : [];
  let at = 0;
  while (at < content.length && isBlock(content[at]) && content[at].type === 'tool_result') at++;
  return { ...m, content: [...content.slice(0, at), ...added, ...content.slice(at)] };
}

/** The string fields each block type must carry (a server tool result needs what a tool_result does). */
const REQUIRED_STRINGS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  thinking: Object.freeze(['thinking', 'signature']),
  redacted_thinking: Object.freeze(['data']),
  tool_use: Object.freeze(['id', 'name']),
  server_tool_use: Object.freeze(['id', 'name']),
  mcp_tool_use: Object.freeze(['id', 'name']),
  tool_result: Object.freeze(['tool_use_id']),
});

/**
 * The Anthropic Messages lens (`messages[]` of the Messages API, also Claude on Bedrock and
 * Vertex). Assistant `tool_use` blocks are calls; the `tool_result` blocks of the next user
 * message answer them by `tool_use_id`, and must come first in it. Server tool calls are answered
 * in place. `thinking` / `redacted_thinking` blocks are never changed: the message that holds
 * them goes out as the caller's own object. Thinking text is counted as text (it is input on the
 * next request); redacted thinking, being opaque, at a quarter of its length (`mediaTokens`).
 */
export const anthropicLens: MessageLens<AnthropicMessage> = {
  format: 'anthropic',
  request: { messagesField: 'messages', systemField: 'system' },
  read: readMessage,
  mediaTokens: messageMediaTokens,
  /**
   * With thinking on (any thinking block in the history), a cut must not separate a tool loop's
   * later steps from the thinking-led assistant message that started it, or the API answers
   * "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `text`. When
   * `thinking` is enabled, a final `assistant` message must start with a thinking block
   * (preceeding the lastmost set of `tool_use` and `tool_result` blocks). ..." (see `thinking.ts`).
   * Every loop is held to it, finished or not: a loop is the open one until the user speaks again.
   * And a server tool result that arrives in a later message than its call stays with it.
   */
  atomicJoins(messages) {
    const joins = new Uint8Array(messages.length);
    const byThinking = usesThinking(messages) && thinkingJoins(messages, joins);
    const byServerTools = serverToolJoins(messages, joins);
    return byThinking || byServerTools ? joins : undefined;
  },
  splitParallelCalls: false,
  shapeRules: [blocksOnTheirSide],
  stringContentIsText: true,
  leadsWithUser: true,
  resultsInUserTurn: true,
  // No system role in the list: the summary is a user turn whatever role is asked for.
  summaryMessage: (text) => ({ role: 'user', content: text }),
  bridgeMessage: (text) => ({ role: 'assistant', content: text }),
  missingResults: (calls, text) => [{ role: 'user', content: calls.map((c) => errorResult(c.id, text)) }],
  addResults: (m, calls, text) => (m.role === 'user' ? withResultsAdded(m, calls.map((c) => errorResult(c.id, text))) : undefined),
  resultsFirst(m) {
    if (m.role !== 'user' || !Array.isArray(m.content)) return undefined;
    const content = m.content;
    const isResult = (b: unknown) => isBlock(b) && b.type === 'tool_result';
    const firstOther = content.findIndex((b) => !isResult(b));
    if (firstOther < 0 || !content.slice(firstOther).some(isResult)) return undefined;
    return { ...m, content: [...content.filter(isResult), ...content.filter((b) => !isResult(b))] };
  },
  joinResults(host, results) {
    if (host.role !== 'user' || results.role !== 'user' || !Array.isArray(results.content) || results.content.length === 0) return undefined;
    if (!results.content.every((b) => isBlock(b) && b.type === 'tool_result')) return undefined;
    return withResultsAdded(host, results.content);
  },
  rekeyResult: (m, slot, call) => (call.id === undefined ? m : withBlock(m, 'tool_result', slot, (b) => ({ ...b, tool_use_id: call.id }))),
  rekeyCall: (m, slot, id) => withBlock(m, 'tool_use', slot, (b) => ({ ...b, id })),
  collapseResult: (m, slot, placeholder) => withBlock(m, 'tool_result', slot, (b) => ({ ...b, content: placeholder })),
  removeResult(m, slot) {
    const k = nthBlockIndex(m.content, 'tool_result', slot);
    if (k < 0) return m;
    const content = (m.content as AnthropicBlock[]).filter((_, j) => j !== k);
    return content.length === 0 ? undefined : { ...m, content };
  },
  problem(value: unknown) {
    const base = messageObjectProblem(value);
    if (base) return base;
    const m = value as Record<string, unknown>;
    const role = m.role as string;
    if (role !== 'user' && role !== 'assistant') {
      const hint = role === 'system' ? '; Anthropic takes instructions in the request\'s top-level system field, not in messages' : '';
      return { field: '.role', rule: `unknown role ${JSON.stringify(role)} (expected user or assistant${hint})` };
    }
    const c = m.content;
    if (typeof c === 'string') return undefined;
    if (!Array.isArray(c)) return { field: '.content', rule: `must be a string or an array of content blocks, got ${describe(c)}` };
    for (let k = 0; k < c.length; k++) {
      const b = c[k] as Record<string, unknown> | null;
      if (!b || typeof b !== 'object' || Array.isArray(b)) return { field: `.content[${k}]`, rule: `must be a content block object, got ${describe(b)}` };
      if (typeof b.type !== 'string') return { field: `.content[${k}].type`, rule: `must be a string naming the block type, got ${describe(b.type)}` };
      const fields = REQUIRED_STRINGS[b.type] ?? (isInPlaceResultType(b.type) ? REQUIRED_STRINGS.tool_result : undefined);
      for (const f of fields ?? []) {
        if (typeof b[f] !== 'string') return { field: `.content[${k}].${f}`, rule: `a ${b.type} block needs a string ${f}, got ${describe(b[f])}` };
      }
    }
    return undefined;
  },
};
