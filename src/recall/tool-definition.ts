import { InputError } from '../errors.js';
import { describe } from '../formats/describe.js';

/** The name of the recall tool, in every format. */
export const RECALL_TOOL_NAME = 'ctxfold_recall';

/** The wire formats a recall tool definition exists for. */
export type RecallToolFormat = 'openai' | 'openai-responses' | 'anthropic' | 'ai-sdk';

/** The formats `recallToolDefinition` takes. */
export const RECALL_TOOL_FORMATS: readonly RecallToolFormat[] = Object.freeze(['openai', 'openai-responses', 'anthropic', 'ai-sdk']);

const DESCRIPTION = 'Reads again the original text of earlier messages of this conversation that a summary replaced. '
  + 'Pass ids (the message numbers the summary names, like "#12", oldest first) and/or a query (words to search for, '
  + 'such as an identifier or a name). Returns those messages as they were; use it when the summary lacks a detail you need.';

/** The JSON schema of the arguments `{ ids?: string[], query?: string }`. */
const PARAMETERS = Object.freeze({
  type: 'object',
  properties: Object.freeze({
    ids: Object.freeze({ type: 'array', items: Object.freeze({ type: 'string' }), description: 'Message numbers to read, like "#12" (from the summary).' }),
    query: Object.freeze({ type: 'string', description: 'Words to search the summarized messages for.' }),
  }),
  additionalProperties: false,
});

/**
 * The recall tool's definition in a format's own shape: Chat Completions
 * `{ type: 'function', function: { name, description, parameters } }`, Responses
 * `{ type: 'function', name, description, parameters, strict: false }`, Anthropic
 * `{ name, description, input_schema }`, AI SDK provider tools (`LanguageModelV3FunctionTool`,
 * what a language-model middleware sees in `params.tools`) `{ type: 'function', name, description,
 * inputSchema }`. Invariant: the same format always gives the same JSON
 * (a new object each time; the request's prompt prefix stays byte-stable). Any other format is an
 * `InputError` naming the supported ones.
 */
export function recallToolDefinition(format: RecallToolFormat): Record<string, unknown> {
  switch (format) {
    case 'openai':
      return { type: 'function', function: { name: RECALL_TOOL_NAME, description: DESCRIPTION, parameters: PARAMETERS } };
    case 'openai-responses':
      return { type: 'function', name: RECALL_TOOL_NAME, description: DESCRIPTION, parameters: PARAMETERS, strict: false };
    case 'anthropic':
      return { name: RECALL_TOOL_NAME, description: DESCRIPTION, input_schema: PARAMETERS };
    case 'ai-sdk':
      return { type: 'function', name: RECALL_TOOL_NAME, description: DESCRIPTION, inputSchema: PARAMETERS };
    default:
      throw new InputError('format', `must be one of ${RECALL_TOOL_FORMATS.join(', ')} (a recall tool definition exists for these), got ${describe(format)}`);
  }
}

/** True for a format `recallToolDefinition` takes. */
export function isRecallToolFormat(format: unknown): format is RecallToolFormat {
  return (RECALL_TOOL_FORMATS as readonly unknown[]).includes(format);
}
