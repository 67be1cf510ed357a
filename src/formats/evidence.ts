import type { FormatName } from './lens.js';
import { CALL_CLOSE, isBlockError, readCallBlocks, readResponseBlocks, RESPONSE_OPEN } from './hermes/blocks.js';

/**
 * Positive evidence of a wire format: a feature that belongs to that format and to no other
 * (a `tool_calls` array, a `tool_use` block, a `functionCall` part, a `tool-call` part, parallel
 * calls as consecutive `function_call` messages, a `<tool_call>` turn answered by `<tool_response>`
 * blocks). Plain role/content text is evidence of nothing: every format has it, and so is a tag
 * written in prose.
 */
export interface Evidence {
  readonly format: FormatName;
  /** Index of the message that shows it. */
  readonly index: number;
  /** What was seen, for error messages (`a "tool_use" block in content`). */
  readonly what: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const ANTHROPIC_BLOCKS: readonly string[] = Object.freeze(['tool_use', 'tool_result', 'thinking', 'redacted_thinking', 'server_tool_use', 'mcp_tool_use', 'mcp_tool_result', 'web_search_tool_result', 'search_result', 'document']);
const AI_SDK_PARTS: readonly string[] = Object.freeze(['tool-call', 'tool-result', 'tool-approval-request', 'tool-approval-response', 'reasoning']);
const RESPONSES_ITEMS: readonly string[] = Object.freeze([
  'function_call', 'function_call_output', 'reasoning', 'custom_tool_call', 'custom_tool_call_output', 'web_search_call', 'file_search_call',
  'code_interpreter_call', 'image_generation_call', 'local_shell_call', 'local_shell_call_output', 'computer_call', 'computer_call_output',
  'shell_call', 'shell_call_output', 'apply_patch_call', 'apply_patch_call_output', 'mcp_call', 'mcp_list_tools', 'mcp_approval_request',
  'mcp_approval_response', 'compaction', 'item_reference',
]);
const RESPONSES_PARTS: readonly string[] = Object.freeze(['input_text', 'output_text', 'input_image', 'input_file']);
/** What a legacy OpenAI `function_call` is called as evidence (Qwen-Agent writes its calls the same way). */
export const LEGACY_CALL = 'an assistant message with a legacy function_call';
const HERMES_TURN = 'a <tool_response> message answering the <tool_call> blocks of the assistant message before it';

/** Evidence each message gives is kept up to this many pieces per format (error messages quote two). */
const EVIDENCE_KEPT = 2;

/**
 * Tells `say` every piece of evidence `message` gives, in a fixed order; `previous` is the message
 * before it (parallel calls split over messages). Allocates nothing for a message with none.
 */
function readEvidence(message: unknown, previous: unknown, say: (format: FormatName, what: string) => void): void {
  if (!isObj(message)) return;
  const role = message.role;
  const type = message.type;
  if (typeof type === 'string' && RESPONSES_ITEMS.includes(type)) say('openai-responses', `an item of type "${type}"`);
  if (typeof type === 'string' && type === 'message' && typeof role === 'string') say('openai-responses', 'an item of type "message"');
  if (Array.isArray(message.parts)) {
    // Only Gemini contents keep their content in `parts` of untyped objects (AI SDK UI messages type theirs).
    if (!('content' in message) && message.parts.length > 0 && message.parts.every((p) => isObj(p) && !('type' in p))) say('gemini', 'content kept in "parts"');
    for (const part of message.parts) {
      if (isObj(part) && (isObj(part.functionCall) || isObj(part.functionResponse))) {
        say('gemini', `a ${isObj(part.functionCall) ? 'functionCall' : 'functionResponse'} part`);
        break;
      }
    }
    if (role === 'model') say('gemini', 'role "model" with parts');
  }
  if (Array.isArray(message.content)) {
    for (const part of message.content) {
      if (!isObj(part) || typeof part.type !== 'string') continue;
      if (RESPONSES_PARTS.includes(part.type)) {
        say('openai-responses', `a "${part.type}" content part`);
        break;
      }
      if ((part.type === 'image' || part.type === 'document') && isObj(part.source)) {
        say('anthropic', `an "${part.type}" block with a source`);
        break;
      }
      if ((part.type === 'file' || part.type === 'image') && typeof part.mediaType === 'string') {
        say('ai-sdk', `a "${part.type}" part with mediaType`);
        break;
      }
      if (ANTHROPIC_BLOCKS.includes(part.type) || (part.type.endsWith('_tool_result') && part.type !== 'tool_result')) {
        say('anthropic', `a "${part.type}" block in content`);
        break;
      }
      if (AI_SDK_PARTS.includes(part.type)) {
        say('ai-sdk', `a "${part.type}" part in content`);
        break;
      }
    }
  }
  if (role === 'assistant' && Array.isArray(message.tool_calls) && message.tool_calls.length > 0) say('openai', 'an assistant message with a tool_calls array');
  if (role === 'tool' && 'tool_call_id' in message) say('openai', 'a tool message with tool_call_id');
  if (role === 'assistant' && isObj(message.function_call)) {
    // Qwen-Agent sends parallel calls as consecutive assistant messages, each with one function_call;
    // OpenAI's legacy function calling has one call, then its function message.
    if (isObj(previous) && previous.role === 'assistant' && isObj(previous.function_call)) say('qwen-agent', 'consecutive assistant messages with function_call (parallel calls)');
    say('openai', LEGACY_CALL);
  }
  if (isObj(message.extra) && 'function_id' in message.extra) say('qwen-agent', 'extra.function_id');
  // Hermes is text: a tag alone may be prose (a question about the format, an example in an
  // answer). Only a call turn is evidence, laid out as the chat templates write it: an assistant
  // message ending in well-formed <tool_call> blocks, then a user message opening with
  // <tool_response> blocks. A tool output (the longest texts) is not searched.
  if (role === 'user' && typeof message.content === 'string' && !('tool_calls' in message) && message.content.includes(RESPONSE_OPEN) && answersCalls(message.content, previous)) say('hermes', HERMES_TURN);
}

const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13;

/** True when `text`, once trimmed, starts with `tag`. */
function opensWith(text: string, tag: string): boolean {
  let i = 0;
  while (i < text.length && isSpace(text.charCodeAt(i))) i++;
  return text.startsWith(tag, i);
}

/** True when `text`, once trimmed, ends with `tag`. */
function closesWith(text: string, tag: string): boolean {
  let end = text.length;
  while (end > 0 && isSpace(text.charCodeAt(end - 1))) end--;
  return end >= tag.length && text.startsWith(tag, end - tag.length);
}

/**
 * True when user text `text` answers the assistant message `previous` as Hermes does: `previous`
 * (an assistant message of text only) ends in `<tool_call>` blocks that all parse as named JSON
 * calls, and `text` opens with well-formed `<tool_response>` blocks. The counts may differ (a
 * broken history is still Hermes, for repair to fix); a tag in prose, a block inside a sentence
 * or a code fence, or a malformed block is not a call turn.
 */
function answersCalls(text: string, previous: unknown): boolean {
  if (!opensWith(text, RESPONSE_OPEN)) return false;
  if (!isObj(previous) || previous.role !== 'assistant' || typeof previous.content !== 'string' || 'tool_calls' in previous) return false;
  const said = previous.content;
  if (!closesWith(said, CALL_CLOSE)) return false;
  const calls = readCallBlocks(said);
  if (isBlockError(calls) || calls.blocks.length === 0 || calls.blocks[calls.blocks.length - 1].end !== said.trimEnd().length) return false;
  const results = readResponseBlocks(text);
  return !isBlockError(results) && results.blocks.length > 0 && results.blocks[0].start === text.length - text.trimStart().length;
}

/**
 * The evidence in messages[from, ...), by format in the order first seen, each format's first
 * pieces (at most `EVIDENCE_KEPT`, first seen first): which formats the messages point to, and
 * what to quote for each.
 */
export function evidenceIn(messages: readonly unknown[], from = 0): Map<FormatName, Evidence[]> {
  const byFormat = new Map<FormatName, Evidence[]>();
  let openaiBeyondLegacy = false;
  let index = from;
  const say = (format: FormatName, what: string) => {
    if (format === 'openai' && what !== LEGACY_CALL) openaiBeyondLegacy = true;
    const list = byFormat.get(format);
    if (!list) byFormat.set(format, [{ format, index, what }]);
    else if (list.length < EVIDENCE_KEPT) list.push({ format, index, what });
  };
  for (; index < messages.length; index++) readEvidence(messages[index], index > 0 ? messages[index - 1] : undefined, say);
  // Consecutive function_call messages are Qwen-Agent's parallel calls; in OpenAI Chat they would
  // be a legacy call left unanswered. When the only sign of OpenAI Chat is legacy function_calls
  // (no tool_calls array, no tool message), the history is Qwen-Agent's: reading it so pairs each
  // result with its own call, where the OpenAI reading would delete results.
  if (byFormat.has('qwen-agent') && byFormat.has('openai') && !openaiBeyondLegacy) byFormat.delete('openai');
  return byFormat;
}
