import type { RequestExtras } from '../../runtime/compressor.js';
import type { LangchainSdk } from './sdk.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null;

/**
 * The fields of the chat model behind an agent's `request.model`, for its name and reply limit:
 * a chat model's own fields, those `initChatModel('provider:name')` was given (`_defaultConfig`),
 * or those of the model a binding (`model.withConfig(...)`) wraps, a few levels deep.
 */
function modelFields(model: unknown): Obj | undefined {
  let m: unknown = model;
  for (let depth = 0; depth < 4 && isObj(m); depth++) {
    if (typeof m.model === 'string' || typeof m.modelName === 'string' || typeof m.maxTokens === 'number') return m;
    if (isObj(m._defaultConfig) && typeof m._defaultConfig.model === 'string') return m._defaultConfig;
    m = m.bound;
  }
  return undefined;
}

/** The model's name as its provider knows it (`gpt-4o`, `claude-sonnet-4-5`...), when the model says it. */
export function modelNameOf(model: unknown): string | undefined {
  const m = modelFields(model);
  const name = m?.model ?? m?.modelName;
  return typeof name === 'string' && name !== '' ? name : undefined;
}

/** The reply limit the model is configured with (`maxTokens`, or `maxOutputTokens`), when it has one. */
function replyLimitOf(model: unknown): number | undefined {
  const m = modelFields(model);
  const limit = m?.maxTokens ?? m?.maxOutputTokens;
  return typeof limit === 'number' && Number.isSafeInteger(limit) && limit > 0 ? limit : undefined;
}

/** What the agent sends besides the messages: its system prompt, its tools, the model and its reply limit. */
export interface AgentRequestView {
  readonly model: unknown;
  readonly systemMessage?: { readonly text?: unknown } | null;
  readonly systemPrompt?: unknown;
  readonly tools?: readonly unknown[];
}

/**
 * Reads tool definitions as the OpenAI function shape a provider is sent (LangChain tools through
 * `convertToOpenAITool`; provider tools, already plain objects, as they are), once per tool object.
 */
export function createToolReader(sdk: LangchainSdk): (tools: readonly unknown[] | undefined) => unknown[] | undefined {
  const seen = new WeakMap<object, unknown>();
  const read = (tool: unknown): unknown => {
    if (!isObj(tool)) return tool;
    let out = seen.get(tool);
    if (out === undefined) {
      try {
        out = sdk.convertToOpenAITool(tool as Parameters<LangchainSdk['convertToOpenAITool']>[0]);
      } catch {
        // A tool LangChain cannot describe is counted by what it says of itself.
        out = { name: tool.name, description: tool.description };
      }
      seen.set(tool, out);
    }
    return out;
  };
  return (tools) => (Array.isArray(tools) && tools.length > 0 ? tools.map(read) : undefined);
}

/**
 * The request facts the compressor counts, read from the agent's model request: the system
 * prompt (sent before the messages by the agent, so counted as instructions), the tools, the
 * model's reply limit (kept free) and the model's name (for calibration).
 */
export function extrasOf(request: AgentRequestView, tools: unknown[] | undefined, model: string | undefined): RequestExtras {
  const text = request.systemMessage?.text ?? request.systemPrompt;
  return {
    model,
    system: typeof text === 'string' && text !== '' ? text : undefined,
    tools,
    max_tokens: replyLimitOf(request.model),
  };
}
