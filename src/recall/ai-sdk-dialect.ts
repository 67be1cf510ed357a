import { RECALL_TOOL_NAME } from './tool-definition.js';
import { isFields, type Fields, type RecallAsk, type RecallRoundDialect } from './dialect.js';

/**
 * Recall in an AI SDK language-model call (`doGenerate`), as a middleware sees it: the result's
 * `content` parts, and the provider prompt (`LanguageModelV3Prompt` / V4) the rounds are written
 * into. Works on both specification versions: it reads only the parts and fields they share.
 */

const isRecallCall = (p: unknown): p is Fields => isFields(p) && p.type === 'tool-call' && p.toolName === RECALL_TOOL_NAME;
const contentOf = (result: Fields): unknown[] => (Array.isArray(result.content) ? result.content : []);

/**
 * Recall calls in a `doGenerate` result: answerable when every tool call of its content is a
 * client-run `ctxfold_recall` call (text and reasoning parts go into the history with them); a
 * result that also calls the application's tools, or whose recall call the provider ran, is not.
 */
function read(result: Fields): RecallAsk | undefined {
  const content = contentOf(result);
  const recalls = content.filter(isRecallCall);
  if (recalls.length === 0) return undefined;
  const others = content.some((p) => isFields(p) && (p.type === 'tool-call' || p.type === 'tool-approval-request') && !isRecallCall(p));
  const calls = recalls.map((p) => ({ id: typeof p.toolCallId === 'string' ? p.toolCallId : '', arguments: typeof p.input === 'string' ? p.input : JSON.stringify(p.input ?? {}) }));
  return { calls, answerable: !others && recalls.every((p) => p.providerExecuted !== true) };
}

/** A tool call's input as the prompt carries it (parsed JSON); the text as it came when it is not JSON. */
function parsedInput(input: unknown): unknown {
  if (typeof input !== 'string') return input ?? {};
  try {
    return JSON.parse(input) as unknown;
  } catch {
    return input;
  }
}

/**
 * The model's turn as one assistant message of the provider prompt: its text and reasoning parts,
 * then its recall calls (`input` parsed, as the prompt carries it), in the order they came.
 */
function turn(result: Fields): unknown[] {
  const parts: unknown[] = [];
  for (const p of contentOf(result)) {
    if (!isFields(p)) continue;
    if (p.type === 'text' && typeof p.text === 'string' && p.text !== '') parts.push({ type: 'text', text: p.text });
    else if (p.type === 'reasoning' && typeof p.text === 'string') parts.push({ type: 'reasoning', text: p.text, ...(p.providerMetadata ? { providerOptions: p.providerMetadata } : {}) });
    else if (isRecallCall(p)) parts.push({ type: 'tool-call', toolCallId: p.toolCallId, toolName: RECALL_TOOL_NAME, input: parsedInput(p.input) });
  }
  return [{ role: 'assistant', content: parts }];
}

/**
 * A copy of a `doGenerate` result without its `ctxfold_recall` calls; a result left with no tool
 * call that finished for `tool-calls` finishes for `stop` instead (both the V3 `{ unified, raw }`
 * and a plain string are read). Invariant: a result without recall calls is returned as is.
 */
export function withoutAiSdkRecallCalls<T>(result: T): T {
  if (!isFields(result) || !Array.isArray(result.content) || !result.content.some(isRecallCall)) return result;
  const content = result.content.filter((p) => !isRecallCall(p));
  const callsLeft = content.some((p) => isFields(p) && p.type === 'tool-call');
  const finish = result.finishReason;
  let finishReason = finish;
  if (!callsLeft) {
    if (finish === 'tool-calls') finishReason = 'stop';
    else if (isFields(finish) && finish.unified === 'tool-calls') finishReason = { ...finish, unified: 'stop' };
  }
  return { ...result, content, finishReason } as T;
}

/** Recall in AI SDK `doGenerate` results, written into the provider prompt. */
export const AI_SDK_RECALL: RecallRoundDialect = Object.freeze<RecallRoundDialect>({
  read,
  turn,
  result: (call, text) => ({ role: 'tool', content: [{ type: 'tool-result', toolCallId: call.id, toolName: RECALL_TOOL_NAME, output: { type: 'text', value: text } }] }),
  without: withoutAiSdkRecallCalls,
});
