/**
 * `ctxfold/core`: the pure building blocks, for people writing their own planner. Nothing here
 * does I/O, keeps module state or imports `node:*`; every function takes data and returns data.
 */
export { scanStructure, resultsOfTurn, callOf, type CallStructure, type CallTurn, type Pairing, type PlacedResult } from './structure.js';
export { buildGroups, type Group, type Grouping, type GroupingResume } from './groups.js';
export { alignCut, headEnd, tailStart, lastUserGroupStart } from './boundary.js';
export { planView, type CollapsedResult, type Plan, type PlanDecisions, type PlanInput, type PlanOptions, type ResolvedSummary } from './plan.js';
export { droppedRanges, type DropReason, type DroppedRange } from './report.js';
export { summaryMessageText, collapsedPlaceholder } from './summary-frame.js';
export { repairWithLens, MISSING_RESULT_TEXT, type RepairAction } from './repair.js';
export { transcriptOf, withCallNames } from './transcript.js';
export { canonicalJson, messageId, type TextHash } from './ids.js';
export { checkProfile, type Profile } from './validate/validate.js';
export { callIdsUnique, callsAnswered, resultsHaveCall, resultsUnique, type Rule, type RuleId, type RuleInput, type Violation } from './validate/rules.js';
export { memoizedLens, type CallRef, type FormatName, type InPlaceCall, type MessageKind, type MessageLens, type Reading, type RequestShape, type ResultRef, type TranscriptEntry } from './lens.js';
export { openaiChatLens } from '../formats/openai-chat/lens.js';
export { openaiProfile } from '../formats/openai-chat/profile.js';
export { PROFILES, profileFor, type ProfileName } from '../formats/profiles.js';
export { LENSES, selectLens, SUPPORTED_FORMATS } from '../formats/registry.js';
export { convertMessages, type ConvertOptions, type ConvertResult } from '../formats/convert.js';
export type { Converted } from '../formats/convert-types.js';
export { remapCallIds, alphanumericId, type IdPolicy } from './remap-ids.js';
