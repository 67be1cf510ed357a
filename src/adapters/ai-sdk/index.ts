/**
 * `ctxfold/ai-sdk`: a Vercel AI SDK language-model middleware. Wrap any model with
 * `wrapLanguageModel({ model, middleware: ctxfoldMiddleware({ ... }) })` and every call it makes
 * (generateText, streamText, each step of a tool loop) sends a prompt that fits the model's window
 * and that the provider accepts. The `ai` package is needed only for its types: nothing here loads it.
 */

/** Makes the middleware; its compressor is `middleware.compressor`. */
export { ctxfoldMiddleware } from './middleware.js';
/** The published context window of a known model id (undefined when unknown), the default `maxContextTokens`. */
export { contextWindowOf } from '../../runtime/context-windows.js';

export type { CtxfoldMiddleware, CtxfoldMiddlewareOptions, ModelCallOptions } from './types.js';
