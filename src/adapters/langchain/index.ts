/**
 * `ctxfold/langchain`: a LangChain JS agent middleware that keeps every model call inside the
 * context window without breaking tool calling, leaving the agent's state untouched. Needs the
 * packages `langchain` and `@langchain/core` (optional peer dependencies of ctxfold).
 */
export { ctxfoldMiddleware } from './middleware.js';
export type { AgentStateView, ChatIdFunction, CtxfoldMiddleware, CtxfoldMiddlewareOptions } from './types.js';
