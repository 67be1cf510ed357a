/** ctxfold: keep long LLM conversations inside the context window without breaking tool calling. */
export { compressContext, type CompressOptions, type CompressReport, type CompressResult, type DroppedMessage } from './compress.js';
export type { PlanningOptions, SummaryInput, ToolOutputTrim } from './options.js';
export { CtxfoldInputError } from './errors.js';
export { buildGroups, type Group, type Grouping } from './core/groups.js';
export { alignCut, headEnd, tailStart, lastUserGroupStart } from './core/boundary.js';
export { planView, type Plan, type PlanDecisions, type PlanOptions } from './core/plan.js';
export { validateMessages, openaiProfile, type Profile } from './core/validate.js';
export type { Rule, RuleId, Violation } from './core/rules.js';
export { repairHistory, type RepairAction, MISSING_RESULT_TEXT } from './core/repair.js';
export type { CallRef, FormatName, MessageKind, MessageLens, ResultRef, TranscriptEntry } from './formats/lens.js';
export { openaiChatLens, type OpenAIChatMessage, type OpenAIToolCall } from './formats/openai-chat.js';
export { selectLens, SUPPORTED_FORMATS } from './formats/detect.js';
export { createTokenCounter, type TokenCounter, type TokenCounterOptions, type TextCounter } from './tokens/counter.js';
export { encodingForModel, freeEncoders } from './tokens/encoders.js';
export { idAt, idsOf } from './identity.js';
