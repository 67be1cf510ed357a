/** A content part of an OpenAI Chat message (text, image, audio, file, refusal...). */
export interface OpenAIContentPart {
  type: string;
  text?: string;
  refusal?: string;
  [key: string]: unknown;
}

/** An OpenAI Chat Completions tool call as it appears in `assistant.tool_calls`. */
export interface OpenAIToolCall {
  id: string;
  type?: string;
  function: { name: string; arguments: string };
  [key: string]: unknown;
}

/** An OpenAI Chat Completions message, loosely typed: unknown fields are kept as they are. */
export interface OpenAIChatMessage {
  role: string;
  content?: string | OpenAIContentPart[] | null;
  name?: string;
  tool_calls?: OpenAIToolCall[] | null;
  tool_call_id?: string;
  function_call?: { name: string; arguments: string } | null;
  [key: string]: unknown;
}
