import type { CallRef, MessageKind, MessageLens, Reading, ResultRef } from '../lens.js';
import { messageObjectProblem, NO_CALLS, NO_IN_PLACE, NO_RESULTS } from '../readings.js';
import { isBlockError, readCallBlocks, readResponseBlocks, responseBlock, type Blocks, type ResponseBlock } from './blocks.js';
import type { HermesMessage } from './types.js';
import { describe } from '../describe.js';

const ROLES: readonly string[] = Object.freeze(['system', 'user', 'assistant']);


const textOf = (m: HermesMessage) => (typeof m.content === 'string' ? m.content : '');

/** The `<tool_response>` blocks of a user message; none when it is not a user message or does not parse. */
function responsesOf(m: HermesMessage): Blocks<ResponseBlock> | undefined {
  if (m.role !== 'user') return undefined;
  const read = readResponseBlocks(textOf(m));
  return isBlockError(read) ? undefined : read;
}

function reading(kind: MessageKind, text: string, calls: readonly CallRef[], results: readonly ResultRef[]): Reading {
  const role = kind === 'result' ? 'tool' : kind === 'other' ? 'other' : kind;
  return { kind, role, text, calls, results, hasUserText: kind === 'user', inPlace: NO_IN_PLACE };
}

function readMessage(m: HermesMessage): Reading {
  const content = textOf(m);
  if (m.role === 'system') return reading('system', content, NO_CALLS, NO_RESULTS);
  if (m.role === 'assistant') {
    const read = readCallBlocks(content);
    if (isBlockError(read) || read.blocks.length === 0) return reading('assistant', content, NO_CALLS, NO_RESULTS);
    return reading('assistant', read.outside.trim(), read.blocks.map((b) => ({ name: b.name, arguments: b.arguments })), NO_RESULTS);
  }
  if (m.role === 'user') {
    const read = responsesOf(m);
    if (read === undefined || read.blocks.length === 0) return reading('user', content, NO_CALLS, NO_RESULTS);
    const text = read.outside.trim();
    // Only <tool_response> blocks: a result message (the template does not count it as a user query).
    return reading(text === '' ? 'result' : 'user', text, NO_CALLS, read.blocks.map((b) => ({ content: b.content })));
  }
  return reading('other', content, NO_CALLS, NO_RESULTS);
}

/** Tags kept out of text ctxfold writes itself (a summary), so it can never read as a call or a result. */
function withoutTags(text: string): string {
  return text.replace(/<(\/?)(tool_call|tool_response)>/g, '[$1$2]');
}

/**
 * The Hermes lens: messages of text only (system, user, assistant). Calls are the `<tool_call>`
 * blocks of assistant text, id-less, paired by position with the `<tool_response>` blocks of the
 * user message after them; a user message of only such blocks is a result message. Malformed
 * blocks are rejected by `problem`, never guessed at.
 */
export const hermesLens: MessageLens<HermesMessage> = {
  format: 'hermes',
  request: { messagesField: 'messages' },
  read: readMessage,
  // The model is sent the text as written, tags and JSON framing included: that is what is billed.
  billedTextTokens: (m, countText) => countText(textOf(m)),
  splitParallelCalls: false,
  resultsInUserTurn: true,
  summaryMessage: (text, role) => ({ role, content: withoutTags(text) }),
  missingResults: (calls, text) => [{ role: 'user', content: calls.map(() => responseBlock(text)).join('\n') }],
  addResults(m, calls, text) {
    const read = responsesOf(m);
    if (read === undefined || read.blocks.length === 0) return undefined; // a plain user message: the results get a message of their own
    const content = textOf(m);
    const after = read.blocks[read.blocks.length - 1].end;
    return { ...m, content: `${content.slice(0, after)}\n${calls.map(() => responseBlock(text)).join('\n')}${content.slice(after)}` };
  },
  removeResult(m, slot) {
    const read = responsesOf(m);
    const block = read?.blocks[slot];
    if (read === undefined || block === undefined) return m;
    if (read.blocks.length === 1 && read.outside.trim() === '') return undefined;
    const content = textOf(m);
    // The block goes with one newline that separated it from its neighbour.
    let start = block.start;
    let end = block.end;
    if (content[end] === '\n') end++;
    else if (start > 0 && content[start - 1] === '\n') start--;
    return { ...m, content: content.slice(0, start) + content.slice(end) };
  },
  collapseResult(m, slot, placeholder) {
    const block = responsesOf(m)?.blocks[slot];
    if (block === undefined) return m;
    const content = textOf(m);
    return { ...m, content: content.slice(0, block.innerStart) + placeholder + content.slice(block.innerEnd) };
  },
  joinResults(host, results) {
    // A plain user message (the user wrote while the tools ran) takes the <tool_response> blocks
    // first, then its words, then any note the results message had after its blocks: the template
    // writes a note after results.
    const held = responsesOf(host);
    const moved = responsesOf(results);
    if (held === undefined || held.blocks.length > 0 || moved === undefined || moved.blocks.length === 0) return undefined;
    const text = textOf(results);
    if (text.slice(0, moved.blocks[0].start).trim() !== '') return undefined; // words before the blocks: not a note after them
    const end = moved.blocks[moved.blocks.length - 1].end;
    const note = text.slice(end).trim();
    return { ...host, content: `${text.slice(moved.blocks[0].start, end)}\n\n${textOf(host)}${note === '' ? '' : `\n\n${note}`}` };
  },
  // No ids in Hermes text: pairing is by position, so there is nothing to re-key.
  rekeyResult: (m) => m,
  rekeyCall: (m) => m,
  problem(value: unknown) {
    const base = messageObjectProblem(value);
    if (base) return base;
    const m = value as Record<string, unknown>;
    const role = m.role as string;
    if (!ROLES.includes(role)) return { field: '.role', rule: `unknown role ${JSON.stringify(role)} (expected ${ROLES.join(', ')}; Hermes results go in a user message as <tool_response> blocks)` };
    if (typeof m.content !== 'string') return { field: '.content', rule: `must be a string (Hermes messages are text), got ${describe(m.content)}` };
    if (m.tool_calls !== undefined && m.tool_calls !== null) return { field: '.tool_calls', rule: 'is not read in Hermes text, where calls are <tool_call> blocks in the content; use format "openai" for tool_calls' };
    if (role === 'assistant') {
      const read = readCallBlocks(m.content);
      if (isBlockError(read)) return { field: '.content', rule: `malformed <tool_call> block at character ${read.offset}: ${read.why}; fix or remove it, ctxfold does not guess at tool calls` };
    }
    if (role === 'user') {
      const read = readResponseBlocks(m.content);
      if (isBlockError(read)) return { field: '.content', rule: `malformed <tool_response> block at character ${read.offset}: ${read.why}; fix or remove it, ctxfold does not guess at tool results` };
    }
    return undefined;
  },
};
