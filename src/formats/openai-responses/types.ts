/**
 * Items of the OpenAI Responses API `input` list, loosely typed: every item is an object with a
 * `type` (a message may leave it out and give only a `role`), and unknown fields are kept as they are.
 */

/** A content part of a message or of a tool output (`input_text`, `output_text`, `refusal`, `input_image`, `input_file`, ...). */
export interface ResponsesContentPart {
  type: string;
  text?: string;
  refusal?: string;
  image_url?: string;
  detail?: string;
  file_id?: string;
  [key: string]: unknown;
}

/**
 * One item of a Responses `input` list, as the lens reads it: a message (`role` set, `type`
 * `'message'` or absent), a call, a call's output, a reasoning item, an in-place call, a
 * compaction item, an item reference, or a type this version does not know (kept as it is).
 */
export interface ResponsesItem {
  type?: string;
  role?: string;
  id?: string;
  call_id?: string;
  [key: string]: unknown;
}

/** A message item: `content` is a string or a list of parts. */
export interface ResponsesMessageItem extends ResponsesItem {
  type?: 'message';
  role: 'user' | 'assistant' | 'system' | 'developer';
  content: string | ResponsesContentPart[];
}

/** A function call the client runs: `id` (`fc_...`) is the item's own id, `call_id` pairs it with its output. */
export interface ResponsesFunctionCall extends ResponsesItem {
  type: 'function_call';
  call_id: string;
  name: string;
  /** The arguments as JSON text. */
  arguments: string;
}

/** The result of a function call, paired with it by `call_id`. */
export interface ResponsesFunctionCallOutput extends ResponsesItem {
  type: 'function_call_output';
  call_id: string;
  output: string | ResponsesContentPart[];
}

/** A call of a custom (free-form) tool: `input` is the raw text the model wrote. */
export interface ResponsesCustomToolCall extends ResponsesItem {
  type: 'custom_tool_call';
  call_id: string;
  name: string;
  input: string;
}

/** The result of a custom tool call, paired with it by `call_id`. */
export interface ResponsesCustomToolCallOutput extends ResponsesItem {
  type: 'custom_tool_call_output';
  call_id: string;
  output: string | ResponsesContentPart[];
}

/**
 * A reasoning item (`rs_...`): a summary the client may read, and content that is opaque when
 * encrypted. It must be followed by the item it was produced with.
 */
export interface ResponsesReasoningItem extends ResponsesItem {
  type: 'reasoning';
  id: string;
  summary: { type: string; text: string }[];
  content?: { type: string; text: string }[];
  encrypted_content?: string | null;
}

/** An opaque summary of earlier history made by OpenAI's compaction; it stands for that history. */
export interface ResponsesCompactionItem extends ResponsesItem {
  type: 'compaction';
  encrypted_content: string;
}

/** A reference to an item the server stored earlier, by its id. */
export interface ResponsesItemReference extends ResponsesItem {
  type: 'item_reference';
  id: string;
}
