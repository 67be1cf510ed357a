/**
 * The Vercel AI SDK's message shapes, loosely typed: the `ModelMessage` list `generateText` /
 * `streamText` take (ai v5/v6), which is also the shape of a provider-level `LanguageModelV3Prompt`
 * (the `prompt` of a `LanguageModelV3CallOptions`; V4 adds part types read as unknown parts). Older
 * shapes (ai v4 `args` on calls, `result` on results) are read too. Unknown fields are kept as they are.
 */

/** Provider-specific options a message or part may carry (`{ [provider]: { ... } }`). */
export type AiSdkProviderOptions = Record<string, Record<string, unknown>>;

/** The output of a tool result part; `type` says how `value` is shown to the model. */
export interface AiSdkToolResultOutput {
  type: string;
  value?: unknown;
  reason?: string;
  [key: string]: unknown;
}

/** A `tool-call` part of an assistant message: the model asks for `toolName` with `input`. */
export interface AiSdkToolCallPart {
  type: 'tool-call';
  toolCallId: string;
  toolName: string;
  input?: unknown;
  /** ai v4 name of `input`. */
  args?: unknown;
  /** True when the provider runs the tool itself (its result, if any, is in an assistant message). */
  providerExecuted?: boolean;
  providerOptions?: AiSdkProviderOptions;
  [key: string]: unknown;
}

/** A `tool-result` part: the answer to the call with `toolCallId`. */
export interface AiSdkToolResultPart {
  type: 'tool-result';
  toolCallId: string;
  toolName?: string;
  output?: AiSdkToolResultOutput;
  /** ai v4 name of `output` (any JSON value). */
  result?: unknown;
  providerOptions?: AiSdkProviderOptions;
  [key: string]: unknown;
}

/** A `tool-approval-request` part of an assistant message: the call `toolCallId` waits for the user's approval. */
export interface AiSdkToolApprovalRequest {
  type: 'tool-approval-request';
  approvalId: string;
  toolCallId: string;
  [key: string]: unknown;
}

/** A `tool-approval-response` part of a tool message: the user's answer to the request `approvalId`. */
export interface AiSdkToolApprovalResponse {
  type: 'tool-approval-response';
  approvalId: string;
  approved: boolean;
  reason?: string;
  providerExecuted?: boolean;
  [key: string]: unknown;
}

/** Any content part (text, image, file, reasoning, tool parts, and part types this lens does not know). */
export interface AiSdkPart {
  type: string;
  text?: string;
  providerOptions?: AiSdkProviderOptions;
  [key: string]: unknown;
}

/** One AI SDK message: `system` (string), `user`, `assistant` (string or parts), `tool` (parts). */
export interface AiSdkMessage {
  role: string;
  content: string | AiSdkPart[];
  providerOptions?: AiSdkProviderOptions;
  [key: string]: unknown;
}
