/**
 * A Hermes (Nous / Qwen chat-template) message: text only. An assistant's text carries its calls
 * as `<tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>` blocks; the results come back
 * as one user message of `<tool_response>\n...\n</tool_response>` blocks, in call order (no ids:
 * pairing is by position). Unknown fields are kept as they are.
 */
export interface HermesMessage {
  role: string;
  content: string;
  [key: string]: unknown;
}
