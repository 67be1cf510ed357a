import { BaseChatModel, type BaseChatModelParams } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';

/** What the model answers on its `call`-th invocation (0-based), given the messages it received. */
export type Respond = (messages: BaseMessage[], call: number) => AIMessage;

/**
 * A real LangChain chat model (a `BaseChatModel` subclass) for tests: it answers what `respond`
 * says (tool calls, then text), records every message list it received, and accepts tools
 * (`bindTools` records them and returns the model, as `createAgent` needs). `fields.model` sets
 * the name an adapter may read, as provider models carry it (`gpt-4o`...).
 */
export class RecordingChatModel extends BaseChatModel {
  /** Every message list the model was invoked with, in order (the agent's system message first). */
  readonly received: BaseMessage[][] = [];
  /** The tools the agent bound, as given. */
  boundTools: unknown[] = [];
  /** The options of every binding, in order (the agent binds before each model call: `tool_choice` is here). */
  readonly bindOptions: Record<string, unknown>[] = [];
  /** The model's name, when set. */
  readonly model?: string;
  /** The reply limit, when set (as provider models carry `maxTokens`). */
  readonly maxTokens?: number;

  constructor(private readonly respond: Respond, fields: BaseChatModelParams & { model?: string; maxTokens?: number } = {}) {
    super(fields);
    this.model = fields.model;
    this.maxTokens = fields.maxTokens;
  }

  _llmType(): string {
    return 'recording';
  }

  // `createAgent` binds the agent's tools; the model keeps answering from `respond`.
  override bindTools(tools: unknown[], options?: Record<string, unknown>): this {
    this.boundTools = tools;
    this.bindOptions.push({ ...options });
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.received.push(messages);
    const message = this.respond(messages, this.received.length - 1);
    return { generations: [{ text: typeof message.content === 'string' ? message.content : '', message }] };
  }
}

/** An AI message that calls tools (`[name, args, id]` each). */
export function callsTools(calls: ReadonlyArray<readonly [string, Record<string, unknown>, string]>, text = ''): AIMessage {
  return new AIMessage({ content: text, tool_calls: calls.map(([name, args, id]) => ({ name, args, id, type: 'tool_call' as const })) });
}
