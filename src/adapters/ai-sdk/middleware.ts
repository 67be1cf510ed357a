import { InputError } from '../../errors.js';
import type { CompressResult } from '../../runtime/compress.js';
import type { Compressor, RequestExtras } from '../../runtime/compressor.js';
import { defaultChatId } from '../../runtime/chat-id.js';
import { compressorSlot } from '../shared/compressor-slot.js';
import { checkMiddlewareOptions } from './options.js';
import { asProviderPrompt } from './provider-prompt.js';
import type { AiSdkMiddleware, CtxfoldMiddleware, CtxfoldMiddlewareOptions, ModelCallOptions } from './types.js';
import { inputTokensOf, raiseFinishUsage, watchFinish } from './usage.js';
import { AI_SDK_RECALL } from '../../recall/ai-sdk-dialect.js';
import { answerRecallRounds, type RecallView } from '../../runtime/recall-rounds.js';
import { recallAnsweringStream } from './recall-stream.js';
import { isFields, type Fields } from '../../recall/dialect.js';
import { addUsage } from '../../recall/usage-sum.js';

/** What `transformParams` hands to `wrapGenerate` / `wrapStream` for the same call. */
interface Pending {
  readonly compressor: Compressor;
  readonly chatId: string;
  /** The full prompt the call came with (the history the summary is made of, never the view). */
  readonly history: readonly unknown[];
  readonly report: CompressResult<unknown>['report'];
  readonly modelId: string;
  /** What the compressor counted for the call, for the views of its recall rounds. */
  readonly extras: RequestExtras;
  /** True when the call was offered the recall tool (its recall calls are answered here). */
  readonly recall: boolean;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The request facts the compressor counts: the reply's reserve, the tools, a JSON response schema, the model. */
function extrasOf(params: ModelCallOptions, modelId: string): RequestExtras {
  const format = (params as { responseFormat?: unknown }).responseFormat;
  return {
    model: modelId,
    max_output_tokens: params.maxOutputTokens,
    tools: params.tools,
    response_format: isObj(format) && format.type === 'json' ? format : undefined,
  };
}

/** The params of a recall round: the call's own, with the round's view as the prompt and its tools. */
function roundParams(params: ModelCallOptions, view: RecallView): ModelCallOptions {
  return { ...params, prompt: asProviderPrompt(view.messages as ModelCallOptions['prompt']), ...(view.tools ? { tools: view.tools as ModelCallOptions['tools'] } : {}), ...(view.final ? { toolChoice: { type: 'none' as const } } : {}) };
}

/** `params.providerOptions.ctxfold.chatId` when it is a non-empty string. */
function providerChatId(params: ModelCallOptions): string | undefined {
  const mine = isObj(params.providerOptions) ? params.providerOptions.ctxfold : undefined;
  const id = isObj(mine) ? mine.chatId : undefined;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/**
 * A Vercel AI SDK language-model middleware (for `wrapLanguageModel`) that keeps every call's
 * prompt inside the model's context window without breaking tool calling. `transformParams`
 * replaces `params.prompt` (system messages included) by the compressor's view of it, counting the
 * reply's `maxOutputTokens`, the `tools` and a JSON `responseFormat`; `wrapGenerate` /
 * `wrapStream` then call `compressor.afterResponse` once per model response (for a stream, at its
 * `finish` part) with the input tokens the provider billed, which calibrates the count and
 * schedules the chat's background summary when the plan asked for one. With `recall` on, every
 * call is offered the `ctxfold_recall` tool and `wrapGenerate` / `wrapStream` answer the model's
 * recall calls themselves (a stream stays one stream). Every decision is the
 * compressor's; the caller's params and messages are never mutated. Works with `ai` 6 (V3) and
 * `ai` 7 (V4) alike: see `specificationVersion`.
 */
export function ctxfoldMiddleware(options?: CtxfoldMiddlewareOptions): CtxfoldMiddleware {
  const o = checkMiddlewareOptions(options);
  const slot = compressorSlot(o.compressorOptions, o.shared);
  const pending = new WeakMap<object, Pending>();
  let warnedNoChatId = false;

  function chatIdOf(params: ModelCallOptions): string {
    const named = o.chatId ? o.chatId(params) : providerChatId(params);
    if (named !== undefined && (typeof named !== 'string' || named === '')) {
      throw new InputError('options.chatId', `must return a non-empty string or undefined, got ${JSON.stringify(named)}`);
    }
    if (named !== undefined) return named;
    if (!warnedNoChatId) {
      warnedNoChatId = true;
      process.emitWarning('a model call came without a chat id; ctxfold keys its summary by a fingerprint of the conversation opening. Pass providerOptions: { ctxfold: { chatId } } (or options.chatId(params)) so two users never share a summary.', { code: 'CTXFOLD_NO_CHAT_ID' });
    }
    return defaultChatId({ messages: params.prompt });
  }

  const transformParams: NonNullable<AiSdkMiddleware['transformParams']> = async ({ params, model }) => {
    if (!Array.isArray(params?.prompt)) throw new InputError('params.prompt', 'must be the provider prompt (an array of messages)');
    const compressor = slot.forModel(model.modelId);
    const chatId = chatIdOf(params);
    const extras = extrasOf(params, model.modelId);
    const { messages, report, tools } = await compressor.compress(chatId, params.prompt, extras);
    const out = { ...params, prompt: asProviderPrompt(messages), ...(tools ? { tools: tools as typeof params.tools } : {}) };
    pending.set(out, { compressor, chatId, history: params.prompt, report, modelId: model.modelId, extras, recall: tools !== undefined && compressor.recall !== undefined });
    return out;
  };

  /** The facts `transformParams` kept for these params, taken once. */
  const take = (params: object): Pending | undefined => {
    const p = pending.get(params);
    if (p) pending.delete(params);
    return p;
  };

  const wrapGenerate: NonNullable<AiSdkMiddleware['wrapGenerate']> = async ({ doGenerate, params, model }) => {
    let result = await doGenerate();
    const p = take(params);
    if (!p) return result;
    let report = p.report;
    if (p.recall) {
      // The model's recall calls are answered here and the model called again (same params, the
      // new view and tools): the SDK, and the application, get the last result only.
      const out = await answerRecallRounds(result, p.report, {
        compressor: p.compressor,
        dialect: AI_SDK_RECALL,
        chatId: p.chatId,
        history: p.history,
        extras: p.extras,
        ask: async (view) => model.doGenerate(roundParams(params, view)),
        usage: (reply) => (isFields(reply.usage) ? reply.usage : undefined),
      });
      result = out.pending ? AI_SDK_RECALL.without(out.reply) : out.reply;
      report = out.report;
      p.compressor.afterResponse(p.chatId, p.history, report, { billedInputTokens: inputTokensOf(result.usage), model: p.modelId });
      // Each call is billed: the result shows their usage added up; the chat is calibrated on the last call's own.
      const earlier = out.earlierUsage;
      return earlier !== undefined && isFields(result.usage) ? { ...result, usage: addUsage(earlier, result.usage) as typeof result.usage } : result;
    }
    p.compressor.afterResponse(p.chatId, p.history, report, { billedInputTokens: inputTokensOf(result.usage), model: p.modelId });
    return result;
  };

  const wrapStream: NonNullable<AiSdkMiddleware['wrapStream']> = async ({ doStream, params, model }) => {
    const result = await doStream();
    const p = take(params);
    if (!p) return result;
    type Part = typeof result.stream extends ReadableStream<infer P> ? P : never;
    let report = p.report;
    // The chat is calibrated on the last round's own usage; the application is shown every round's added up.
    let earlier: Fields | undefined;
    // Recall calls are answered inside the stream: the application gets one stream, the last round's.
    const answered: ReadableStream<Part> = p.recall
      ? recallAnsweringStream<Part>(result.stream, {
        compressor: p.compressor,
        chatId: p.chatId,
        history: p.history,
        extras: p.extras,
        report: p.report,
        stream: async (view) => (await model.doStream(roundParams(params, view))).stream,
        onReport: (last, usage) => {
          report = last;
          earlier = usage;
        },
      })
      : result.stream;
    const stream = answered.pipeThrough(watchFinish<Part>((billed) => {
      p.compressor.afterResponse(p.chatId, p.history, report, { billedInputTokens: billed, model: p.modelId });
    })).pipeThrough(raiseFinishUsage<Part>(() => earlier));
    return { ...result, stream };
  };

  return {
    // Typed by the installed `ai` ('v3' for ai 6, any string for ai 7); neither SDK reads it at run time.
    specificationVersion: o.specificationVersion as AiSdkMiddleware['specificationVersion'],
    transformParams,
    wrapGenerate,
    wrapStream,
    compressor: slot.compressor,
  } as CtxfoldMiddleware;
}
