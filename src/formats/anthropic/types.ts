/**
 * Anthropic Messages API shapes, loosely typed: every block and message keeps unknown fields as
 * they are (the lens never drops a field it does not know).
 */

/** A content block of an Anthropic message; `type` names it (`text`, `tool_use`, `thinking`, ...). */
export interface AnthropicBlock {
  type: string;
  [key: string]: unknown;
}

/** `text`: plain text, optionally with citations. */
export interface AnthropicTextBlock extends AnthropicBlock {
  type: 'text';
  text: string;
}

/** `image`: a picture by `source` (`base64` with `media_type` and `data`, `url`, or `file`). */
export interface AnthropicImageBlock extends AnthropicBlock {
  type: 'image';
  source: { type: string; media_type?: string; data?: string; url?: string; [key: string]: unknown };
}

/** `tool_use`: a client tool call the caller answers with a `tool_result` in the next user message. */
export interface AnthropicToolUseBlock extends AnthropicBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}

/** `tool_result`: the answer to a `tool_use`, in the user message right after it; content first in that message. */
export interface AnthropicToolResultBlock extends AnthropicBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | AnthropicBlock[];
  is_error?: boolean;
}

/** `thinking`: the model's reasoning with the `signature` the API checks byte for byte. */
export interface AnthropicThinkingBlock extends AnthropicBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

/** `redacted_thinking`: encrypted reasoning, sent back as it came. */
export interface AnthropicRedactedThinkingBlock extends AnthropicBlock {
  type: 'redacted_thinking';
  data: string;
}

/** `server_tool_use` / `mcp_tool_use`: a call the provider runs itself, answered by a `*_tool_result` block. */
export interface AnthropicServerToolUseBlock extends AnthropicBlock {
  type: 'server_tool_use' | 'mcp_tool_use';
  id: string;
  name: string;
  input: unknown;
}

/** A message of the Anthropic Messages API (`messages[]`); there is no system role in the list. */
export interface AnthropicMessage {
  role: 'user' | 'assistant' | (string & {});
  content: string | AnthropicBlock[];
  [key: string]: unknown;
}

/** The top-level `system` field of a request: a string or text blocks. */
export type AnthropicSystem = string | AnthropicTextBlock[];
