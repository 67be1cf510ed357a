/**
 * A lens reads one provider's message shape for the core. The core never converts a message it
 * keeps: everything it needs (role, calls opened, results answered, text) comes through a lens,
 * and what goes out is the caller's own objects.
 */
import type { MessageRule } from './validate/rules.js';

/** The names of the wire formats a lens exists (or is planned) for. */
export type FormatName =
  | 'openai'
  | 'openai-responses'
  | 'anthropic'
  | 'gemini'
  | 'ai-sdk'
  | 'qwen-agent'
  | 'hermes';

/**
 * What a message is to the grouping pass.
 * - `system`: instructions (system / developer); pinned, never summarized away.
 * - `user`: a human turn (may also carry results, as Anthropic's user messages do).
 * - `assistant`: a model turn (may open calls).
 * - `result`: a message that only carries tool results (OpenAI `tool`, legacy `function`).
 * - `other`: anything the lens does not recognise; a group of one.
 */
export type MessageKind = 'system' | 'user' | 'assistant' | 'result' | 'other';

/** One tool call opened by a message. `id` is absent where the format pairs by position. */
export interface CallRef {
  readonly id?: string;
  readonly name: string;
  /** Arguments as the provider bills them: the JSON text (or its canonical serialization). */
  readonly arguments: string;
  /**
   * The id of another call of the same turn whose answer hands this call to the runtime (an AI SDK
   * tool approval): when that call is answered by the history's last message, this call is left
   * for the runtime to run, not unanswered, and repair adds nothing for it.
   */
  readonly settledBy?: string;
  /** True for a call that may go unanswered (an approval request whose tool has already run): never repaired, never reported. */
  readonly optional?: boolean;
}

/** One tool result carried by a message. `id` is absent where the format pairs by position. */
export interface ResultRef {
  readonly id?: string;
  readonly name?: string;
  /**
   * A malformed id as written (a number where the format wants a string), as text. Pairing never
   * reads it; repair may use it to re-attach the result to the call with that id.
   */
  readonly idHint?: string;
  /** The result's text as sent to the model. */
  readonly content: string;
  /**
   * True when the result lacks the key its format pairs on (OpenAI: a `tool` message without a
   * string `tool_call_id`, a `function` message without a `name`): as sent it answers no call, so
   * pairing never matches it; repair re-keys it to the one open call of its run, or removes it.
   */
  readonly keyless?: boolean;
  /**
   * The arguments of the call this result answers, as the pairing scan matched them
   * (`withCallNames`); absent from a lens's own reading and where no call matched.
   */
  readonly callArguments?: string;
}

/** A call the provider runs itself and answers inside the same message (Anthropic server tools, Responses `web_search_call`). */
export interface InPlaceCall {
  readonly call: CallRef;
  /** The result as the model sees it (empty when the provider keeps it server-side). */
  readonly result: ResultRef;
}

/**
 * A format-neutral reading of a message, for summarizers and token counters. Built by a lens;
 * the message itself is never changed.
 */
export interface TranscriptEntry {
  readonly role: 'system' | 'user' | 'assistant' | 'tool' | 'other';
  /** Plain text content (text parts joined), without the calls and results. */
  readonly text: string;
  readonly calls: readonly CallRef[];
  readonly results: readonly ResultRef[];
}

/**
 * Everything the core needs from one message, read in one pass. A lens's `read` is pure; callers
 * that read a message more than once wrap the lens with `memoizedLens` so each object is read once.
 */
export interface Reading extends TranscriptEntry {
  /** What the message is to the grouping pass. */
  readonly kind: MessageKind;
  /** True when the message carries text a human typed (not only tool results). */
  readonly hasUserText: boolean;
  /** The message's own id where the format has one (Responses items, AI SDK ids). */
  readonly ownId?: string;
  /** Calls answered inside this message; they take no part in pairing (nothing can split them). */
  readonly inPlace: readonly InPlaceCall[];
}

/**
 * Where a format keeps its message list and its instructions in a request body: the CLI and the
 * request-level helpers read and write bodies through it, so the output keeps the caller's shape.
 */
export interface RequestShape {
  /** The field holding the message list (`messages`, `contents`, `input`). */
  readonly messagesField: string;
  /** Top-level instructions outside the list (`system`, `systemInstruction`, `instructions`), if the format has them. */
  readonly systemField?: string;
}

/**
 * Reads messages of one wire format. Every method is pure and must not mutate its argument;
 * methods that change a message return a copy. Formats whose rules differ set the flags and
 * optional constraints below instead of re-implementing the grouping pass.
 */
export interface MessageLens<M = unknown> {
  readonly format: FormatName;
  /** Where the format's request body keeps messages and instructions. */
  readonly request: RequestShape;
  /** Everything the core needs from one message. Pure: the same message reads the same. */
  read(message: M): Reading;
  /**
   * Optional exact count of the text the provider bills for the message. For structured formats
   * it is a fast path and must agree exactly with the sum a counter makes from `read` (each text,
   * call name, arguments and result through `countText`, plus `callOverhead` per call and one per
   * named result, in-place calls included). For text formats whose calls live inside the text
   * (Hermes), it counts the text as sent, tags and framing included, which `read` leaves out.
   */
  billedTextTokens?(message: M, countText: (text: string) => number, callOverhead: number): number;
  /** Tokens the provider bills for the message's non-text parts (images), by its published rule; 0 when none. */
  mediaTokens?(message: M): number;
  /**
   * Atomic constraints of the format beyond call/result pairing (the cut points its own rules
   * forbid): `joins[i] = 1` means no cut may fall between messages[i-1] and messages[i]
   * (Responses: a `reasoning` item and the rest of its model turn; Anthropic with thinking: an assistant
   * step of an unfinished tool loop and the thinking-led turn that started it). Undefined or all
   * zero when the format has none. Read once per history, intersected with the pairing groups.
   */
  atomicJoins?(messages: readonly M[], read: (message: M) => Reading): Uint8Array | undefined;
  /**
   * True when consecutive assistant messages that each open calls form one parallel turn
   * (Qwen-Agent, Responses items). False where that is invalid (OpenAI Chat).
   */
  readonly splitParallelCalls: boolean;
  /**
   * True when the format gives several calls one id by design (Qwen-Agent's fixed `function_id`
   * "1"): results pair by position and name, and repair never makes ids unique within a turn.
   */
  readonly repeatsCallIds?: boolean;
  /**
   * True when a turn's results are read in call order, by position (Qwen-Agent renders them as
   * `<tool_response>` blocks, one per `function` message): repair puts a turn's result messages
   * in the order of its calls.
   */
  readonly resultsInCallOrder?: boolean;
  /**
   * True when reading a message is a few property loads (OpenAI Chat, Responses items, Qwen-Agent):
   * reading it again costs less than remembering the reading, so `memoizedLens` leaves the lens as
   * it is. Leave unset where a reading parses text or walks content parts.
   */
  readonly cheapRead?: boolean;
  /**
   * True when a message's string `content`, and a string `function.arguments` of its `tool_calls`,
   * is only ever read as text (counted, fingerprinted, summarized, sent): its value never decides
   * the message's kind, pairing, group or checks, only whether it is a string and whether it is
   * empty. A chat's remembered history then compares such text only where a plan read it (see
   * `TextUnread`). Leave unset where text carries structure (Hermes `<tool_call>` tags).
   */
  readonly stringContentIsText?: boolean;
  /**
   * True when a result that carries both an id and a name answers a call only if both match
   * (Gemini: `functionResponse.name` must equal its `functionCall.name`); repair then re-keys it.
   */
  readonly namesMustMatch?: boolean;
  /**
   * True when tool results travel in user turns on the wire and a provider refuses two user turns
   * in a row (Anthropic `tool_result` blocks: Bedrock; Hermes `<tool_response>` text: templates
   * that want roles to alternate): repair never moves a result message next to another user turn.
   * Gemini leaves it unset: a `functionResponse` content may be followed by a user content.
   */
  readonly resultsInUserTurn?: boolean;
  /**
   * True when a view must not go on with a model turn right after a cut (Gemini: a function call
   * turn must follow a user turn; Bedrock: the first message is a user message): when a cut
   * leaves a model turn first and no summary stands before it, the planner puts a short note of
   * what was left out, built with `summaryMessage(..., 'user')`, before it.
   */
  readonly leadsWithUser?: boolean;
  /**
   * Builds the message that carries a summary of dropped history, in this format. Formats with no
   * `system` role in the list (Anthropic, Gemini) build a user message whatever `role` asks.
   */
  summaryMessage(text: string, role: 'system' | 'user'): M;
  /**
   * An assistant message carrying `text`, for formats whose providers may demand that user and
   * assistant turns alternate (Bedrock): the planner puts it between two user turns a cut brought
   * together. Absent where no provider of the format asks for alternation.
   */
  bridgeMessage?(text: string): M;
  /**
   * Messages, in this format's shape, that answer `calls` (all of one turn) with `text`: the error
   * results repair adds for calls whose result is missing. They must pair with `calls` under this lens.
   */
  missingResults(calls: readonly CallRef[], text: string): M[];
  /**
   * A copy of `message` (the result message right after a call turn, or the user message that
   * follows it) with error results for `calls` added where the format wants them (Anthropic:
   * `tool_result` blocks first, in the one user message). Undefined when the format wants a
   * message of its own (`missingResults` is used then).
   */
  addResults?(message: M, calls: readonly CallRef[], text: string): M | undefined;
  /**
   * One message carrying every result of `messages` (result-only messages of one call turn's run,
   * in order), for formats whose provider wants a turn's results in one message (Gemini: "the
   * number of function response parts is equal to the number of function call parts"). Absent
   * where separate result messages are right (OpenAI Chat's one `tool` message per call).
   */
  mergeResults?(messages: readonly M[]): M;
  /**
   * Formats whose results travel in a user turn (`resultsInUserTurn`): `host` (a user message)
   * with the result blocks of `results` put first, after any it already leads with, before the
   * user's words. Undefined when `host` is not a user message or `results` holds anything but
   * results. Repair uses it for results a user message came between them and their call.
   */
  joinResults?(host: M, results: M): M | undefined;
  /**
   * Formats whose results must come first in their message (Anthropic): the message with its
   * result blocks moved before its other content, each kept in its order; undefined when they
   * already lead (or it holds none). Nothing is removed.
   */
  resultsFirst?(message: M): M | undefined;
  /**
   * A copy of `message` whose result at `slot` answers `call` in this format's shape (a `tool`
   * message with the call's id, for a result that had none, a malformed one, or the legacy
   * `function` role). Everything else in the message is kept.
   */
  rekeyResult(message: M, slot: number, call: CallRef): M;
  /**
   * A copy of `message` whose call at `slot` (among `read(message).calls`) has the id `id`, in
   * this format's shape. Used with `rekeyResult` to make ids unique across a request or fit a
   * provider's id pattern, consistently in a call and its results. Formats without call ids
   * (Hermes text) return the message unchanged.
   */
  rekeyCall(message: M, slot: number, id: string): M;
  /**
   * A copy of a result-carrying message whose result at `slot` has its content replaced by
   * `placeholder`, keeping ids and shape so the call/result pair stays valid.
   */
  collapseResult(message: M, slot: number, placeholder: string): M;
  /**
   * A copy of `message` without its result at `slot` (an orphan or duplicate), keeping the rest
   * (the user's text, other results); undefined when nothing would be left, so the message goes.
   */
  removeResult(message: M, slot: number): M | undefined;
  /**
   * The rules of the format's message shape that every provider of it enforces and pairing does
   * not see (OpenAI: content null only on a message making calls, calls only on assistant
   * messages; Anthropic: each block on its side). Repair applies each rule's fix, and refuses a
   * history with a fault that has none; the profiles check the same rules.
   */
  readonly shapeRules?: readonly MessageRule<M>[];
  /**
   * Why `value` is not a message of this format, as a field (relative to the message, e.g.
   * `.role`) and the rule it breaks; undefined when it is one. Used for auto-detection and for
   * input errors that name the field.
   */
  problem(value: unknown): { readonly field: string; readonly rule: string } | undefined;
}

/**
 * The lens with `read` memoized per message object (a WeakMap owned by the returned lens), so the
 * grouping pass, the structure scan, repair and counting read each message once however often they
 * ask. Messages are the caller's objects and are never changed, so a reading never goes stale
 * unless the caller mutates a message in place (a fresh memoized lens per request is then safe).
 * A lens whose reading is cheaper than a WeakMap entry (`cheapRead`) is returned as it is.
 */
export function memoizedLens<M>(lens: MessageLens<M>): MessageLens<M> {
  if ((lens as { readonly memoized?: boolean }).memoized || lens.cheapRead) return lens;
  const seen = new WeakMap<object, Reading>();
  const read = (m: M): Reading => {
    if (typeof m !== 'object' || m === null) return lens.read(m);
    let r = seen.get(m as object);
    if (r === undefined) {
      r = lens.read(m);
      seen.set(m as object, r);
    }
    return r;
  };
  return Object.assign(Object.create(lens) as MessageLens<M>, { read, memoized: true });
}
