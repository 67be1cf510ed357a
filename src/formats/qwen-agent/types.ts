/**
 * Qwen-Agent's message shape (`qwen_agent/llm/schema.py`), as plain JSON: what `Message.model_dump()`
 * gives and what `Message(**dict)` reads. Unknown fields are kept as they are.
 */

/** One content item: exactly one of `text`, `image`, `file`, `audio`, `video` (a Qwen-Agent `ContentItem`). */
export interface QwenAgentContentItem {
  text?: string;
  image?: string;
  file?: string;
  audio?: string;
  video?: string | string[];
}

/** A function call: one per assistant message; `arguments` is the JSON text the model wrote. */
export interface QwenAgentFunctionCall {
  name: string;
  arguments: string;
}

/**
 * A Qwen-Agent message. Parallel calls are consecutive assistant messages, each with one
 * `function_call`; their results are consecutive `function` messages (`name` = the function) in
 * call order; `extra.function_id` pairs a call and its result where present.
 */
export interface QwenAgentMessage {
  role: string;
  content: string | QwenAgentContentItem[] | null;
  reasoning_content?: string | QwenAgentContentItem[] | null;
  name?: string | null;
  function_call?: QwenAgentFunctionCall | null;
  extra?: { function_id?: string; [key: string]: unknown } | null;
  [key: string]: unknown;
}
