import { RECALL_TOOL_NAME } from '../../recall/tool-definition.js';
import type { CompressResult } from '../../runtime/compress.js';
import type { Compressor, RequestExtras } from '../../runtime/compressor.js';
import { isFields, type Fields } from './endpoints.js';

/** One tool call of a Chat Completions response message, as read here. */
interface ToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

/** The tool calls of a response's message (the first choice's), or undefined when it has none. */
function toolCallsOf(response: Fields): ToolCall[] | undefined {
  const choices = response.choices;
  if (!Array.isArray(choices) || choices.length !== 1 || !isFields(choices[0]) || !isFields(choices[0].message)) return undefined;
  const calls = choices[0].message.tool_calls;
  if (!Array.isArray(calls) || calls.length === 0) return undefined;
  return calls.map((c) => {
    const f = isFields(c) && isFields(c.function) ? c.function : {};
    return { id: isFields(c) && typeof c.id === 'string' ? c.id : '', name: typeof f.name === 'string' ? f.name : '', arguments: typeof f.arguments === 'string' ? f.arguments : '' };
  });
}

const isRecall = (c: ToolCall) => c.name === RECALL_TOOL_NAME;

/**
 * A copy of a Chat Completions response without its `ctxfold_recall` calls, in every choice: a
 * message left with no call loses `tool_calls`, and its `finish_reason` `tool_calls` becomes
 * `stop`. A response without recall calls is returned as is.
 */
export function withoutRecallCalls<T>(response: T): T {
  if (!isFields(response) || !Array.isArray(response.choices)) return response;
  let changed = false;
  const choices = response.choices.map((choice: unknown) => {
    if (!isFields(choice) || !isFields(choice.message) || !Array.isArray(choice.message.tool_calls)) return choice;
    const calls = choice.message.tool_calls as unknown[];
    const kept = calls.filter((c) => !(isFields(c) && isFields(c.function) && c.function.name === RECALL_TOOL_NAME));
    if (kept.length === calls.length) return choice;
    changed = true;
    const { tool_calls: _dropped, ...message } = choice.message;
    return {
      ...choice,
      message: kept.length > 0 ? { ...message, tool_calls: kept } : message,
      finish_reason: kept.length === 0 && choice.finish_reason === 'tool_calls' ? 'stop' : choice.finish_reason,
    };
  });
  return (changed ? { ...response, choices } : response) as T;
}

/** What answering recall rounds needs: the call's chat, history, request extras and a way to post a body again. */
export interface RecallRound {
  readonly compressor: Compressor;
  readonly chatId: string;
  /** The application's history (the recall rounds are appended to a copy, never to it). */
  readonly history: readonly unknown[];
  readonly extras: RequestExtras;
  /** The request body as the application gave it. */
  readonly body: Fields;
  /** Posts a body (the client's own `post`, not folded again) and resolves to the parsed response. */
  readonly post: (body: Fields) => Promise<unknown>;
}

/**
 * Answers `ctxfold_recall` calls of a non-streamed Chat Completions response and asks the model
 * again, up to `compressor.recall.rounds` times. Rule: a response whose only tool calls are
 * recall calls is answered (the assistant message and one `tool` result per call are appended
 * to the history, the whole is compressed again within the budget, and the model is called
 * again); a response that mixes recall calls with the application's calls is passed on with the
 * recall calls removed (the application runs its own calls; the model may ask to recall again on
 * the next request); so is the response once the rounds are used up. Returns the response the
 * application gets (never holding a recall call) and the report of the last view sent.
 */
export async function answerRecallRounds(first: unknown, report: CompressResult<unknown>['report'], round: RecallRound): Promise<{ response: unknown; report: CompressResult<unknown>['report'] }> {
  const recall = round.compressor.recall;
  if (!recall) return { response: first, report };
  let response = first;
  let last = report;
  const added: unknown[] = [];
  for (let answered = 0; ; answered++) {
    const calls = isFields(response) ? toolCallsOf(response) : undefined;
    if (!calls || !calls.some(isRecall)) return { response, report: last };
    if (!calls.every(isRecall) || answered >= recall.rounds) return { response: withoutRecallCalls(response), report: last };
    const message = ((response as Fields).choices as Fields[])[0].message as Fields;
    added.push({ role: 'assistant', content: typeof message.content === 'string' ? message.content : null, tool_calls: message.tool_calls });
    for (const call of calls) {
      const answer = await recall.answer(round.chatId, call.arguments);
      added.push({ role: 'tool', tool_call_id: call.id, content: answer.text });
    }
    const view = await round.compressor.compress(round.chatId, [...round.history, ...added], round.extras);
    last = view.report;
    response = await round.post({ ...round.body, messages: view.messages, ...(view.tools ? { tools: view.tools } : {}) });
  }
}
