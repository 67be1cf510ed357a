import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { tool, type StructuredTool } from 'langchain';
import { z } from 'zod';
import type { OpenAIChatMessage } from '../../src/formats/openai-chat/types.js';

/**
 * A recorded OpenAI Chat conversation (bench/fixtures/conversation.ts) replayed through a real
 * LangChain agent: the system message becomes the agent's `systemPrompt`, each user message one
 * `agent.invoke` turn, each assistant message one model answer (its tool calls included), and
 * each tool result what the agent's tool returns for that call id. The agent builds the history
 * itself (its own AI and tool messages), as it would in production.
 */
export interface ReplayScript {
  readonly systemPrompt: string;
  /** The user messages, in order, as LangChain messages with ids (one agent turn each). */
  readonly turns: HumanMessage[];
  /** The model's answer on each call: the next recorded assistant message. */
  respond(messages: BaseMessage[], call: number): AIMessage;
  /** One tool per tool name of the conversation; each returns the recorded result of the call it gets. */
  readonly tools: StructuredTool[];
  /** Assistant messages answered so far. */
  answered(): number;
}

function text(content: OpenAIChatMessage['content']): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (typeof p.text === 'string' ? p.text : '')).join('');
}

/** Builds the replay of `conversation` (which starts with its system message). */
export function replayScript(conversation: readonly OpenAIChatMessage[]): ReplayScript {
  const [system, ...rest] = conversation;
  if (system?.role !== 'system') throw new Error('the conversation must start with its system message');
  const turns: HumanMessage[] = [];
  const answers: AIMessage[] = [];
  const results: Array<Map<string, string>> = [];
  const names = new Set<string>();
  rest.forEach((m, i) => {
    if (m.role === 'user') turns.push(new HumanMessage({ content: text(m.content), id: `user-${i}` }));
    if (m.role !== 'assistant') return;
    const calls = m.tool_calls ?? [];
    const byId = new Map<string, string>();
    for (let j = i + 1; j < rest.length && rest[j].role === 'tool'; j++) byId.set(String(rest[j].tool_call_id), text(rest[j].content));
    results.push(byId);
    for (const c of calls) names.add(c.function.name);
    answers.push(new AIMessage({
      content: text(m.content),
      tool_calls: calls.map((c) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments) as Record<string, unknown>, type: 'tool_call' as const })),
    }));
  });
  let next = 0;
  let current = new Map<string, string>();
  const tools = [...names].map((name) => tool(
    async (_input: Record<string, unknown>, config?: { toolCall?: { id?: string } }) => current.get(config?.toolCall?.id ?? '') ?? `no recorded result for ${config?.toolCall?.id}`,
    { name, description: `Recorded tool ${name}.`, schema: z.object({}).passthrough() },
  ) as unknown as StructuredTool);
  return {
    systemPrompt: text(system.content),
    turns,
    tools,
    respond() {
      if (next >= answers.length) return new AIMessage('(the recorded conversation ends here)');
      current = results[next];
      return answers[next++];
    },
    answered: () => next,
  };
}
