import type { BaseMessage } from '@langchain/core/messages';
import type { Runtime } from 'langchain';
import { InputError } from '../../errors.js';
import type { OpenAIChatMessage } from '../../formats/openai-chat/types.js';
import { defaultChatId } from '../../runtime/chat-id.js';
import { compressorSlot } from '../shared/compressor-slot.js';
import { viewToLangChain } from './from-view.js';
import { checkOptions } from './options.js';
import { createToolReader, extrasOf, modelNameOf } from './request-extras.js';
import { langchainSdk } from './sdk.js';
import { createMessageConverter } from './to-openai.js';
import { completionOf, usageMetadataOf, withEarlierUsageMetadata, withoutRecallToolCalls } from './recall.js';
import type { Fields } from '../../recall/dialect.js';
import { CHAT_RECALL } from '../../recall/chat-dialect.js';
import { answerRecallRounds } from '../../runtime/recall-rounds.js';
import { recallToolDefinition } from '../../recall/tool-definition.js';
import type { AgentStateView, CtxfoldMiddleware, CtxfoldMiddlewareOptions } from './types.js';

/** The view is the history itself (nothing dropped, added or changed): the request can go as it is. */
function sameAs(view: readonly OpenAIChatMessage[], history: readonly OpenAIChatMessage[]): boolean {
  if (view.length !== history.length) return false;
  for (let i = 0; i < view.length; i++) if (view[i] !== history[i]) return false;
  return true;
}

/**
 * A LangChain agent middleware (for `createAgent({ middleware })`) that keeps every model call
 * inside the model's context window without breaking tool calling. It works in `wrapModelCall`,
 * so only what the model is sent changes: the agent's state keeps every message as it was, never
 * rewritten or replaced. Each call's messages are read as OpenAI Chat messages, compressed (the
 * agent's system prompt, the tools and the model's reply limit counted), and the view goes to the
 * model as the agent's own message objects, plus new messages for what the compressor wrote (the
 * summary, cleared or added tool results). After the model answers, `compressor.afterResponse`
 * gets the input tokens it billed (`usage_metadata.input_tokens`) and schedules the chat's
 * background summary when the plan asked for one. With `recall` on, the call's tools get the
 * `ctxfold_recall` tool and the model's recall calls are answered here (the state never holds
 * them). Every decision is the compressor's. Place it
 * last in `middleware`, so it sees the request as the model will get it.
 */
export function ctxfoldMiddleware(options?: CtxfoldMiddlewareOptions): CtxfoldMiddleware {
  const sdk = langchainSdk();
  const o = checkOptions(options);
  const slot = compressorSlot(o.compressorOptions, o.shared);
  const converter = createMessageConverter();
  const readTools = createToolReader(sdk);
  let warnedNoChatId = false;

  function chatIdOf(state: AgentStateView, runtime: Runtime<unknown>, history: readonly OpenAIChatMessage[]): string {
    const named = o.chatId ? o.chatId(state, runtime) : undefined;
    if (named !== undefined && (typeof named !== 'string' || named === '')) {
      throw new InputError('options.chatId', `must return a non-empty string or undefined, got ${JSON.stringify(named)}`);
    }
    if (named !== undefined) return named;
    const thread = runtime?.configurable?.thread_id;
    if (typeof thread === 'string' && thread !== '') return thread;
    if (!warnedNoChatId) {
      warnedNoChatId = true;
      process.emitWarning('an agent run came without a thread id; ctxfold keys its summary by a fingerprint of the conversation opening. Invoke the agent with { configurable: { thread_id } } (or pass options.chatId(state, runtime)) so two users never share a summary.', { code: 'CTXFOLD_NO_CHAT_ID' });
    }
    return defaultChatId({ messages: history });
  }

  const middleware = sdk.createMiddleware({
    name: 'CtxfoldMiddleware',
    async wrapModelCall(request, handler) {
      const messages: readonly BaseMessage[] = request.messages;
      if (!Array.isArray(messages) || messages.length === 0) return handler(request);
      const model = modelNameOf(request.model);
      const compressor = slot.forModel(model);
      const history = converter.toOpenAI(messages, 'request.messages');
      const chatId = chatIdOf(request.state as AgentStateView, request.runtime, history);
      const extras = extrasOf(request, readTools(request.tools), model);
      const { messages: view, report, tools } = await compressor.compress(chatId, history, extras);
      // With recall on, the request gets the recall tool (a plain definition, which the agent
      // lets a middleware add) and the model's recall calls are answered here.
      const recallTools = tools && compressor.recall ? [...(request.tools ?? []), recallToolDefinition('openai')] : undefined;
      const sent = sameAs(view, history) && !recallTools ? request : { ...request, messages: viewToLangChain(view, converter.original, sdk), ...(recallTools ? { tools: recallTools } : {}) };
      let response = await handler(sent as typeof request);
      let last = report;
      // Each call is billed: the agent is shown their usage added up; the chat is calibrated on the last call's own.
      let earlier: Fields | undefined;
      if (recallTools) {
        const out = await answerRecallRounds(response, report, {
          compressor,
          dialect: CHAT_RECALL,
          chatId,
          history,
          extras,
          read: completionOf,
          ask: async (round) => handler({ ...request, messages: viewToLangChain(round.messages as OpenAIChatMessage[], converter.original, sdk), tools: recallTools, ...(round.final ? { toolChoice: 'none' } : {}) } as typeof request),
          usage: usageMetadataOf,
        });
        response = out.pending ? withoutRecallToolCalls(out.reply, sdk) : out.reply;
        last = out.report;
        earlier = out.earlierUsage;
      }
      compressor.afterResponse(chatId, history, last, { billedInputTokens: response?.usage_metadata?.input_tokens, model });
      return withEarlierUsageMetadata(response, earlier, sdk);
    },
  });
  return Object.assign(middleware, { compressor: slot.compressor });
}
