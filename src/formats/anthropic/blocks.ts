import type { AnthropicBlock, AnthropicMessage } from './types.js';

/**
 * What each Anthropic content block is, and the text it bills. One place for the block types, so
 * the lens, its atomic constraints and the profile's rules read blocks the same way.
 */

/** True when `value` is a content block: an object with a string `type`. */
export function isBlock(value: unknown): value is AnthropicBlock {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as { type?: unknown }).type === 'string';
}

/** The index in `content` of the `slot`-th block of `type` (slots count only blocks of that type), or -1. */
export function nthBlockIndex(content: unknown, type: string, slot: number): number {
  if (!Array.isArray(content)) return -1;
  let seen = 0;
  for (let k = 0; k < content.length; k++) {
    const b = content[k];
    if (isBlock(b) && b.type === type && seen++ === slot) return k;
  }
  return -1;
}

/** Shared empty list for string content (read per message per request). */
const NO_BLOCKS: readonly AnthropicBlock[] = Object.freeze([]);

/** The blocks of a message's content; none for string content. Non-block entries are skipped. */
export function blocksOf(m: AnthropicMessage): readonly AnthropicBlock[] {
  const c: unknown = m.content;
  if (!Array.isArray(c)) return NO_BLOCKS;
  const list = c as unknown[];
  return list.every((b) => isBlock(b)) ? (list as AnthropicBlock[]) : list.filter(isBlock);
}

/** Block types of calls the provider runs itself and answers in the same assistant message. */
export const IN_PLACE_CALL_TYPES: readonly string[] = Object.freeze(['server_tool_use', 'mcp_tool_use']);

/** True for a server tool's result block (`web_search_tool_result`, `mcp_tool_result`, ...): any `*_tool_result` but `tool_result`. */
export function isInPlaceResultType(type: string): boolean {
  return type !== 'tool_result' && type.endsWith('_tool_result');
}

/** True for `thinking` and `redacted_thinking`: blocks the API checks byte for byte and the lens never changes. */
export function isThinkingType(type: string): boolean {
  return type === 'thinking' || type === 'redacted_thinking';
}

/** True when any message of the history carries a thinking or redacted thinking block (thinking is on). */
export function usesThinking(messages: readonly AnthropicMessage[]): boolean {
  for (const m of messages) {
    if (m?.role !== 'assistant' || !Array.isArray(m.content)) continue;
    for (const b of m.content) if (isBlock(b) && isThinkingType(b.type)) return true;
  }
  return false;
}

/** True when the assistant message starts with a thinking or redacted thinking block. */
export function startsWithThinking(m: AnthropicMessage): boolean {
  const first = Array.isArray(m.content) ? m.content[0] : undefined;
  return isBlock(first) && isThinkingType(first.type);
}

/** True for a user message whose content is only `tool_result` blocks (at least one): a tool step, not a human turn. */
export function onlyToolResults(m: AnthropicMessage): boolean {
  if (m?.role !== 'user' || !Array.isArray(m.content) || m.content.length === 0) return false;
  for (const b of m.content) if (!isBlock(b) || b.type !== 'tool_result') return false;
  return true;
}

/** The text a document block bills: a text source's data, or a content source's text. */
function documentText(block: AnthropicBlock): string {
  const source = block.source as { type?: unknown; data?: unknown; content?: unknown } | undefined;
  if (!source || typeof source !== 'object') return '';
  if (source.type === 'text' && typeof source.data === 'string') return source.data;
  if (source.type === 'content') return contentText(source.content as string | AnthropicBlock[]);
  return '';
}

/**
 * The text one block bills as text: `text`, `thinking` (the model's own reasoning is input on the
 * next request), a search result's title and text, a document's text. Images, redacted thinking and
 * calls bill otherwise (see the lens).
 */
export function blockText(block: AnthropicBlock): string {
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? block.text : '';
    case 'thinking':
      return typeof block.thinking === 'string' ? block.thinking : '';
    case 'search_result': {
      const title = typeof block.title === 'string' ? block.title : '';
      const body = contentText(block.content as string | AnthropicBlock[]);
      return title && body ? `${title}\n${body}` : title + body;
    }
    case 'document':
      return documentText(block);
    default:
      return '';
  }
}

/** The text of string or block content: every block's billed text, joined with newlines. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let out = '';
  for (const b of content) {
    if (!isBlock(b)) continue;
    const t = blockText(b);
    if (t === '') continue;
    out = out === '' ? t : `${out}\n${t}`;
  }
  return out;
}

/** Keys of a server tool result whose strings are opaque (encrypted) or identifiers, not text the model reads. */
const NOT_TEXT_KEYS: readonly string[] = Object.freeze(['type', 'tool_use_id', 'id', 'media_type', 'file_id', 'encrypted_content', 'encrypted_index', 'signature', 'data', 'cache_control', 'citations', 'error_code', 'page_age', 'retrieved_at']);

/**
 * The readable text of a server tool's result block (`web_search_tool_result`, `code_execution_tool_result`,
 * ...): every string under it but identifiers and opaque data (encrypted page content counts as
 * media, see `media-tokens.ts`), in document order. A text document source's data is text.
 */
export function inPlaceResultText(block: AnthropicBlock): string {
  const parts: string[] = [];
  const walk = (value: unknown, depth: number) => {
    if (depth > 64) return;
    if (typeof value === 'string') {
      if (value !== '') parts.push(value);
      return;
    }
    if (Array.isArray(value)) {
      for (const v of value) walk(v, depth + 1);
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    const o = value as Record<string, unknown>;
    for (const [k, v] of Object.entries(o)) {
      if (k === 'data' && o.type === 'text' && typeof v === 'string') parts.push(v);
      else if (!NOT_TEXT_KEYS.includes(k)) walk(v, depth + 1);
    }
  };
  walk(block.content, 0);
  return parts.join('\n');
}
