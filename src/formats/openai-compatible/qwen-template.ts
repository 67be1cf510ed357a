import type { Profile } from '../../core/validate/validate.js';
import { openaiChatLens } from '../openai-chat/lens.js';
import type { OpenAIChatMessage } from '../openai-chat/types.js';
import { qwenCallCount, qwenResultsFollowCalls, qwenUserQuery } from './qwen-template-rules.js';

/**
 * Qwen3 served through its chat template (vLLM, llama.cpp, Ollama) with OpenAI-shaped messages:
 * tool messages pair with calls by position, so their count and place matter and tool_call_id
 * does not; at least one genuine user message. (Qwen on DashScope is the `dashscope` profile.)
 */
export const qwenTemplateProfile: Profile<OpenAIChatMessage> = Object.freeze({
  name: 'qwen-template',
  lens: openaiChatLens,
  rules: Object.freeze([qwenCallCount, qwenResultsFollowCalls, qwenUserQuery]),
});
